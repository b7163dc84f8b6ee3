package gotype

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/jobc-dev/jobc/generator/spec"
)

// RuntimeImport is the package generated code imports; its Date type represents
// format: date.
const RuntimeImport = "github.com/jobc-dev/jobc/runtime"

// conv converts the schema of one payload version.
type conv struct {
	formats map[string]spec.GoType
	name    string // the payload struct's name: the prefix of every type it declares
	schema  *spec.Schema
	root    snode
	diags   spec.Diagnostics
	decls   []*Decl
	taken   map[string]string // Go name → JSON path that claimed it
	defs    map[string]*defState
}

type defState struct {
	typ      Type
	nullable bool
	resolved bool
	busy     bool
}

// Convert turns one payload version's schema into Go declarations; name is the payload
// struct's name (e.g. SendEmailV1). formats maps JSON-Schema formats to Go types. The
// schema must be self-contained (spec.Load inlines schemas from other files), and its
// top must be an object schema, or a $ref to one.
func Convert(name string, s *spec.Schema, formats map[string]spec.GoType) (*Payload, spec.Diagnostics) {
	c := &conv{formats: formats, name: name, schema: s, taken: map[string]string{}, defs: map[string]*defState{}}
	c.root = snode{n: deref(s.Node), path: s.Path, file: s.File}
	root := c.root
	if root.n == nil || root.n.Kind != yaml.MappingNode {
		c.errorf(root, "a payload schema must be an object schema (type: object), got %s", describe(root.n))
		return nil, c.diags
	}
	c.keywords(root, true)
	target, st := root, (*defState)(nil)
	if root.get("$ref") != nil {
		// The whole payload is a definition, typically a schema file: {$ref: ./x.json}.
		for i := 0; i+1 < len(root.n.Content); i += 2 {
			if k := root.n.Content[i].Value; k != "$ref" && !annotation(k) && !rootOnly(k) {
				c.errorf(root.key(i), "keyword %q next to $ref is not supported: move it into the referenced schema", k)
			}
		}
		var ok bool
		if target, _, st, ok = c.lookup(root.child("$ref")); !ok {
			return nil, c.diags
		}
		st.busy = true
		c.keywords(target, false)
	}
	if ts, _ := c.types(target); len(ts) != 1 || ts[0] != "object" {
		c.errorf(target, "a payload schema must be an object schema (type: object)")
		return nil, c.diags
	}
	if ap := target.get("additionalProperties"); ap != nil && ap.Kind == yaml.MappingNode {
		c.errorf(target.child("additionalProperties"), "a payload must be a struct: additionalProperties with a schema is supported on nested objects only, where it makes a map")
	}
	c.taken[name] = target.path
	str := c.structOf(target, name)
	if st != nil {
		st.busy, st.resolved, st.typ = false, true, Ref{Name: name}
	}
	c.checkDefault(target)
	if str == nil || len(c.diags) > 0 {
		return nil, c.diags
	}
	doc := docOf(root)
	if doc == "" {
		doc = docOf(target)
	}
	c.decls = append([]*Decl{{Name: name, Doc: doc, Struct: str}}, c.decls...)
	c.compile()
	if len(c.diags) > 0 {
		return nil, c.diags
	}
	return &Payload{Root: name, Decls: c.decls}, nil
}

// snode is a schema node, its dotted path in its file, the file, and where it sits in
// the payload ("address", "parcels[]", "$defs.money") for doc comments.
type snode struct {
	n    *yaml.Node
	path string
	file string
	of   string
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

func joinPath(p, key string) string {
	if p == "" {
		return key
	}
	return p + "." + key
}

func (s snode) child(key string) snode {
	return snode{n: s.get(key), path: joinPath(s.path, key), file: s.file, of: s.of}
}

// key returns the key node of the i-th entry (Content index i) of a mapping.
func (s snode) key(i int) snode {
	return snode{n: s.n.Content[i], path: joinPath(s.path, s.n.Content[i].Value), file: s.file, of: s.of}
}

func scalarValue(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// docOf is a schema's description, or its title.
func docOf(s snode) string {
	if d := scalarValue(s.get("description")); d != "" {
		return d
	}
	return scalarValue(s.get("title"))
}

func quote(s string) string { return strconv.Quote(s) }

func (c *conv) errorf(at snode, format string, args ...any) {
	n, file := at.n, at.file
	if n == nil {
		n, file = c.root.n, c.root.file
	}
	line, col := 1, 1
	if n != nil && n.Line > 0 {
		line, col = n.Line, n.Column
	}
	c.diags = append(c.diags, spec.Diagnostic{
		Pos:     spec.Pos{File: file, Line: line, Col: col},
		Path:    at.path,
		Message: fmt.Sprintf(format, args...),
	})
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
// nullable reports a type: [T, "null"] (or an enum that lists null).
func (c *conv) typeOf(s snode, hint string) (t Type, nullable bool) {
	if s.n == nil {
		c.errorf(s, "missing schema")
		return nil, false
	}
	if s.n.Kind == yaml.ScalarNode && s.n.Tag == "!!bool" {
		if s.n.Value == "true" {
			return Builtin{"any"}, false
		}
		c.errorf(s, "the schema false accepts nothing; remove the property instead")
		return nil, false
	}
	if s.n.Kind != yaml.MappingNode {
		c.errorf(s, "want a schema (a mapping), got %s", describe(s.n))
		return nil, false
	}
	before := len(c.diags)
	if c.keywords(s, false); len(c.diags) > before {
		// Converting a schema with a wrong keyword would only add noise, but a
		// misspelt type is the likelier mistake, so it is reported too.
		c.types(s)
		return nil, false
	}
	defer func() {
		if t != nil && len(c.diags) == before {
			c.checkDefault(s)
		}
	}()
	if s.get("$ref") != nil {
		for i := 0; i+1 < len(s.n.Content); i += 2 {
			if k := s.n.Content[i].Value; k != "$ref" && !annotation(k) {
				c.errorf(s.key(i), "keyword %q next to $ref is not supported: move it into the referenced schema", k)
			}
		}
		return c.ref(s.child("$ref"))
	}
	if s.get("enum") != nil {
		return c.enum(s, hint)
	}
	types, ok := c.types(s)
	if !ok {
		return nil, false
	}
	if len(types) == 0 {
		if cn := s.get("const"); cn != nil {
			return c.constType(s.child("const")), false
		}
		c.errorf(s, "missing type: say which JSON type this is (type: string, integer, number, boolean, object or array), or write true for any JSON value")
		return nil, false
	}
	nullable = len(types) == 2 && (types[0] == "null" || types[1] == "null") && types[0] != types[1]
	if nullable {
		if types[0] == "null" {
			types = types[1:]
		} else {
			types = types[:1]
		}
	}
	switch {
	case len(types) > 1:
		c.errorf(s.child("type"), "union type [%s] is not supported: only [T, \"null\"] has a Go type", strings.Join(types, ", "))
		return nil, false
	case types[0] == "null":
		c.errorf(s.child("type"), "type null alone carries no data")
		return nil, false
	}
	if cn := s.get("const"); cn != nil {
		c.checkConst(s, types[0])
	}
	return c.single(s, types[0], hint), nullable
}

var jsonTypes = map[string]bool{"string": true, "integer": true, "number": true, "boolean": true, "object": true, "array": true, "null": true}

// typeAliases are the names other languages give JSON's types, too far from them
// in spelling for spec.Suggest to find: type: int means integer.
var typeAliases = map[string]string{
	"int": "integer", "int32": "integer", "int64": "integer", "uint": "integer", "long": "integer",
	"float": "number", "float32": "number", "float64": "number", "double": "number", "decimal": "number",
	"str": "string", "text": "string", "bool": "boolean",
	"map": "object", "dict": "object", "struct": "object", "list": "array", "slice": "array",
	"nil": "null", "none": "null",
}

// suggestType returns the JSON type an unknown type name most likely means, or "".
func suggestType(name string) string {
	if t, ok := typeAliases[strings.ToLower(name)]; ok {
		return t
	}
	if t := strings.ToLower(name); jsonTypes[t] {
		return t
	}
	return spec.Suggest(name, []string{"string", "integer", "number", "boolean", "object", "array", "null"})
}

// types returns the JSON types a schema's type keyword names.
func (c *conv) types(s snode) ([]string, bool) {
	tn := s.get("type")
	if tn == nil {
		return nil, true
	}
	var out []string
	check := func(n *yaml.Node, at snode) bool {
		if n.Kind != yaml.ScalarNode || n.Tag != "!!str" || !jsonTypes[n.Value] {
			msg := fmt.Sprintf("unknown type %s: want string, integer, number, boolean, object, array or null", describe(n))
			if sg := suggestType(n.Value); sg != "" && n.Kind == yaml.ScalarNode {
				msg = fmt.Sprintf("unknown type %s; did you mean %q?", describe(n), sg)
			}
			c.errorf(at, "%s", msg)
			return false
		}
		out = append(out, n.Value)
		return true
	}
	at := s.child("type")
	switch tn.Kind {
	case yaml.ScalarNode:
		if !check(tn, at) {
			return nil, false
		}
	case yaml.SequenceNode:
		if len(tn.Content) == 0 {
			c.errorf(at, "type must name at least one type")
			return nil, false
		}
		for i, n := range tn.Content {
			if !check(deref(n), snode{n: deref(n), path: joinPath(at.path, strconv.Itoa(i)), file: s.file}) {
				return nil, false
			}
		}
	default:
		c.errorf(at, "type must be a name or a list of names")
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
		items.of = s.of + "[]"
		switch {
		case items.n == nil:
			c.errorf(s, "an array needs items: the schema of its elements")
			return nil
		case items.n.Kind == yaml.SequenceNode:
			return nil // reported with the keywords
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
	ap.of = s.of + "{}"
	apSchema := ap.n != nil && ap.n.Kind == yaml.MappingNode
	if props == nil || len(props.Content) == 0 {
		switch {
		case apSchema:
			elem, nullable := c.typeOf(ap, singular(hint))
			if elem == nil {
				return nil
			}
			if nullable {
				elem = Pointer{elem}
			}
			return Map{elem}
		case scalarValue(ap.n) == "false":
			c.errorf(ap, "an object without properties and with additionalProperties: false accepts only {}")
			return nil
		}
		return Map{Builtin{"any"}}
	}
	if apSchema {
		c.errorf(ap, "additionalProperties with a schema next to properties is not supported: use a separate map property")
		return nil
	}
	name := c.claim(hint, s.path)
	// Declare the struct before the types of its fields, so the file reads top-down.
	decl := &Decl{Name: name, Doc: docOf(s), Of: s.of}
	c.decls = append(c.decls, decl)
	if decl.Struct = c.structOf(s, name); decl.Struct == nil {
		return nil
	}
	return Ref{Name: name}
}

func (c *conv) structOf(s snode, name string) *Struct {
	required := map[string]bool{}
	reqNodes := map[string]snode{}
	if r := s.get("required"); r != nil && r.Kind == yaml.SequenceNode {
		for i, n := range r.Content {
			if n = deref(n); n.Kind == yaml.ScalarNode {
				required[n.Value] = true
				reqNodes[n.Value] = snode{n: n, path: joinPath(s.path, "required."+strconv.Itoa(i)), file: s.file}
			}
		}
	}
	st := &Struct{}
	props := s.child("properties")
	if props.n != nil && props.n.Kind != yaml.MappingNode {
		return nil // reported with the keywords
	}
	seen := map[string]string{}
	if props.n != nil {
		for i := 0; i+1 < len(props.n.Content); i += 2 {
			key := props.n.Content[i].Value
			ps := snode{n: deref(props.n.Content[i+1]), path: joinPath(props.path, key), file: s.file, of: joinPath(s.of, key)}
			kn := props.key(i)
			goName := GoName(key)
			if goName == "" {
				c.errorf(kn, "property %q has no letters or digits to make a Go name from", key)
				continue
			}
			if other, dup := seen[goName]; dup {
				if other == key {
					c.errorf(kn, "property %q is declared twice", key)
				} else {
					c.errorf(kn, "properties %q and %q both become Go field %s: rename one", other, key, goName)
				}
				continue
			}
			seen[goName] = key
			t, nullable := c.typeOf(ps, name+goName)
			if t == nil {
				continue
			}
			f := Field{Name: goName, JSON: key, Required: required[key], Doc: docOf(ps)}
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
	for _, r := range sortedKeys(reqNodes) {
		if props.n == nil || props.get(r) == nil {
			c.errorf(reqNodes[r], "required property %q is not declared under properties", r)
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
