package sql

import (
	"fmt"
	"strings"
)

// fill returns a jsonb expression of v with the defaults of the subschema s filled
// in, as the Go runtime fills them before it validates (FillDefaults): every absent
// property whose schema has a default, in nested objects, additional properties and
// array items too, but not inside a value that was itself filled in. It returns ""
// when s declares no default at all. Like Go's, it follows a $ref and then looks at
// the target only.
func (fn *function) fill(s any, v string, depth int, in string) string {
	m, ok := fn.deref(s).(map[string]any)
	if !ok {
		return ""
	}
	t := fmt.Sprintf("t%d", depth)
	// The CASE's WHENs go at in1, a SELECT at in2, the WHENs of its CASE at in3.
	in1, in2, in3 := in+"    ", in+"        ", in+"            "
	props, _ := m["properties"].(map[string]any)
	names := sortedKeys(props)
	var defaults, cases []string
	for _, name := range names {
		if d, ok := fn.defaultOf(props[name]); ok {
			defaults = append(defaults, lit(name), jsonLit(d))
		}
		if inner := fn.fill(props[name], t+".value", depth+1, in3); inner != "" {
			cases = append(cases, fmt.Sprintf("\n%sWHEN %s THEN %s", in3, lit(name), inner))
		}
	}
	additional := ""
	if a, ok := m["additionalProperties"].(map[string]any); ok {
		additional = fn.fill(a, t+".value", depth+1, in3)
	}
	object := ""
	if len(cases) > 0 || additional != "" {
		other := t + ".value"
		if additional != "" {
			// Declared properties are not additional ones.
			other = fmt.Sprintf("CASE WHEN %s.key = ANY (%s) THEN %s.value ELSE %s END", t, textArray(names), t, additional)
		}
		if len(cases) == 0 {
			object = fmt.Sprintf("(\n%sSELECT coalesce(jsonb_object_agg(%s.key, %s), '{}'::jsonb)\n%sFROM jsonb_each(%s) %s)", in2, t, other, in2, v, t)
		} else {
			object = fmt.Sprintf("(\n%sSELECT coalesce(jsonb_object_agg(%s.key, CASE %s.key%s\n%sELSE %s END), '{}'::jsonb)\n%sFROM jsonb_each(%s) %s)",
				in2, t, t, strings.Join(cases, ""), in3, other, in2, v, t)
		}
	}
	if len(defaults) > 0 {
		// || keeps the right operand's members: defaults fill only absent properties.
		rest := object
		if rest == "" {
			rest = v
		}
		object = fmt.Sprintf("jsonb_build_object(%s) || %s", strings.Join(defaults, ", "), rest)
	}
	array := ""
	if items, ok := m["items"].(map[string]any); ok {
		if inner := fn.fill(items, t+".e", depth+1, in2); inner != "" {
			array = fmt.Sprintf("(\n%sSELECT coalesce(jsonb_agg(%s ORDER BY %s.i), '[]'::jsonb)\n%sFROM jsonb_array_elements(%s) WITH ORDINALITY %s(e, i))", in2, inner, t, in2, v, t)
		}
	}
	if object == "" && array == "" {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "CASE jsonb_typeof(%s)", v)
	if object != "" {
		fmt.Fprintf(&b, "\n%sWHEN 'object' THEN %s", in1, object)
	}
	if array != "" {
		fmt.Fprintf(&b, "\n%sWHEN 'array' THEN %s", in1, array)
	}
	fmt.Fprintf(&b, "\n%sELSE %s END", in1, v)
	return b.String()
}

// deref follows $refs to the schema they end at, ignoring the keywords beside them.
func (fn *function) deref(s any) any {
	for range 64 { // the generator refuses cycles; this only bounds the loop
		m, ok := s.(map[string]any)
		if !ok {
			return s
		}
		r, ok := m["$ref"].(string)
		if !ok {
			return s
		}
		s, _ = fn.resolve(r)
	}
	return s
}

// defaultOf is a property's default, looked up through references.
func (fn *function) defaultOf(s any) (any, bool) {
	for range 64 {
		m, ok := s.(map[string]any)
		if !ok {
			return nil, false
		}
		if d, ok := m["default"]; ok {
			return d, true
		}
		r, ok := m["$ref"].(string)
		if !ok {
			return nil, false
		}
		s, _ = fn.resolve(r)
	}
	return nil, false
}
