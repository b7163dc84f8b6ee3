package typescript

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/jobc-dev/jobc/generator/internal/codegen/golang"
	"github.com/jobc-dev/jobc/generator/internal/gotype"
	"github.com/jobc-dev/jobc/generator/internal/names"
	"github.com/jobc-dev/jobc/generator/spec"
)

// version renders the TypeScript types of one payload version. It walks the schema
// and the Go types gotype made of it side by side: the schema says what TypeScript
// can express (null apart from absence, literal values, closed objects), and the Go
// types name the declarations, so that both languages declare the same types in the
// same order under names derived in one place (names.Job.TSType).
type version struct {
	names names.Job
	num   int
	root  *yaml.Node              // the schema's root, which holds $defs
	decls map[string]*gotype.Decl // by Go name
	// nodes maps each declared Go name to the schema it was made from, as found
	// while rendering the declarations before it (gotype declares a type after the
	// one that first uses it).
	nodes map[string]*yaml.Node
}

func newVersion(j golang.Job, v golang.Version) *version {
	tv := &version{names: j.Names, num: v.Spec.Number, root: deref(v.Spec.Schema.Node),
		decls: map[string]*gotype.Decl{}, nodes: map[string]*yaml.Node{}}
	for _, d := range v.Payload.Decls {
		tv.decls[d.Name] = d
	}
	root := tv.root
	if ref := scalar(get(root, "$ref")); ref != "" {
		root = tv.lookup(ref) // the whole payload is a definition
	}
	tv.nodes[v.Payload.Root] = root
	return tv
}

// name is the TypeScript name of the Go type goName.
func (v *version) name(goName string) string { return v.names.TSType(v.num, goName) }

// declared returns the name of the type gotype declared for schema n, recording n as
// its schema, or "" when t is not a declared type.
func (v *version) declared(n *yaml.Node, t gotype.Type) string {
	r, ok := strip(t).(gotype.Ref)
	if !ok || r.Import != "" || v.decls[r.Name] == nil {
		return ""
	}
	if _, seen := v.nodes[r.Name]; !seen {
		v.nodes[r.Name] = n
	}
	return v.name(r.Name)
}

// typeOf renders the TypeScript type of schema n, whose Go type is t.
func (v *version) typeOf(n *yaml.Node, t gotype.Type) string {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return "unknown" // the schema true: any JSON value
	}
	if ref := scalar(get(n, "$ref")); ref != "" {
		def := v.lookup(ref)
		if name := v.declared(def, t); name != "" {
			return orNull(name, nullable(def))
		}
		return v.typeOf(def, t)
	}
	if get(n, "enum") != nil {
		if name := v.declared(n, t); name != "" {
			return orNull(name, nullable(n))
		}
		return orNull(enumUnion(n), nullable(n))
	}
	types := typesOf(n)
	if c := get(n, "const"); c != nil && c.Kind == yaml.ScalarNode {
		return orNull(literal(spec.JSONValue(c)), nullable(n))
	}
	base := ""
	for _, typ := range types {
		if typ != "null" {
			base = typ
		}
	}
	var s string
	switch base {
	case "string":
		s = "string"
	case "integer", "number":
		s = "number"
	case "boolean":
		s = "boolean"
	case "array":
		var elem gotype.Type
		if sl, ok := strip(t).(gotype.Slice); ok {
			elem = sl.Elem
		}
		s = arrayOf(v.typeOf(get(n, "items"), elem))
	case "object":
		s = v.objectOf(n, t)
	default:
		s = "unknown"
	}
	return orNull(s, nullable(n))
}

// objectOf renders an object schema: its interface when it lists properties, a
// Record when it only types additionalProperties, Record<string, unknown> otherwise.
func (v *version) objectOf(n *yaml.Node, t gotype.Type) string {
	if props := get(n, "properties"); props != nil && len(props.Content) > 0 {
		if name := v.declared(n, t); name != "" {
			return name
		}
		return "Record<string, unknown>" // a format override made it a Go type of the user's
	}
	if ap := get(n, "additionalProperties"); ap != nil && ap.Kind == yaml.MappingNode {
		var elem gotype.Type
		if m, ok := strip(t).(gotype.Map); ok {
			elem = m.Elem
		}
		return "Record<string, " + v.typeOf(ap, elem) + ">"
	}
	return "Record<string, unknown>"
}

// lookup resolves a local $ref ("#/$defs/Name" or "#/definitions/Name"): spec.Load
// made every schema self-contained and gotype checked every $ref.
func (v *version) lookup(ref string) *yaml.Node {
	section, name, _ := strings.Cut(strings.TrimPrefix(ref, "#/"), "/")
	if unescaped, err := url.PathUnescape(name); err == nil {
		name = unescaped
	}
	name = strings.ReplaceAll(strings.ReplaceAll(name, "~1", "/"), "~0", "~")
	return deref(get(get(v.root, section), name))
}

// strip removes the pointer Go puts around an optional or nullable value.
func strip(t gotype.Type) gotype.Type {
	if p, ok := t.(gotype.Pointer); ok {
		return p.Elem
	}
	return t
}

// typesOf returns the JSON types a schema's type keyword names.
func typesOf(n *yaml.Node) []string {
	tn := get(n, "type")
	if tn == nil {
		return nil
	}
	if tn.Kind == yaml.ScalarNode {
		return []string{tn.Value}
	}
	var out []string
	for _, c := range tn.Content {
		out = append(out, deref(c).Value)
	}
	return out
}

// nullable reports whether a schema accepts null: type [T, "null"], or null among
// its enum values.
func nullable(n *yaml.Node) bool {
	for _, t := range typesOf(n) {
		if t == "null" {
			return true
		}
	}
	if en := get(n, "enum"); en != nil {
		for _, c := range en.Content {
			if deref(c).Tag == "!!null" {
				return true
			}
		}
	}
	return false
}

func orNull(s string, null bool) string {
	if null {
		return s + " | null"
	}
	return s
}

// arrayOf renders an array of elem: T[], or Array<T | null> where T[] would need
// parentheses.
func arrayOf(elem string) string {
	if strings.ContainsAny(elem, " |<") {
		return "Array<" + elem + ">"
	}
	return elem + "[]"
}

// enumLiterals renders an enum's values, but null, as literal types.
func enumLiterals(n *yaml.Node) []string {
	var lits []string
	for _, c := range get(n, "enum").Content {
		if c = deref(c); c.Tag != "!!null" {
			lits = append(lits, literal(spec.JSONValue(c)))
		}
	}
	return lits
}

// enumUnion renders an enum's values, but null, as a union of literal types.
func enumUnion(n *yaml.Node) string { return strings.Join(enumLiterals(n), " | ") }

// literal renders a JSON scalar as a TypeScript literal type: JSON's string, number
// and boolean syntax is TypeScript's.
func literal(v any) string {
	b, err := spec.CanonicalJSON(v)
	if err != nil {
		return fmt.Sprintf("%q", fmt.Sprint(v))
	}
	return string(b)
}

// identifier matches the property names TypeScript accepts unquoted.
var identifier = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// propertyName renders a property's name, quoted when it is not an identifier.
func propertyName(name string) string {
	if identifier.MatchString(name) {
		return name
	}
	return literal(name)
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// get returns the value of key in a mapping node, or nil.
func get(n *yaml.Node, key string) *yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return deref(n.Content[i+1])
		}
	}
	return nil
}

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}
