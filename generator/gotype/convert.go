package gotype

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/jobc-dev/jobc/generator/spec"
)

// RuntimeImport is the package generated code imports; its Date type represents
// format: date.
const RuntimeImport = "github.com/jobc-dev/jobc/runtime"

// annotations never change the Go type or validation.
var annotations = map[string]bool{
	"title": true, "description": true, "examples": true, "$comment": true, "deprecated": true,
	"readOnly": true, "writeOnly": true, "$schema": true, "$id": true, "default": true,
}

// supported are the keywords jobc turns into Go types or leaves to validation.
var supported = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "enum": true, "const": true, "format": true, "$ref": true, "$defs": true,
	"definitions": true, "minLength": true, "maxLength": true, "pattern": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
	"multipleOf": true, "minItems": true, "maxItems": true, "uniqueItems": true,
	"minProperties": true, "maxProperties": true,
}

// unsupported are real JSON Schema keywords that have no Go type jobc can generate.
var unsupported = map[string]bool{
	"oneOf": true, "anyOf": true, "allOf": true, "not": true, "if": true, "then": true,
	"else": true, "patternProperties": true, "dependentRequired": true, "dependentSchemas": true,
	"dependencies": true, "prefixItems": true, "contains": true, "minContains": true,
	"maxContains": true, "propertyNames": true, "unevaluatedProperties": true,
	"unevaluatedItems": true, "$anchor": true, "$dynamicRef": true, "$dynamicAnchor": true,
	"$recursiveRef": true, "$recursiveAnchor": true, "$vocabulary": true, "additionalItems": true,
	"contentEncoding": true, "contentMediaType": true, "contentSchema": true,
}

// conv converts the schema of one payload version.
type conv struct {
	formats  map[string]spec.GoType
	name     string // the payload struct's name: the prefix of every type it declares
	rootPath string // the spec path of the payload schema
	file     string
	root     *yaml.Node
	diags    spec.Diagnostics
	decls    []*Decl
	taken    map[string]string // Go name → JSON path that claimed it
	defs     map[string]*defState
}

type defState struct {
	typ      Type
	resolved bool
	busy     bool
}

// Convert turns one payload version's schema into Go declarations; name is the payload
// struct's name (e.g. SendEmailV1). formats maps JSON-Schema formats to Go types.
func Convert(name string, s *spec.Schema, formats map[string]spec.GoType) (*Payload, spec.Diagnostics) {
	c := &conv{formats: formats, name: name, rootPath: s.Path, file: s.File, root: deref(s.Node), taken: map[string]string{}, defs: map[string]*defState{}}
	root := snode{n: c.root, path: s.Path}
	if root.n.Kind != yaml.MappingNode || scalarValue(root.get("type")) != "object" {
		c.errorf(root, "a payload schema must be an object schema (type: object)")
		return nil, c.diags
	}
	c.keywords(root, true)
	c.taken[name] = root.path
	st := c.structOf(root, name)
	if st == nil {
		return nil, c.diags
	}
	decl := &Decl{Name: name, Doc: scalarValue(root.get("description")), Struct: st}
	c.decls = append([]*Decl{decl}, c.decls...)
	if len(c.diags) > 0 {
		return nil, c.diags
	}
	return &Payload{Root: name, Decls: c.decls}, nil
}

// snode is a schema node and its dotted path in the spec.
type snode struct {
	n    *yaml.Node
	path string
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func (s snode) get(key string) *yaml.Node {
	if s.n == nil || s.n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(s.n.Content); i += 2 {
		if s.n.Content[i].Value == key {
			return deref(s.n.Content[i+1])
		}
	}
	return nil
}

func (s snode) child(key string) snode {
	return snode{n: s.get(key), path: s.path + "." + key}
}

func (s snode) keyNode(key string) *yaml.Node {
	for i := 0; i+1 < len(s.n.Content); i += 2 {
		if s.n.Content[i].Value == key {
			return s.n.Content[i]
		}
	}
	return s.n
}

func scalarValue(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

func (c *conv) errorf(at snode, format string, args ...any) {
	n := at.n
	if n == nil {
		n = c.root
	}
	c.diags = append(c.diags, spec.Diagnostic{
		Pos:     spec.Pos{File: c.file, Line: n.Line, Col: n.Column},
		Path:    at.path,
		Message: fmt.Sprintf(format, args...),
	})
}

// keywords reports every keyword of a subschema that jobc does not support.
func (c *conv) keywords(s snode, root bool) {
	keys := make([]string, 0, len(supported))
	for k := range supported {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i := 0; i+1 < len(s.n.Content); i += 2 {
		k := s.n.Content[i].Value
		at := snode{n: s.n.Content[i], path: s.path + "." + k}
		switch {
		case supported[k] || annotations[k]:
			if (k == "$schema" || k == "$id") && !root {
				c.errorf(at, "keyword %q is only allowed at the top of a payload schema", k)
			}
		case unsupported[k]:
			c.errorf(at, "unsupported JSON Schema keyword %q: jobc generates Go types from a subset of JSON Schema (see the README's schema reference)", k)
		default:
			if sg := spec.Suggest(k, keys); sg != "" {
				c.errorf(at, "unknown JSON Schema keyword %q; did you mean %q?", k, sg)
			} else {
				c.errorf(at, "unknown JSON Schema keyword %q", k)
			}
		}
	}
}

// claim reserves a Go type name, making it unique with a numeric suffix if needed.
func (c *conv) claim(name, path string) string {
	base, n := name, 2
	for {
		if _, taken := c.taken[name]; !taken {
			c.taken[name] = path
			return name
		}
		name = base + strconv.Itoa(n)
		n++
	}
}

// typeOf converts a subschema to a Go type. hint names a type it may need to declare.
// nullable reports a type: [T, "null"].
func (c *conv) typeOf(s snode, hint string) (t Type, nullable bool) {
	if s.n == nil {
		return Builtin{"any"}, false
	}
	if s.n.Kind == yaml.ScalarNode && s.n.Tag == "!!bool" {
		if s.n.Value == "true" {
			return Builtin{"any"}, false
		}
		c.errorf(s, "the schema false accepts nothing; remove the property instead")
		return nil, false
	}
	if s.n.Kind != yaml.MappingNode {
		c.errorf(s, "want a schema (a mapping), got %q", s.n.Value)
		return nil, false
	}
	c.keywords(s, false)
	if ref := s.get("$ref"); ref != nil {
		for i := 0; i+1 < len(s.n.Content); i += 2 {
			if k := s.n.Content[i].Value; k != "$ref" && !annotations[k] {
				c.errorf(snode{n: s.n.Content[i], path: s.path + "." + k}, "keyword %q next to $ref is not supported: move it into the referenced schema", k)
			}
		}
		return c.ref(s.child("$ref")), false
	}
	if e := s.get("enum"); e != nil {
		return c.enum(s, hint), false
	}
	types, ok := c.types(s)
	if !ok {
		return nil, false
	}
	if len(types) == 0 {
		if cn := s.get("const"); cn != nil {
			return constType(cn), false
		}
		c.errorf(s, "missing type: say which JSON type this is (type: string, integer, number, boolean, object or array)")
		return nil, false
	}
	if len(types) == 2 && (types[0] == "null" || types[1] == "null") {
		other := types[0]
		if other == "null" {
			other = types[1]
		}
		t := c.single(s, other, hint)
		if t == nil {
			return nil, false
		}
		return t, true
	}
	if len(types) > 1 {
		c.errorf(s.child("type"), "union type %v is not supported: only [T, \"null\"] has a Go type", types)
		return nil, false
	}
	if types[0] == "null" {
		c.errorf(s.child("type"), "type null alone carries no data")
		return nil, false
	}
	return c.single(s, types[0], hint), false
}

func (c *conv) types(s snode) ([]string, bool) {
	tn := s.get("type")
	if tn == nil {
		return nil, true
	}
	valid := map[string]bool{"string": true, "integer": true, "number": true, "boolean": true, "object": true, "array": true, "null": true}
	var out []string
	check := func(n *yaml.Node) bool {
		if n.Kind != yaml.ScalarNode || !valid[n.Value] {
			c.errorf(snode{n: n, path: s.path + ".type"}, "unknown type %q: want string, integer, number, boolean, object, array or null", n.Value)
			return false
		}
		out = append(out, n.Value)
		return true
	}
	switch tn.Kind {
	case yaml.ScalarNode:
		if !check(tn) {
			return nil, false
		}
	case yaml.SequenceNode:
		for _, n := range tn.Content {
			if !check(deref(n)) {
				return nil, false
			}
		}
	default:
		c.errorf(s.child("type"), "type must be a name or a list of names")
		return nil, false
	}
	return out, true
}

func (c *conv) single(s snode, typ, hint string) Type {
	if f := scalarValue(s.get("format")); f != "" {
		if o, ok := c.formats[f]; ok {
			return Ref{Import: o.Import, Name: o.Name}
		}
		if typ == "string" {
			switch f {
			case "date-time":
				return Ref{Import: "time", Name: "Time"}
			case "date":
				return Ref{Import: RuntimeImport, Name: "Date"}
			}
		}
	}
	switch typ {
	case "string":
		return Builtin{"string"}
	case "integer":
		return Builtin{"int64"}
	case "number":
		return Builtin{"float64"}
	case "boolean":
		return Builtin{"bool"}
	case "array":
		items := s.child("items")
		if items.n == nil {
			c.errorf(s, "an array needs items: the schema of its elements")
			return nil
		}
		elem, nullable := c.typeOf(items, singular(hint))
		if elem == nil {
			return nil
		}
		if nullable {
			elem = Pointer{elem}
		}
		return Slice{elem}
	case "object":
		return c.object(s, hint)
	}
	return nil
}

// object is a struct when the schema lists properties, a map when it only types
// additionalProperties, and map[string]any when it says nothing about its members.
func (c *conv) object(s snode, hint string) Type {
	props := s.get("properties")
	ap := s.child("additionalProperties")
	apSchema := ap.n != nil && ap.n.Kind == yaml.MappingNode
	if props == nil || len(props.Content) == 0 {
		if apSchema {
			elem, nullable := c.typeOf(ap, hint+"Value")
			if elem == nil {
				return nil
			}
			if nullable {
				elem = Pointer{elem}
			}
			return Map{elem}
		}
		if ap.n != nil && scalarValue(ap.n) == "false" {
			c.errorf(s, "an object without properties and with additionalProperties: false accepts only {}")
			return nil
		}
		if props == nil {
			return Map{Builtin{"any"}}
		}
	}
	if apSchema {
		c.errorf(ap, "additionalProperties with a schema next to properties is not supported: use a separate map property")
		return nil
	}
	name := c.claim(hint, s.path)
	st := c.structOf(s, name)
	if st == nil {
		return nil
	}
	c.decls = append(c.decls, &Decl{Name: name, Doc: scalarValue(s.get("description")), Of: c.where(s.path), Struct: st})
	return Ref{Name: name}
}

func (c *conv) structOf(s snode, name string) *Struct {
	required := map[string]bool{}
	if r := s.get("required"); r != nil {
		if r.Kind != yaml.SequenceNode {
			c.errorf(s.child("required"), "required must be a list of property names")
		} else {
			for _, n := range r.Content {
				required[deref(n).Value] = true
			}
		}
	}
	st := &Struct{}
	props := s.child("properties")
	if props.n != nil && props.n.Kind != yaml.MappingNode {
		c.errorf(props, "properties must be a mapping of property names to schemas")
		return nil
	}
	seen := map[string]string{}
	if props.n != nil {
		for i := 0; i+1 < len(props.n.Content); i += 2 {
			key := props.n.Content[i].Value
			ps := snode{n: deref(props.n.Content[i+1]), path: props.path + "." + key}
			goName := GoName(key)
			if goName == "" {
				c.errorf(snode{n: props.n.Content[i], path: ps.path}, "property %q has no letters or digits to make a Go name from", key)
				continue
			}
			if other, dup := seen[goName]; dup {
				c.errorf(snode{n: props.n.Content[i], path: ps.path}, "properties %q and %q both become Go field %s", other, key, goName)
				continue
			}
			seen[goName] = key
			t, nullable := c.typeOf(ps, name+goName)
			if t == nil {
				continue
			}
			f := Field{Name: goName, JSON: key, Required: required[key], Doc: scalarValue(ps.get("description"))}
			if d := ps.get("default"); d != nil {
				f.Default, f.HasDefault = spec.JSONValue(d), true
			}
			if cn := ps.get("const"); cn != nil {
				f.Const, f.HasConst = spec.JSONValue(cn), true
			}
			f.Type, f.OmitEmpty = fieldType(t, nullable, f.Required)
			st.Fields = append(st.Fields, f)
		}
	}
	for name := range required {
		if props.n == nil || (snode{n: props.n}).get(name) == nil {
			c.errorf(s.child("required"), "required property %q is not declared under properties", name)
		}
	}
	return st
}

// fieldType picks a field's Go type: a required value is T, an optional or nullable one
// is *T (slices and maps are nil when absent) so that absent, null and zero stay
// distinct.
func fieldType(t Type, nullable, required bool) (Type, bool) {
	switch t.(type) {
	case Slice, Map:
		return t, !required
	}
	if b, ok := t.(Builtin); ok && b.Name == "any" {
		return t, !required
	}
	if nullable || !required {
		return Pointer{t}, !required
	}
	return t, false
}

func (c *conv) enum(s snode, hint string) Type {
	en := s.child("enum")
	if en.n.Kind != yaml.SequenceNode || len(en.n.Content) == 0 {
		c.errorf(en, "enum must be a non-empty list")
		return nil
	}
	var base string
	var values []EnumValue
	names := map[string]bool{}
	for _, v := range en.n.Content {
		v = deref(v)
		var b string
		var val any
		switch {
		case v.Kind == yaml.ScalarNode && v.Tag == "!!str":
			b, val = "string", v.Value
		case v.Kind == yaml.ScalarNode && v.Tag == "!!int":
			i, err := strconv.ParseInt(v.Value, 0, 64)
			if err != nil {
				c.errorf(snode{n: v, path: en.path}, "enum value %q does not fit int64", v.Value)
				return nil
			}
			b, val = "int64", i
		default:
			c.errorf(snode{n: v, path: en.path}, "enum values must all be strings or all be integers, got %q", v.Value)
			return nil
		}
		if base != "" && b != base {
			c.errorf(snode{n: v, path: en.path}, "enum mixes strings and integers")
			return nil
		}
		base = b
		suffix := GoName(fmt.Sprint(val))
		if suffix == "" || b == "int64" {
			suffix = "V" + strings.ReplaceAll(fmt.Sprint(val), "-", "Minus")
		}
		if names[suffix] {
			c.errorf(snode{n: v, path: en.path}, "enum values %q collide as Go constant %s%s", fmt.Sprint(val), hint, suffix)
			return nil
		}
		names[suffix] = true
		values = append(values, EnumValue{Name: suffix, Value: val})
	}
	if ts, _ := c.types(s); len(ts) > 0 {
		want := map[string]string{"string": "string", "int64": "integer"}[base]
		if ts[0] != want || len(ts) > 1 {
			c.errorf(s.child("type"), "type %v does not match the enum's %s values", ts, want)
			return nil
		}
	}
	name := c.claim(hint, s.path)
	for i := range values {
		values[i].Name = name + values[i].Name
	}
	c.decls = append(c.decls, &Decl{Name: name, Doc: scalarValue(s.get("description")), Of: c.where(s.path), Enum: &Enum{Base: Builtin{base}, Values: values}})
	return Ref{Name: name}
}

func constType(n *yaml.Node) Type {
	switch n.Tag {
	case "!!str":
		return Builtin{"string"}
	case "!!int":
		return Builtin{"int64"}
	case "!!float":
		return Builtin{"float64"}
	case "!!bool":
		return Builtin{"bool"}
	}
	return Builtin{"any"}
}

// ref resolves a local reference "#/$defs/Name" (or "#/definitions/Name") to the named
// type of that definition, converting it on first use.
func (c *conv) ref(at snode) Type {
	ref := scalarValue(at.n)
	var section, name string
	switch {
	case strings.HasPrefix(ref, "#/$defs/"):
		section, name = "$defs", strings.TrimPrefix(ref, "#/$defs/")
	case strings.HasPrefix(ref, "#/definitions/"):
		section, name = "definitions", strings.TrimPrefix(ref, "#/definitions/")
	default:
		c.errorf(at, "unsupported $ref %q: refer to #/$defs/<name> or to a schema file", ref)
		return nil
	}
	st := c.defs[ref]
	if st == nil {
		st = &defState{}
		c.defs[ref] = st
	}
	if st.resolved {
		return st.typ
	}
	if st.busy {
		c.errorf(at, "$ref %q refers to itself before it is declared: recursive schemas are not supported", ref)
		return nil
	}
	root := snode{n: c.root}
	defsNode := root.child(section)
	def := snode{n: (snode{n: defsNode.n}).get(name), path: "$defs." + name}
	if defsNode.n == nil || def.n == nil {
		c.errorf(at, "$ref %q: no such definition", ref)
		return nil
	}
	st.busy = true
	t, nullable := c.typeOf(def, c.name+GoName(name))
	st.busy = false
	if nullable && t != nil {
		t = Pointer{t}
	}
	st.typ, st.resolved = t, true
	return t
}

// where turns a schema's spec path into the payload path it types: "address",
// "parcels[]", "metadata{}", "$defs.money".
func (c *conv) where(path string) string {
	if strings.HasPrefix(path, "$defs.") {
		return "$defs." + strings.TrimPrefix(path, "$defs.")
	}
	rest := strings.TrimPrefix(path, c.rootPath)
	rest = strings.ReplaceAll(rest, ".properties.", ".")
	rest = strings.ReplaceAll(rest, ".items", "[]")
	rest = strings.ReplaceAll(rest, ".additionalProperties", "{}")
	return strings.TrimPrefix(rest, ".")
}

// singular makes an element type name from a collection's: LineItems → LineItem.
func singular(s string) string {
	switch {
	case strings.HasSuffix(s, "ies") && len(s) > 3:
		return s[:len(s)-3] + "y"
	case strings.HasSuffix(s, "sses"), strings.HasSuffix(s, "xes"), strings.HasSuffix(s, "ches"), strings.HasSuffix(s, "shes"):
		return s[:len(s)-2]
	case strings.HasSuffix(s, "s") && !strings.HasSuffix(s, "ss") && len(s) > 1:
		return s[:len(s)-1]
	}
	return s + "Item"
}
