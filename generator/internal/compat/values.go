package compat

import (
	"encoding/json"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// toRat converts a decoded JSON number (float64 or json.Number, or a Go
// integer for callers that build schemas by hand) to an exact rational.
func toRat(v any) (*big.Rat, bool) {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false
		}
		r, ok := new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
		return r, ok
	case float32:
		return toRat(float64(x))
	case json.Number:
		if !saneExponent(string(x)) {
			return nil, false
		}
		r, ok := new(big.Rat).SetString(string(x))
		return r, ok
	case int:
		return new(big.Rat).SetInt64(int64(x)), true
	case int64:
		return new(big.Rat).SetInt64(x), true
	case int32:
		return new(big.Rat).SetInt64(int64(x)), true
	case uint:
		return new(big.Rat).SetUint64(uint64(x)), true
	case uint64:
		return new(big.Rat).SetUint64(x), true
	case uint32:
		return new(big.Rat).SetUint64(uint64(x)), true
	}
	return nil, false
}

// saneExponent rejects decimal exponents so large that exact arithmetic
// would need gigabytes (json.Number("1e999999999")). Such values are
// compared as text only.
func saneExponent(s string) bool {
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return len(s) < 10000
	}
	e, err := strconv.Atoi(s[i+1:])
	return err == nil && e > -1000 && e < 1000 && i < 10000
}

// isNumber reports whether v is a decoded JSON number.
func isNumber(v any) bool {
	_, ok := toRat(v)
	return ok
}

// ratString renders a rational the way a developer wrote it in JSON.
func ratString(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// nonNegInt returns v as a non-negative integer (JSON Schema's
// "non-negative integer" keyword values such as maxLength).
func nonNegInt(v any) (*big.Int, bool) {
	r, ok := toRat(v)
	if !ok || !r.IsInt() || r.Sign() < 0 {
		return nil, false
	}
	return new(big.Int).Set(r.Num()), true
}

// jsonType returns the JSON Schema type name of a decoded JSON value, using
// "integer" for numbers with a zero fractional part. It returns "" for values
// that are not JSON.
func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		if r, ok := toRat(x); ok {
			if r.IsInt() {
				return "integer"
			}
			return "number"
		}
	}
	return ""
}

// valueEqual is JSON equality of two instance values: numbers compare by
// mathematical value (1 == 1.0), objects by key set and member values.
func valueEqual(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !valueEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !valueEqual(xv, yv) {
				return false
			}
		}
		return true
	}
	ra, okA := toRat(a)
	rb, okB := toRat(b)
	if !okA || !okB {
		// Numbers too large for exact arithmetic: equal only as the same text.
		na, isA := a.(json.Number)
		nb, isB := b.(json.Number)
		return isA && isB && !okA && !okB && na == nb
	}
	return ra.Cmp(rb) == 0
}

// containsValue reports whether vals holds a value JSON-equal to v.
func containsValue(vals []any, v any) bool {
	for _, x := range vals {
		if valueEqual(x, v) {
			return true
		}
	}
	return false
}

// strLen is the JSON Schema string length: the number of Unicode code points.
func strLen(s string) int64 {
	return int64(utf8.RuneCountInString(s))
}

// renderValue renders an instance value compactly for messages.
func renderValue(v any) string {
	if r, ok := toRat(v); ok {
		return ratString(r)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	const max = 60
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// renderValues renders a list of instance values for messages.
func renderValues(vals []any) string {
	s := ""
	for i, v := range vals {
		if i > 0 {
			s += ", "
		}
		if i == 8 {
			s += "…"
			break
		}
		s += renderValue(v)
	}
	return s
}

// sortedKeys returns the keys of m in byte order, for deterministic walks.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
