package gotype

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/jobc-dev/jobc/generator/spec"
)

// enum declares a named string or int64 type with one constant per value. null among
// the values makes the type nullable.
func (c *conv) enum(s snode, hint string) (Type, bool) {
	en := s.child("enum")
	if en.n.Kind != yaml.SequenceNode || len(en.n.Content) == 0 {
		c.errorf(en, "enum must be a non-empty list")
		return nil, false
	}
	var base string
	var values []EnumValue
	var valueNodes []snode
	hasNull := false
	for i, v := range en.n.Content {
		v = deref(v)
		at := snode{n: v, path: joinPath(en.path, strconv.Itoa(i)), file: s.file}
		var b string
		var val any
		switch {
		case v.Kind == yaml.ScalarNode && v.Tag == "!!null":
			hasNull = true
			continue
		case v.Kind == yaml.ScalarNode && v.Tag == "!!str":
			b, val = "string", v.Value
		case v.Kind == yaml.ScalarNode && v.Tag == "!!int":
			n, ok := spec.JSONValue(v).(int64)
			if !ok {
				c.errorf(at, "enum value %s does not fit int64", v.Value)
				return nil, false
			}
			b, val = "int64", n
		default:
			c.errorf(at, "enum values must all be strings or all be integers, got %s", describe(v))
			return nil, false
		}
		if base != "" && b != base {
			c.errorf(at, "enum mixes strings and integers")
			return nil, false
		}
		base = b
		ev := EnumValue{Name: enumSuffix(val), Value: val}
		if n, isInt := val.(int64); isInt {
			// An int renders as an untyped constant (1), which the enum type accepts;
			// an int64 would render as int64(1), which it does not.
			ev.Value = int(n)
		}
		values = append(values, ev)
		valueNodes = append(valueNodes, at)
	}
	if base == "" {
		c.errorf(en, "enum must list at least one string or integer")
		return nil, false
	}
	types, ok := c.types(s)
	if !ok {
		return nil, false
	}
	if len(types) > 0 {
		want := map[string]string{"string": "string", "int64": "integer"}[base]
		nonNull, typeNull := []string{}, false
		for _, t := range types {
			if t == "null" {
				typeNull = true
			} else {
				nonNull = append(nonNull, t)
			}
		}
		switch {
		case len(nonNull) != 1 || nonNull[0] != want:
			c.errorf(s.child("type"), "type %s does not match the enum's %s values", strings.Join(types, ", "), want)
			return nil, false
		case hasNull && !typeNull:
			c.errorf(s.child("type"), "the enum lists null, so type must allow it: [%s, \"null\"]", want)
			return nil, false
		}
	}
	name := c.claim(hint, s.path)
	seen := map[string]string{}
	for i := range values {
		values[i].Name = name + values[i].Name
		v := values[i]
		text := spec.JSONValue(valueNodes[i].n)
		if other, dup := seen[v.Name]; dup {
			c.errorf(valueNodes[i], "enum values %s and %s both become Go constant %s", other, jsonText(text), v.Name)
			return nil, false
		}
		seen[v.Name] = jsonText(text)
		if owner, taken := c.taken[v.Name]; taken {
			c.errorf(valueNodes[i], "enum value %s becomes Go constant %s, which is already the name of the type of %s", jsonText(text), v.Name, owner)
			return nil, false
		}
		c.taken[v.Name] = s.path
	}
	c.decls = append(c.decls, &Decl{Name: name, Doc: docOf(s), Of: s.of, Enum: &Enum{Base: Builtin{base}, Values: values}})
	return Ref{Name: name}, hasNull
}

// enumSuffix makes the part of a constant's name that comes from its value:
// "in_progress" → InProgress, "1080p" → 1080p, 3 → 3, -1 → Minus1, "" → Empty.
func enumSuffix(v any) string {
	switch v := v.(type) {
	case int64:
		if v < 0 {
			return "Minus" + strconv.FormatUint(uint64(-(v+1))+1, 10)
		}
		return strconv.FormatInt(v, 10)
	case string:
		if len(v) <= 3 && strings.ToUpper(v) == v && nameWords(v) != "" && !strings.ContainsAny(v, "_-. ") {
			return v // a code such as EUR or US stays as it is
		}
		if s := nameWords(v); s != "" {
			return s
		}
		if v == "" {
			return "Empty"
		}
		return "Value" + strconv.Itoa(len(v))
	}
	return ""
}

// constType is the Go type of a schema that has const and no type.
func (c *conv) constType(cn snode) Type {
	switch cn.n.Tag {
	case "!!str":
		return Builtin{"string"}
	case "!!int":
		return Builtin{"int64"}
	case "!!float":
		return Builtin{"float64"}
	case "!!bool":
		return Builtin{"bool"}
	}
	c.errorf(cn, "const must be a string, number or boolean to have a Go type, got %s; or give the schema a type", describe(cn.n))
	return nil
}

// checkConst reports a const whose value is not of the schema's type.
func (c *conv) checkConst(s snode, typ string) {
	cn := s.child("const")
	v := spec.JSONValue(cn.n)
	ok := false
	switch typ {
	case "string":
		_, ok = v.(string)
	case "integer":
		_, ok = v.(int64)
	case "number":
		switch v.(type) {
		case int64, float64:
			ok = true
		}
	case "boolean":
		_, ok = v.(bool)
	case "object":
		_, ok = v.(map[string]any)
	case "array":
		_, ok = v.([]any)
	}
	if !ok {
		c.errorf(cn, "const %s is not of type %s", jsonText(v), typ)
	}
}

// checkDefault reports a default that the schema it belongs to does not accept.
func (c *conv) checkDefault(s snode) {
	d := s.child("default")
	if d.n == nil {
		return
	}
	v := spec.JSONValue(d.n)
	if msg := c.schema.CheckValue(s.n, v); msg != "" {
		c.errorf(d, "default %s does not match the schema: %s", jsonText(v), msg)
	}
}

func jsonText(v any) string {
	b, err := spec.CanonicalJSON(v)
	if err != nil {
		return describe(nil)
	}
	return string(b)
}
