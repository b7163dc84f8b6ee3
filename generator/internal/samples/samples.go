// Package samples makes sample documents from a JSON Schema, to exercise code that
// reads documents of it: jobc check runs each older payload version's samples through
// the upcast chain and validates the results as the newest version.
//
// The samples aim at the places where upcasts go wrong: a base document with every
// required property, then for each property every value of interest (bounds of
// numbers, strings and arrays, each enum value, each format's example, nested
// objects and arrays) and each optional property absent and present. Candidates are
// made by a simple walk and kept only when the schema accepts them, so the samples
// are valid whatever the walk gets wrong; a schema it cannot sample yields fewer.
package samples

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp/syntax"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/jobc-dev/jobc/internal/dialect"
)

// maxPerSchema bounds the values made for one (sub)schema, and so the samples of a
// document: a property's variants are combined with the base document one at a time.
const maxPerSchema = 64

// Documents returns sample documents valid under schema (a decoded JSON value), in a
// deterministic order and without duplicates.
func Documents(schema any) ([]any, error) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	const url = "jobc:///sample.json"
	if err := c.AddResource(url, schema); err != nil {
		return nil, fmt.Errorf("samples: %w", err)
	}
	compiled, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("samples: %w", err)
	}
	w := &walker{root: schema}
	seen := map[string]bool{}
	var out []any
	for _, v := range w.values(schema, 0) {
		b, err := json.Marshal(v)
		if err != nil || seen[string(b)] {
			continue
		}
		seen[string(b)] = true
		// Validate the encoded form, as a worker sees it.
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
		if err != nil || compiled.Validate(doc) != nil {
			continue
		}
		out = append(out, v)
	}
	return out, nil
}

type walker struct{ root any }

// maxDepth stops the walk of recursive schemas.
const maxDepth = 8

// values returns candidate values of s: the first is the "typical" one, used for the
// property in documents that vary another property.
func (w *walker) values(s any, depth int) []any {
	m, ok := s.(map[string]any)
	if !ok || depth > maxDepth {
		if b, ok := s.(bool); ok && !b {
			return nil
		}
		return []any{"x"}
	}
	if ref, ok := m["$ref"].(string); ok {
		if t, ok := w.resolve(ref); ok {
			return w.values(t, depth+1)
		}
	}
	if c, ok := m["const"]; ok {
		return []any{c}
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		return append([]any(nil), e...)
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if bs, ok := m[k].([]any); ok && len(bs) > 0 {
			var out []any
			for _, b := range bs {
				out = append(out, w.values(b, depth+1)...)
			}
			return limit(out)
		}
	}
	if all, ok := m["allOf"].([]any); ok && len(all) > 0 {
		// The first branch's values; validation drops those the others reject.
		return w.values(all[0], depth+1)
	}
	var out []any
	for _, t := range types(m) {
		switch t {
		case "object":
			out = append(out, w.objects(m, depth)...)
		case "array":
			out = append(out, w.arrays(m, depth)...)
		case "string":
			out = append(out, strs(m)...)
		case "integer":
			out = append(out, numbers(m, true)...)
		case "number":
			out = append(out, numbers(m, false)...)
		case "boolean":
			out = append(out, true, false)
		case "null":
			out = append(out, nil)
		}
	}
	return limit(out)
}

func limit(vs []any) []any {
	if len(vs) > maxPerSchema {
		return vs[:maxPerSchema]
	}
	return vs
}

func (w *walker) resolve(ref string) (any, bool) {
	if !strings.HasPrefix(ref, "#") {
		return nil, false
	}
	cur := w.root
	for _, tok := range strings.Split(strings.TrimPrefix(ref, "#"), "/")[1:] {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[tok]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// types lists the types a schema allows; a schema without "type" is guessed from its
// keywords.
func types(m map[string]any) []string {
	switch t := m["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	switch {
	case m["properties"] != nil || m["required"] != nil || m["additionalProperties"] != nil:
		return []string{"object"}
	case m["items"] != nil:
		return []string{"array"}
	case m["minimum"] != nil || m["maximum"] != nil:
		return []string{"number"}
	case m["minLength"] != nil || m["maxLength"] != nil || m["format"] != nil || m["pattern"] != nil:
		return []string{"string"}
	}
	return []string{"string", "integer", "boolean", "null"}
}

// objects: the base object (required properties at their typical value), then for
// each property in name order every value of it in the base, then every optional
// property present (in the base, absent) and all of them present.
func (w *walker) objects(m map[string]any, depth int) []any {
	props, _ := m["properties"].(map[string]any)
	required := map[string]bool{}
	if r, ok := m["required"].([]any); ok {
		for _, x := range r {
			if s, ok := x.(string); ok {
				required[s] = true
			}
		}
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	vals := map[string][]any{}
	for _, n := range names {
		vals[n] = w.values(props[n], depth+1)
	}
	base := map[string]any{}
	for _, n := range names {
		if required[n] && len(vals[n]) > 0 {
			base[n] = vals[n][0]
		}
	}
	out := []any{base}
	full := copyMap(base)
	for _, n := range names {
		if len(vals[n]) > 0 {
			full[n] = vals[n][0]
		}
		for _, v := range vals[n] {
			d := copyMap(base)
			d[n] = v
			out = append(out, d)
		}
	}
	return append(out, full)
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// arrays: the fewest and the most items allowed (bounded), each with the item's
// values in turn.
func (w *walker) arrays(m map[string]any, depth int) []any {
	items := w.values(m["items"], depth+1)
	if _, ok := m["items"]; !ok {
		items = []any{"x"}
	}
	lo, hi := 0, 3
	if v, ok := num(m["minItems"]); ok {
		lo = int(v)
	}
	if v, ok := num(m["maxItems"]); ok {
		hi = int(v)
	}
	hi = min(max(hi, lo), lo+3)
	var out []any
	for _, n := range []int{lo, max(lo, 1), hi} {
		if len(items) == 0 && n > 0 {
			continue
		}
		if n == 0 {
			out = append(out, []any{})
			continue
		}
		// One array per item value, each value repeated; uniqueItems drops some.
		for _, it := range items {
			a := make([]any, n)
			for i := range a {
				a[i] = it
			}
			out = append(out, a)
		}
		if len(items) >= n {
			out = append(out, append([]any(nil), items[:n]...))
		}
	}
	return out
}

func num(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

// numbers: the bounds and their neighbours inside, and a value in the middle.
func numbers(m map[string]any, integer bool) []any {
	var cands []float64
	lo, hasLo := num(m["minimum"])
	hi, hasHi := num(m["maximum"])
	step := 1.0
	if !integer {
		step = 0.5
	}
	if x, ok := num(m["exclusiveMinimum"]); ok {
		lo, hasLo = x+step, true
	}
	if x, ok := num(m["exclusiveMaximum"]); ok {
		hi, hasHi = x-step, true
	}
	switch {
	case hasLo && hasHi:
		cands = append(cands, lo, lo+step, math.Floor((lo+hi)/2), hi-step, hi)
	case hasLo:
		cands = append(cands, lo, lo+step, lo+100)
	case hasHi:
		cands = append(cands, hi, hi-step, hi-100)
	default:
		cands = append(cands, 0, 1, -1, 1e6)
		if !integer {
			cands = append(cands, 0.5)
		}
	}
	if mo, ok := num(m["multipleOf"]); ok && mo > 0 {
		for i, c := range cands {
			cands[i] = math.Ceil(c/mo) * mo
		}
	}
	out := make([]any, 0, len(cands))
	for _, c := range cands {
		if integer {
			c = math.Round(c)
		}
		out = append(out, c)
	}
	return out
}

// strs: format examples, a string matching the pattern, or strings of the shortest
// and longest length allowed.
func strs(m map[string]any) []any {
	if p, ok := m["pattern"].(string); ok {
		if re, err := syntax.Parse(p, syntax.Perl); err == nil {
			var short, long strings.Builder
			if matching(&short, re.Simplify(), false) && matching(&long, re.Simplify(), true) {
				return []any{short.String(), long.String()}
			}
		}
	}
	if f, ok := m["format"].(string); ok {
		if row, ok := dialect.LookupFormat(f); ok && len(row.Examples) > 0 {
			out := make([]any, len(row.Examples))
			for i, e := range row.Examples {
				out[i] = e
			}
			return out
		}
	}
	lo, hi := 0, 8
	if v, ok := num(m["minLength"]); ok {
		lo = int(v)
	}
	if v, ok := num(m["maxLength"]); ok {
		hi = int(v)
	}
	hi = max(lo, min(hi, lo+256))
	var out []any
	for _, n := range []int{max(lo, 1), lo, hi} {
		out = append(out, strings.Repeat("a", n))
	}
	return out
}

// matching writes a string that re matches, with each repetition at its fewest (or,
// with long, a few more) occurrences; false when it cannot tell.
func matching(b *strings.Builder, re *syntax.Regexp, long bool) bool {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
		return true
	case syntax.OpCharClass:
		if len(re.Rune) < 2 {
			return false
		}
		b.WriteRune(re.Rune[0])
		return true
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte('a')
		return true
	case syntax.OpCapture:
		return matching(b, re.Sub[0], long)
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !matching(b, sub, long) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		return matching(b, re.Sub[0], long)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, 3
		switch re.Op {
		case syntax.OpPlus:
			lo = 1
		case syntax.OpQuest:
			hi = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
			if hi < 0 {
				hi = lo + 3
			}
		}
		n := lo
		if long {
			n = min(hi, lo+8)
		}
		for range n {
			if !matching(b, re.Sub[0], long) {
				return false
			}
		}
		return true
	}
	return false
}
