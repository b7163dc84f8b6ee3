package sql

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// lit is s as a SQL string literal. One with a backslash is written E'...', whose
// meaning does not depend on standard_conforming_strings.
func lit(s string) string {
	q := strings.ReplaceAll(s, "'", "''")
	if strings.Contains(s, `\`) {
		return "E'" + strings.ReplaceAll(q, `\`, `\\`) + "'"
	}
	return "'" + q + "'"
}

// jsonLit is a JSON value as a jsonb literal.
func jsonLit(v any) string {
	b, err := canonical(v)
	if err != nil {
		panic(err) // the value was decoded from JSON: it encodes
	}
	return lit(string(b)) + "::jsonb"
}

// textArray is a text[] literal of names: ARRAY['a', 'b']::text[].
func textArray(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = lit(n)
	}
	return "ARRAY[" + strings.Join(q, ", ") + "]::text[]"
}

// canonical encodes a decoded JSON value as the runtime reads it: keys sorted, no
// HTML escaping, numbers as written.
func canonical(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode JSON: %w", err)
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}

// The functions below give the Go validator's wording (runtime/internal/schema) for
// messages whose values are known when the file is generated.

// goQuote single-quotes s as the validator's messages do: 'email'.
func goQuote(s string) string {
	q := strconv.Quote(s)
	q = strings.ReplaceAll(q, `\"`, `"`)
	q = strings.ReplaceAll(q, `'`, `\'`)
	return "'" + q[1:len(q)-1] + "'"
}

// display is how a value appears in a message: strings quoted, numbers as written,
// objects and arrays as "value".
func display(v any) string {
	switch v := v.(type) {
	case string:
		return goQuote(v)
	case []any, map[string]any:
		return "value"
	case nil:
		return "null"
	default:
		return fmt.Sprint(v)
	}
}

// enumMessage is the problem of a value outside an enum.
func enumMessage(values []any) string {
	shown := make([]string, len(values))
	for i, e := range values {
		switch e.(type) {
		case map[string]any, []any:
			return "value must be one of the enum's values"
		}
		shown[i] = display(e)
	}
	if len(shown) == 1 {
		return "value must be " + shown[0]
	}
	return "value must be one of " + strings.Join(shown, ", ")
}

// typeNames are the JSON Schema types in the order the validator names them.
var typeNames = []string{"null", "boolean", "object", "array", "string", "number", "integer"}

// types returns a schema's type keyword as a set, in typeNames order; nil for none.
func types(v any) []string {
	var given []string
	switch v := v.(type) {
	case string:
		given = []string{v}
	case []any:
		for _, t := range v {
			if s, ok := t.(string); ok {
				given = append(given, s)
			}
		}
	}
	var out []string
	for _, n := range typeNames {
		for _, g := range given {
			if g == n {
				out = append(out, n)
				break
			}
		}
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
