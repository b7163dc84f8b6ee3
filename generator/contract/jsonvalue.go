package contract

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/jobc-dev/jobc/internal/dialect"
)

// copyJSON deep-copies a decoded JSON value.
func copyJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = copyJSON(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = copyJSON(e)
		}
		return s
	}
	return v
}

// resolveRef follows a local reference ("#", "#/$defs/Name", any JSON pointer
// fragment) within root. It returns the value and its JSON pointer.
func resolveRef(root any, ref string) (any, string, bool) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, "", false
	}
	frag, err := url.PathUnescape(frag)
	if err != nil || (frag != "" && !strings.HasPrefix(frag, "/")) {
		return nil, "", false
	}
	v, ok := lookupPointer(root, frag)
	return v, frag, ok
}

// lookupPointer follows a JSON pointer from root.
func lookupPointer(root any, ptr string) (any, bool) {
	cur := root
	if ptr == "" {
		return cur, true
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = unescapeToken(tok)
		switch c := cur.(type) {
		case map[string]any:
			next, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) || strconv.Itoa(i) != tok {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// schemaValued reports whether keyword k holds a subschema or a list of subschemas;
// schemaMapValued, whether it holds a map of names to subschemas. Every other keyword
// holds data: a $ref inside a default or an enum is not a reference.
func schemaValued(k string) bool {
	row, _ := dialect.Lookup(k)
	return row.Value == dialect.Schema || row.Value == dialect.SchemaList
}

func schemaMapValued(k string) bool {
	row, _ := dialect.Lookup(k)
	return row.Value == dialect.SchemaMap
}

// requiredNames returns the "required" list of an object schema.
func requiredNames(obj map[string]any) []any {
	r, _ := obj["required"].([]any)
	return r
}

func isRequired(obj map[string]any, name string) bool {
	for _, r := range requiredNames(obj) {
		if r == name {
			return true
		}
	}
	return false
}

func removeRequired(obj map[string]any, name string) {
	r := requiredNames(obj)
	if r == nil {
		return
	}
	kept := make([]any, 0, len(r))
	for _, x := range r {
		if x != name {
			kept = append(kept, x)
		}
	}
	if len(kept) == 0 {
		delete(obj, "required")
		return
	}
	obj["required"] = kept
}

func addRequired(obj map[string]any, name string) {
	if !isRequired(obj, name) {
		obj["required"] = append(requiredNames(obj), name)
	}
}

// properties returns the "properties" map of an object schema, creating it when create
// is set.
func properties(obj map[string]any, create bool) map[string]any {
	p, ok := obj["properties"].(map[string]any)
	if !ok && create {
		p = map[string]any{}
		obj["properties"] = p
	}
	return p
}
