package schema

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Validate checks a decoded document (see Decode) and returns its problems, sorted by
// field; none means valid. The messages name the rule and the limit, as the JSON
// Schema library's did: "minimum: got 0, want 1", "missing property 'email'".
func (s *Schema) Validate(doc any) []Problem {
	v := validator{}
	v.node(s.root, doc)
	sort.SliceStable(v.problems, func(i, j int) bool { return v.problems[i].Field < v.problems[j].Field })
	return v.problems
}

type validator struct {
	path     []string // tokens of the JSON pointer to the value being checked
	problems []Problem
}

func (v *validator) addf(format string, args ...any) {
	field := ""
	if len(v.path) > 0 {
		field = "/" + strings.Join(v.path, "/")
	}
	v.problems = append(v.problems, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
}

func (v *validator) node(n *node, x any) {
	if n.boolean != nil {
		if !*n.boolean {
			v.addf("not allowed")
		}
		return
	}
	// A value of the wrong type, constant, enum or format gets that one problem only.
	if n.types != 0 && !n.types.matches(x) {
		v.addf("got %s, want %s", typeOf(x), n.types)
		return
	}
	if n.hasConstant && !equal(x, n.constant) {
		v.addf("value must be %s", display(n.constant))
		return
	}
	if n.hasEnum && !n.inEnum(x) {
		v.addf("%s", enumMessage(n.enum))
		return
	}
	if n.checkFormat != nil {
		if err := n.checkFormat(x); err != nil {
			v.addf("%s is not valid %s: %v", display(x), n.format, err)
			return
		}
	}
	if n.ref != nil {
		v.node(n.ref, x)
	}
	switch x := x.(type) {
	case map[string]any:
		v.object(n, x)
	case []any:
		v.array(n, x)
	case string:
		v.string(n, x)
	case json.Number:
		v.number(n, x)
	}
}

func (t typeSet) matches(x any) bool {
	switch x := x.(type) {
	case nil:
		return t&tNull != 0
	case bool:
		return t&tBoolean != 0
	case map[string]any:
		return t&tObject != 0
	case []any:
		return t&tArray != 0
	case string:
		return t&tString != 0
	case json.Number:
		return matchesNumber(t, string(x))
	}
	return false
}

// matchesNumber says whether a number, given by its text, is of a type in t: every
// number is a "number", an integral one (1.0 and 1e2 too) an "integer".
func matchesNumber[T string | []byte](t typeSet, text T) bool {
	if t&tNumber != 0 {
		return true
	}
	if t&tInteger == 0 {
		return false
	}
	num, ok := readNumber(text)
	return ok && num.integral()
}

func (n *node) inEnum(x any) bool {
	for _, e := range n.enum {
		if equal(x, e) {
			return true
		}
	}
	return false
}

func (v *validator) object(n *node, x map[string]any) {
	if n.minProperties >= 0 && len(x) < n.minProperties {
		v.addf("minProperties: got %d, want %d", len(x), n.minProperties)
	}
	if n.maxProperties >= 0 && len(x) > n.maxProperties {
		v.addf("maxProperties: got %d, want %d", len(x), n.maxProperties)
	}
	var missing []string
	for _, r := range n.required {
		if _, ok := x[r]; !ok {
			missing = append(missing, r)
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		v.addf("missing property %s", quote(missing[0]))
	default:
		v.addf("missing properties %s", joinQuoted(missing))
	}
	for _, name := range n.names {
		if pv, ok := x[name]; ok {
			v.path = append(v.path, name)
			v.node(n.properties[name], pv)
			v.path = v.path[:len(v.path)-1]
		}
	}
	if n.additional == nil || len(x) == len(n.names) && n.allKnown(x) {
		return
	}
	var extra []string
	for name := range x {
		if _, known := n.properties[name]; !known {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	if a := n.additional; a.boolean != nil && !*a.boolean {
		if len(extra) > 0 {
			v.addf("additional properties %s not allowed", joinQuoted(extra))
		}
		return
	}
	for _, name := range extra {
		v.path = append(v.path, name)
		v.node(n.additional, x[name])
		v.path = v.path[:len(v.path)-1]
	}
}

// allKnown says whether every property of x is declared (given as many as declared).
func (n *node) allKnown(x map[string]any) bool {
	for _, name := range n.names {
		if _, ok := x[name]; !ok {
			return false
		}
	}
	return true
}

func (v *validator) array(n *node, x []any) {
	if n.minItems >= 0 && len(x) < n.minItems {
		v.addf("minItems: got %d, want %d", len(x), n.minItems)
	}
	if n.maxItems >= 0 && len(x) > n.maxItems {
		v.addf("maxItems: got %d, want %d", len(x), n.maxItems)
	}
	if n.uniqueItems {
	dup:
		for i := range x {
			for j := i + 1; j < len(x); j++ {
				if equal(x[i], x[j]) {
					v.addf("uniqueItems: items at %d and %d are equal", i, j)
					break dup
				}
			}
		}
	}
	if n.items != nil {
		for i, e := range x {
			v.path = append(v.path, strconv.Itoa(i))
			v.node(n.items, e)
			v.path = v.path[:len(v.path)-1]
		}
	}
}

func (v *validator) string(n *node, x string) {
	if n.minLength >= 0 || n.maxLength >= 0 {
		// JSON Schema counts characters (code points), not bytes.
		l := utf8.RuneCountInString(x)
		if n.minLength >= 0 && l < n.minLength {
			v.addf("minLength: got %d, want %d", l, n.minLength)
		}
		if n.maxLength >= 0 && l > n.maxLength {
			v.addf("maxLength: got %d, want %d", l, n.maxLength)
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(x) {
		v.addf("%s does not match pattern %s", quote(x), quote(n.pattern.String()))
	}
}

func (v *validator) number(n *node, x json.Number) {
	if !n.boundsNumbers() {
		return
	}
	num, err := parseNumber(x)
	if err != nil {
		v.addf("%s", err)
		return
	}
	broken := n.numberBreaks(num)
	if broken&breaksMinimum != 0 {
		v.addf("minimum: got %s, want %s", num.text, n.minimum.text)
	}
	if broken&breaksMaximum != 0 {
		v.addf("maximum: got %s, want %s", num.text, n.maximum.text)
	}
	if broken&breaksExclusiveMinimum != 0 {
		v.addf("exclusiveMinimum: got %s, want more than %s", num.text, n.exclusiveMinimum.text)
	}
	if broken&breaksExclusiveMaximum != 0 {
		v.addf("exclusiveMaximum: got %s, want less than %s", num.text, n.exclusiveMaximum.text)
	}
	if broken&breaksMultipleOf != 0 {
		v.addf("multipleOf: got %s, want a multiple of %s", num.text, n.multipleOf.text)
	}
}

// boundsNumbers says whether n has a rule on a number's value.
func (n *node) boundsNumbers() bool {
	return n.minimum != nil || n.maximum != nil || n.exclusiveMinimum != nil || n.exclusiveMaximum != nil || n.multipleOf != nil
}

// The rules on a number's value, as bits of numberBreaks' result.
const (
	breaksMinimum = 1 << iota
	breaksMaximum
	breaksExclusiveMinimum
	breaksExclusiveMaximum
	breaksMultipleOf
)

// numberBreaks returns the rules on a number's value that num breaks (0: none).
func (n *node) numberBreaks(num *number) int {
	broken := 0
	if n.minimum != nil && num.cmp(n.minimum) < 0 {
		broken |= breaksMinimum
	}
	if n.maximum != nil && num.cmp(n.maximum) > 0 {
		broken |= breaksMaximum
	}
	if n.exclusiveMinimum != nil && num.cmp(n.exclusiveMinimum) <= 0 {
		broken |= breaksExclusiveMinimum
	}
	if n.exclusiveMaximum != nil && num.cmp(n.exclusiveMaximum) >= 0 {
		broken |= breaksExclusiveMaximum
	}
	if n.multipleOf != nil && !num.multipleOf(n.multipleOf) {
		broken |= breaksMultipleOf
	}
	return broken
}

// equal is JSON equality: numbers by value (1 equals 1.0), objects by members.
func equal(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, av := range a {
			bv, ok := b[k]
			if !ok || !equal(av, bv) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !equal(a[i], b[i]) {
				return false
			}
		}
		return true
	case json.Number:
		b, ok := b.(json.Number)
		if !ok {
			return false
		}
		if a == b {
			return true
		}
		x, err1 := parseNumber(a)
		y, err2 := parseNumber(b)
		return err1 == nil && err2 == nil && x.cmp(y) == 0
	default: // nil, bool, string
		return a == b
	}
}

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

func display(v any) string {
	switch v := v.(type) {
	case string:
		return quote(v)
	case []any, map[string]any:
		return "value"
	case nil:
		return "null"
	default:
		return fmt.Sprint(v)
	}
}

// quote single-quotes s, as the library's messages did: 'email'.
func quote(s string) string {
	q := strconv.Quote(s)
	q = strings.ReplaceAll(q, `\"`, `"`)
	q = strings.ReplaceAll(q, `'`, `\'`)
	return "'" + q[1:len(q)-1] + "'"
}

func joinQuoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quote(n)
	}
	return strings.Join(q, ", ")
}
