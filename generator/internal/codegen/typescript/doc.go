package typescript

import (
	"fmt"
	"strings"

	"github.com/jobc-dev/jobc/generator/internal/codegen/golang"

	"go.yaml.in/yaml/v3"

	"github.com/jobc-dev/jobc/generator/spec"
	"github.com/jobc-dev/jobc/internal/dialect"
)

// lineWidth is the width the file is laid out for, prettier's printWidth: code lines
// break as prettier breaks them, comments wrap before it.
const lineWidth = 100

// writer accumulates the file's lines.
type writer struct{ strings.Builder }

func (w *writer) line(s string) {
	w.WriteString(s)
	w.WriteByte('\n')
}

// comment writes text as line comments starting with prefix, wrapped.
func (w *writer) comment(prefix, text string) {
	for _, l := range golang.Wrap(text, lineWidth-1-len(prefix)) {
		w.line(strings.TrimRight(prefix+" "+l, " "))
	}
}

// jsdoc writes a JSDoc comment, indented by indent, of the given paragraphs (empty
// ones left out): one line when it fits, wrapped otherwise. A paragraph that starts
// with a tag (@default) stays one paragraph but is not separated by a blank line.
func (w *writer) jsdoc(indent string, paras ...string) {
	var ps []string
	for _, p := range paras {
		if p = strings.TrimSpace(p); p != "" {
			ps = append(ps, strings.ReplaceAll(p, "*/", "*\\/"))
		}
	}
	if len(ps) == 0 {
		return
	}
	if len(ps) == 1 && !strings.Contains(ps[0], "\n") && len(indent)+len(ps[0])+7 <= lineWidth {
		w.line(indent + "/** " + ps[0] + " */")
		return
	}
	w.line(indent + "/**")
	for i, p := range ps {
		if i > 0 && !strings.HasPrefix(p, "@") {
			w.line(indent + " *")
		}
		for _, l := range golang.Wrap(p, lineWidth-3-len(indent)) {
			w.line(strings.TrimRight(indent+" * "+l, " "))
		}
	}
	w.line(indent + " */")
}

func join(a, b string) string {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}

// docOf is a schema's description, or its title.
func docOf(n *yaml.Node) string {
	if d := scalar(get(n, "description")); d != "" {
		return d
	}
	return scalar(get(n, "title"))
}

// checkKeywords are the validation keywords TypeScript's types cannot express, in the
// order the doc comment lists them (the dialect's): the assertions the TypeScript
// target does not claim, but format, which ownChecks describes on its own.
var checkKeywords = func() []string {
	var out []string
	for _, k := range dialect.Keywords() {
		if k.Class == dialect.Assertion && !k.Supports(dialect.TypeScript) && k.Name != "format" {
			out = append(out, k.Name)
		}
	}
	return out
}()

// checks says what the schema requires of a property's value that its TypeScript
// type cannot say, and so only the SQL function checks: that a number is an integer,
// its format, its bounds; and the same of an array's elements.
func checks(v *version, n *yaml.Node) string {
	var groups []string
	label := ""
	for n != nil {
		n = deref(n)
		if ref := scalar(get(n, "$ref")); ref != "" {
			def := v.lookup(ref)
			if get(def, "enum") != nil || contains(typesOf(def), "object") {
				break // a named type, whose own declaration says its checks
			}
			n = def // a named scalar or array: its checks apply here
			continue
		}
		if notes := ownChecks(n); len(notes) > 0 {
			groups = append(groups, label+strings.Join(notes, ", "))
		}
		if !contains(typesOf(n), "array") {
			break
		}
		n = get(n, "items")
		if label == "" {
			label = "each element: "
		} else {
			label = strings.TrimSuffix(label, ": ") + " of each element: "
		}
	}
	if len(groups) == 0 {
		return ""
	}
	return "Schema: " + strings.Join(groups, "; ") + "."
}

// ownChecks lists the checks of one schema, not of its elements.
func ownChecks(n *yaml.Node) []string {
	var out []string
	if contains(typesOf(n), "integer") && get(n, "enum") == nil && get(n, "const") == nil {
		out = append(out, "an integer")
	}
	if f := scalar(get(n, "format")); f != "" {
		if row, _ := dialect.LookupFormat(f); row.Describe != "" {
			out = append(out, fmt.Sprintf("format %s (%s)", f, row.Describe))
		} else {
			out = append(out, "format "+f)
		}
	}
	for _, k := range checkKeywords {
		if c := get(n, k); c != nil {
			out = append(out, k+" "+valueText(c))
		}
	}
	return out
}

// valueText renders a keyword's value: a pattern as it is, anything else as JSON.
func valueText(n *yaml.Node) string {
	v := spec.JSONValue(n)
	if s, ok := v.(string); ok {
		return s
	}
	return literal(v)
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
