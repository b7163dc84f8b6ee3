package spec

import (
	"bytes"
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// JSONValue converts a YAML node to the value encoding/json would decode from the same
// document: map[string]any, []any, string, int64, float64, bool or nil. Scalars with
// other YAML tags become their text.
func JSONValue(n *yaml.Node) any {
	n = resolveAlias(n)
	if n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = JSONValue(n.Content[i+1])
		}
		return m
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, c := range n.Content {
			out[i] = JSONValue(c)
		}
		return out
	}
	if v, ok := scalarJSON(n); ok {
		return v
	}
	return n.Value
}

// Value returns the schema as a JSON value.
func (s *Schema) Value() any { return JSONValue(s.Node) }

// Canonical returns the schema as canonical JSON: object keys sorted, no insignificant
// white space, no HTML escaping. Equal schemas have equal canonical forms, whatever
// their YAML layout, so jobc.lock hashes it and the runtime validates with it.
func (s *Schema) Canonical() ([]byte, error) {
	return CanonicalJSON(s.Value())
}

// CanonicalJSON encodes a JSON value canonically (see Schema.Canonical).
func CanonicalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode schema: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
