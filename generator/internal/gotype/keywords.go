package gotype

import (
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/jobc-dev/jobc/generator/spec"
	"github.com/jobc-dev/jobc/internal/dialect"
)

// valueKinds names, for each form of value the dialect knows, what the check of a
// keyword's value (valueIs) and its message (article) call it; "" is not checked here.
var valueKinds = map[dialect.Value]string{
	dialect.String: "string", dialect.Boolean: "boolean", dialect.List: "list",
	dialect.Strings: "list of strings", dialect.Count: "count", dialect.Number: "number",
	dialect.Positive: "positive number", dialect.SchemaMap: "mapping", dialect.Schema: "schema",
}

// annotation reports whether k never changes the Go type or validation.
func annotation(k string) bool {
	row, ok := dialect.Lookup(k)
	return ok && row.Class == dialect.Annotation
}

// rootOnly reports whether k may only appear at the top of a payload schema.
func rootOnly(k string) bool {
	row, ok := dialect.Lookup(k)
	return ok && row.RootOnly
}

// keywords reports every keyword of a subschema that jobc does not support, that does
// not belong where it is, or whose value has the wrong form.
func (c *conv) keywords(s snode, root bool) {
	types := c.typeList(s)
	for i := 0; i+1 < len(s.n.Content); i += 2 {
		k := s.n.Content[i].Value
		at := s.key(i)
		v := snode{n: s.n.Content[i+1], path: at.path, file: s.file}
		row, ok := dialect.Lookup(k)
		switch {
		case !ok:
			if sg := spec.Suggest(k, dialect.Accepted()); sg != "" {
				c.errorf(at, "unknown JSON Schema keyword %q; did you mean %q?", k, sg)
			} else {
				c.errorf(at, "unknown JSON Schema keyword %q", k)
			}
			continue
		case row.Class == dialect.Unsupported:
			c.errorf(at, "unsupported JSON Schema keyword %q: jobc generates Go types from a subset of JSON Schema (see docs/spec.md)", k)
			continue
		case row.RootOnly && !root:
			c.errorf(at, "keyword %q is only allowed at the top of a payload schema", k)
			continue
		}
		// With an unknown type there is no telling which type the keyword was
		// meant for: the unknown type is the error, reported where types are read.
		if want := row.Applies; want != "" && len(types) > 0 && known(types) && !allows(types, want) {
			c.errorf(at, "keyword %q applies to %s values, but this schema has type %s", k, typeWord(want), strings.Join(types, " or "))
			continue
		}
		if k == "items" && deref(v.n).Kind == yaml.SequenceNode {
			c.errorf(v, "items as a list of schemas (a tuple) is not supported: an array's elements share one schema")
			continue
		}
		if want := valueKinds[row.Value]; want != "" && !valueIs(v.n, want) {
			c.errorf(v, "%s must be %s, got %s", k, article(want), describe(v.n))
			continue
		}
		if k == "pattern" {
			if _, err := regexp.Compile(v.n.Value); err != nil {
				c.errorf(v, "pattern %q is not a valid regular expression: %v", v.n.Value, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
			}
		}
	}
}

// typeList returns the non-null JSON types a schema's type keyword names, or nil.
func (c *conv) typeList(s snode) []string {
	t := s.get("type")
	var out []string
	switch {
	case t == nil:
	case t.Kind == yaml.ScalarNode:
		out = append(out, t.Value)
	case t.Kind == yaml.SequenceNode:
		for _, e := range t.Content {
			out = append(out, deref(e).Value)
		}
	}
	kept := out[:0]
	for _, x := range out {
		if x != "null" {
			kept = append(kept, x)
		}
	}
	return kept
}

// known reports whether every type names a JSON type.
func known(types []string) bool {
	for _, t := range types {
		if !jsonTypes[t] {
			return false
		}
	}
	return true
}

func allows(types []string, want string) bool {
	for _, t := range types {
		if t == want || (want == "number" && t == "integer") {
			return true
		}
	}
	return false
}

func typeWord(t string) string {
	if t == "number" {
		return "number and integer"
	}
	return t
}

func valueIs(n *yaml.Node, want string) bool {
	n = deref(n)
	switch want {
	case "string":
		return n.Kind == yaml.ScalarNode && n.Tag == "!!str"
	case "boolean":
		return n.Kind == yaml.ScalarNode && n.Tag == "!!bool"
	case "list":
		return n.Kind == yaml.SequenceNode
	case "list of strings":
		if n.Kind != yaml.SequenceNode {
			return false
		}
		for _, e := range n.Content {
			if e = deref(e); e.Kind != yaml.ScalarNode || e.Tag != "!!str" {
				return false
			}
		}
		return true
	case "count":
		v, ok := spec.JSONValue(n).(int64)
		return n.Kind == yaml.ScalarNode && ok && v >= 0
	case "number", "positive number":
		var f float64
		switch v := spec.JSONValue(n).(type) {
		case int64:
			f = float64(v)
		case float64:
			f = v
		default:
			return false
		}
		return n.Kind == yaml.ScalarNode && (want == "number" || f > 0)
	case "mapping":
		return n.Kind == yaml.MappingNode
	case "schema":
		return n.Kind == yaml.MappingNode || (n.Kind == yaml.ScalarNode && n.Tag == "!!bool")
	}
	return true
}

func article(want string) string {
	switch want {
	case "count":
		return "a non-negative integer"
	case "list", "list of strings", "mapping", "string", "number", "positive number", "boolean":
		if want == "list of strings" {
			return "a list of strings"
		}
		return "a " + want
	case "schema":
		return "a schema (a mapping) or a boolean"
	}
	return want
}

// describe shows a YAML value in a message.
func describe(n *yaml.Node) string {
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "null"
		case "!!int", "!!float", "!!bool":
			return n.Value
		}
		return quote(n.Value)
	}
	return "nothing"
}
