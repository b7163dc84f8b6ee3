package spec

import (
	"fmt"
	"math"
	"math/big"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/jobc-dev/jobc/internal/dialect"
)

// Resolve follows a local $ref ("#/$defs/Name", or any JSON pointer into the schema)
// to the node it names, or returns nil.
func (s *Schema) Resolve(ref string) *yaml.Node {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	frag, err := url.PathUnescape(frag)
	if err != nil || (frag != "" && !strings.HasPrefix(frag, "/")) {
		return nil
	}
	n, _, msg := pointer(resolveAlias(s.Node), frag)
	if msg != "" {
		return nil
	}
	return n
}

// Root returns the schema every payload is an instance of: Node, or what a $ref at its
// top refers to (as when the whole payload schema is in another file).
func (s *Schema) Root() *yaml.Node {
	n := resolveAlias(s.Node)
	for range 10 {
		ref := mapGet(n, "$ref")
		if ref == nil || ref.Kind != yaml.ScalarNode {
			return n
		}
		next := s.Resolve(ref.Value)
		if next == nil {
			return n
		}
		n = next
	}
	return n
}

// maxCheckDepth bounds CheckValue's recursion through $refs.
const maxCheckDepth = 64

// CheckValue checks a JSON value (as JSONValue returns it) against the subschema sub
// of s: type, enum, const, the date and date-time formats, bounds, lengths, the
// properties and items it contains. It returns "" when the value matches, or what is
// wrong. Defaults and the values of declarative changes are checked with it, so a
// mistake shows up when the spec is generated rather than in a running worker.
func (s *Schema) CheckValue(sub *yaml.Node, v any) string {
	return s.check(sub, v, "", 0)
}

func (s *Schema) check(n *yaml.Node, v any, at string, depth int) string {
	n = resolveAlias(n)
	if n == nil || depth > maxCheckDepth {
		return ""
	}
	where := ""
	if at != "" {
		where = "at " + at + ": "
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		if n.Value == "false" {
			return where + "the schema false allows no value"
		}
		return ""
	}
	if n.Kind != yaml.MappingNode {
		return ""
	}
	if ref := mapGet(n, "$ref"); ref != nil && ref.Kind == yaml.ScalarNode {
		return s.check(s.Resolve(ref.Value), v, at, depth+1)
	}
	if types := typeNames(n); len(types) > 0 && !hasType(v, types) {
		return fmt.Sprintf("%swant %s, got %s", where, strings.Join(types, " or "), jsonText(v))
	}
	if e := mapGet(n, "enum"); e != nil && e.Kind == yaml.SequenceNode {
		ok := false
		var allowed []string
		for _, c := range e.Content {
			cv := JSONValue(c)
			allowed = append(allowed, jsonText(cv))
			ok = ok || jsonEqual(cv, v)
		}
		if !ok {
			return fmt.Sprintf("%swant one of %s, got %s", where, strings.Join(allowed, ", "), jsonText(v))
		}
	}
	if c := mapGet(n, "const"); c != nil {
		if cv := JSONValue(c); !jsonEqual(cv, v) {
			return fmt.Sprintf("%swant %s, got %s", where, jsonText(cv), jsonText(v))
		}
	}
	prefix := func(msg string) string {
		if msg == "" {
			return ""
		}
		return where + msg
	}
	switch v := v.(type) {
	case string:
		return prefix(checkString(n, v))
	case int64:
		return prefix(checkNumber(n, float64(v)))
	case float64:
		return prefix(checkNumber(n, v))
	case map[string]any:
		return s.checkObject(n, v, at, depth)
	case []any:
		if msg := prefix(checkCount(n, len(v), "minItems", "maxItems", "items")); msg != "" {
			return msg
		}
		if u := mapGet(n, "uniqueItems"); u != nil && u.Kind == yaml.ScalarNode && u.Value == "true" {
			for i := range v {
				for j := i + 1; j < len(v); j++ {
					if jsonEqual(v[i], v[j]) {
						return prefix(fmt.Sprintf("items at %d and %d are equal (uniqueItems)", i, j))
					}
				}
			}
		}
		if items := mapGet(n, "items"); items != nil && items.Kind != yaml.SequenceNode {
			for i, e := range v {
				if msg := s.check(items, e, fmt.Sprintf("%s/%d", at, i), depth+1); msg != "" {
					return msg
				}
			}
		}
	}
	return ""
}

func (s *Schema) checkObject(n *yaml.Node, v map[string]any, at string, depth int) string {
	where := ""
	if at != "" {
		where = "at " + at + ": "
	}
	if msg := checkCount(n, len(v), "minProperties", "maxProperties", "properties"); msg != "" {
		return where + msg
	}
	if r := mapGet(n, "required"); r != nil && r.Kind == yaml.SequenceNode {
		for _, name := range r.Content {
			if _, ok := v[name.Value]; !ok {
				return fmt.Sprintf("%smissing required property %q", where, name.Value)
			}
		}
	}
	props := mapGet(n, "properties")
	ap := mapGet(n, "additionalProperties")
	for _, k := range sortedKeys(v) {
		sub := mapGet(props, k)
		if sub == nil {
			if ap == nil {
				continue
			}
			if ap.Kind == yaml.ScalarNode && ap.Value == "false" {
				return fmt.Sprintf("%sunknown property %q (additionalProperties: false)", where, k)
			}
			sub = ap
		}
		if msg := s.check(sub, v[k], at+"/"+strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1"), depth+1); msg != "" {
			return msg
		}
	}
	return ""
}

func checkString(n *yaml.Node, v string) string {
	// Formats are checked by the runtime's own checks: it fills a schema's defaults in
	// before validating, so a default it rejects would fail every enqueue.
	if f := scalar(mapGet(n, "format")); f != "" {
		if err := dialect.CheckFormat(f, v); err != nil {
			switch f {
			case "date-time":
				return fmt.Sprintf("want a date-time such as 2024-05-01T09:30:00Z, got %q", v)
			case "date":
				return fmt.Sprintf("want a date such as 2024-05-01, got %q", v)
			}
			return fmt.Sprintf("%q is not valid %s: %v", v, f, err)
		}
	}
	if msg := checkCount(n, utf8.RuneCountInString(v), "minLength", "maxLength", "characters"); msg != "" {
		return msg
	}
	if p := mapGet(n, "pattern"); p != nil && p.Kind == yaml.ScalarNode {
		if re, err := regexp.Compile(p.Value); err == nil && !re.MatchString(v) {
			return fmt.Sprintf("%q does not match pattern %q", v, p.Value)
		}
	}
	return ""
}

func checkNumber(n *yaml.Node, v float64) string {
	bound := func(key string) (float64, bool) {
		b, ok := JSONValue(mapGet(n, key)).(float64)
		if i, isInt := JSONValue(mapGet(n, key)).(int64); isInt {
			b, ok = float64(i), true
		}
		return b, ok && mapGet(n, key) != nil
	}
	if b, ok := bound("minimum"); ok && v < b {
		return fmt.Sprintf("%v is less than the minimum %v", v, b)
	}
	if b, ok := bound("maximum"); ok && v > b {
		return fmt.Sprintf("%v is more than the maximum %v", v, b)
	}
	if b, ok := bound("exclusiveMinimum"); ok && v <= b {
		return fmt.Sprintf("%v is not more than the exclusive minimum %v", v, b)
	}
	if b, ok := bound("exclusiveMaximum"); ok && v >= b {
		return fmt.Sprintf("%v is not less than the exclusive maximum %v", v, b)
	}
	// Exactly, as the runtime divides the decimals the schema's JSON holds: no
	// tolerance makes 1.0000000001 a multiple of 1 (nor 0.3 a non-multiple of 0.1).
	if b, ok := bound("multipleOf"); ok && b > 0 {
		q := new(big.Rat).Quo(decimal(v), decimal(b))
		if !q.IsInt() {
			return fmt.Sprintf("%v is not a multiple of %v", v, b)
		}
	}
	return ""
}

// decimal is the exact value of the shortest decimal that reads back as f, which is
// what a float64 is written as in JSON.
func decimal(f float64) *big.Rat {
	r, _ := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	return r
}

// checkCount checks a length or count against the minimum and maximum keywords.
func checkCount(n *yaml.Node, count int, minKey, maxKey, what string) string {
	if count == 1 {
		what = map[string]string{"items": "item", "characters": "character", "properties": "property"}[what]
	}
	if m, ok := JSONValue(mapGet(n, minKey)).(int64); ok && int64(count) < m {
		return fmt.Sprintf("has %d %s, fewer than %s %d", count, what, minKey, m)
	}
	if m, ok := JSONValue(mapGet(n, maxKey)).(int64); ok && int64(count) > m {
		return fmt.Sprintf("has %d %s, more than %s %d", count, what, maxKey, m)
	}
	return ""
}

// typeNames returns the JSON types a schema's type keyword allows.
func typeNames(n *yaml.Node) []string {
	t := mapGet(n, "type")
	switch {
	case t == nil:
		return nil
	case t.Kind == yaml.ScalarNode:
		return []string{t.Value}
	case t.Kind == yaml.SequenceNode:
		var out []string
		for _, c := range t.Content {
			out = append(out, resolveAlias(c).Value)
		}
		return out
	}
	return nil
}

func hasType(v any, types []string) bool {
	for _, t := range types {
		switch t {
		case "string":
			if _, ok := v.(string); ok {
				return true
			}
		case "integer":
			switch v := v.(type) {
			case int64:
				return true
			case float64:
				if v == math.Trunc(v) {
					return true
				}
			}
		case "number":
			switch v.(type) {
			case int64, float64:
				return true
			}
		case "boolean":
			if _, ok := v.(bool); ok {
				return true
			}
		case "object":
			if _, ok := v.(map[string]any); ok {
				return true
			}
		case "array":
			if _, ok := v.([]any); ok {
				return true
			}
		case "null":
			if v == nil {
				return true
			}
		default:
			return true // an unknown type is reported where the schema is converted
		}
	}
	return false
}

// jsonEqual compares JSON values, numbers by value (1 equals 1.0).
func jsonEqual(a, b any) bool {
	switch a := a.(type) {
	case int64:
		switch b := b.(type) {
		case int64:
			return a == b
		case float64:
			return float64(a) == b
		}
		return false
	case float64:
		switch b := b.(type) {
		case int64:
			return a == float64(b)
		case float64:
			return a == b
		}
		return false
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, av := range a {
			bv, ok := bm[k]
			if !ok || !jsonEqual(av, bv) {
				return false
			}
		}
		return true
	case []any:
		bs, ok := b.([]any)
		if !ok || len(a) != len(bs) {
			return false
		}
		for i := range a {
			if !jsonEqual(a[i], bs[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

func jsonText(v any) string {
	b, err := CanonicalJSON(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
