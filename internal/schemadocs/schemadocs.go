// Package schemadocs builds JSON documents from a JSON Schema, valid ones and ones that
// break a rule, for the tests that hold two validators to each other: the runtime's
// against the JSON Schema library, and the SQL producers' against the runtime's.
package schemadocs

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Gen builds documents from a schema: valid ones, and with Mutate set, ones that break
// a rule now and then (a wrong type, a missing or unknown property, a value past a
// bound). Numbers are written as Go writes an int64 or a float64, since payloads come
// from Go structs.
type Gen struct {
	root    map[string]any
	rng     *rand.Rand
	formats map[string][]string
	Mutate  bool // break a rule now and then
}

// New returns a generator for the schema root (decoded JSON), drawing from rng.
func New(root map[string]any, rng *rand.Rand) *Gen {
	return &Gen{root: root, rng: rng, formats: FormatSamples()}
}

// Document builds one document for the whole schema.
func (g *Gen) Document() any { return g.value(g.root, 0) }

func (g *Gen) chance(p float64) bool { return g.Mutate && g.rng.Float64() < p }

func (g *Gen) value(s any, depth int) any {
	m, ok := s.(map[string]any)
	if !ok {
		return "x"
	}
	if r, ok := m["$ref"].(string); ok {
		return g.value(g.resolve(r), depth+1)
	}
	if g.chance(0.05) {
		return []any{nil, true, "s", 1.5, json.Number("7"), []any{}, map[string]any{}}[g.rng.IntN(7)]
	}
	if c, ok := m["const"]; ok {
		return c
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		if g.chance(0.1) {
			return "not-in-enum"
		}
		return e[g.rng.IntN(len(e))]
	}
	typ := ""
	switch t := m["type"].(type) {
	case string:
		typ = t
	case []any:
		typ, _ = t[g.rng.IntN(len(t))].(string)
	}
	if typ == "" && m["properties"] != nil {
		typ = "object"
	}
	switch typ {
	case "null":
		return nil
	case "boolean":
		return g.rng.IntN(2) == 0
	case "string":
		return g.str(m)
	case "integer", "number":
		return g.num(m, typ == "integer")
	case "array":
		n := g.count(m, "minItems", "maxItems", 3)
		if depth > 6 {
			n = 0
		}
		items := make([]any, n)
		for i := range items {
			items[i] = g.value(m["items"], depth+1)
		}
		if len(items) > 1 && g.chance(0.2) {
			items[1] = items[0] // a duplicate, for uniqueItems
		}
		return items
	case "object":
		return g.object(m, depth)
	}
	return "any"
}

func (g *Gen) resolve(ref string) any {
	var v any = g.root
	for _, tok := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		v = v.(map[string]any)[tok]
	}
	return v
}

func (g *Gen) object(m map[string]any, depth int) any {
	out := map[string]any{}
	props, _ := m["properties"].(map[string]any)
	required := map[string]bool{}
	for _, r := range asList(m["required"]) {
		required[r.(string)] = true
	}
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if required[name] && !g.chance(0.1) || !required[name] && g.rng.IntN(2) == 0 && depth < 6 {
			out[name] = g.value(props[name], depth+1)
		}
	}
	if ap, ok := m["additionalProperties"].(map[string]any); ok && depth < 6 {
		for i := range g.rng.IntN(3) {
			out[fmt.Sprintf("k%d", i)] = g.value(ap, depth+1)
		}
	}
	if g.chance(0.1) {
		out["unexpected"] = "x"
	}
	return out
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func (g *Gen) count(m map[string]any, minKey, maxKey string, dflt int) int {
	lo, hi := 0, dflt
	if n, ok := m[minKey].(float64); ok {
		lo = int(n)
		if hi < lo {
			hi = lo + 2
		}
	}
	if n, ok := m[maxKey].(float64); ok {
		hi = int(n)
	}
	if g.chance(0.15) {
		return max(0, []int{lo - 1, hi + 1}[g.rng.IntN(2)])
	}
	hi = min(hi, lo+5) // long enough to matter, short enough to be quick
	if hi < lo {
		return lo
	}
	return lo + g.rng.IntN(hi-lo+1)
}

// FormatSamples returns strings for each format the runtime checks, valid and not,
// keyed by format: the documents' strings, and a test's list of awkward cases.
func FormatSamples() map[string][]string {
	return map[string][]string{
		"date":      {"2024-02-29", "2023-02-29", "2024-13-01", "2024-1-01", "2024-01-01x", "0000-02-29", "1900-02-29", "2000-02-29", "2024-04-31", "2024-00-10"},
		"date-time": {"2024-01-01T10:00:00Z", "2024-01-01T10:00:00+02:00", "2024-01-01 10:00", "2024-01-01T23:59:60Z", "2024-01-01T10:00:00.5-01:30", "2024-01-01T24:00:00Z"},
		"time":      {"10:00:00Z", "23:59:60+00:00", "10:00:00", "1:00:00Z", "00:59:60+01:00", "+1:00:00Z", "10:00:00.123z", "10:00:00.+01:00", "24:00:00Z", "10:00:00+24:00"},
		"email":     {"a@example.com", "a.b@c.d", "no-at-sign", "a..b@c.d", `"q"@x.io`, "a@[10.0.0.1]", "a@-x.com", "a@[IPv6:::1]", "a@[IPv6:1::2::3]", "a@[IPv6:1.2.3.4]", "a@[IPv6:fe80::1%x]"},
		"hostname":  {"example.com", "-bad.com", "a_b.com", "x."},
		"uuid":      {"123e4567-e89b-12d3-a456-426614174000", "123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456-42661417400g"},
		"uri": {"https://example.com/x?y=1", "relative/path", "mailto:a@b.c", "http://[::1]:80/", "http://a b/", "1http://x", "https://x/%zz",
			"http://x:y:80", "ftp://a:b:80/", "http://u@ser:p@h/", "http://h/#%g", "a:b", ":x", "*", "http://[1.2.3.4]/",
			"http://[fe80::1%25en0]/", "http://%41/", "http://%c3%a9/", "http://[::1", "http://h:80x/", "http://a^b/", "http://us er@h/",
			"http://[fe80::1%25]/", "http://[fe80::1%25%00]/", "http://[fe80::1%25a%20b]/", "http://[::ffff:1.2.3.4]/", "http://[1::2::3]/", "http://[v1.x]/", "http://[::1]x/"},
		"uri-reference":         {"/a/b?c#d", `a\b`, "http://x/%zz", "//h:x/", "a:b/c", "rel:x", "?q", "#f%2"},
		"json-pointer":          {"/a/b~0~1", "", "a/b", "/~2", "/a~", "/~~0"},
		"relative-json-pointer": {"0/a", "1#", "01/a", "#", "2/~x", "10"},
		"duration":              {"P1Y2M3DT4H5M6S", "P", "PT", "P1W", "PW", "P1xW", "P1DT", "PT1H1M1S1", "P1M1Y", "P1Q", "PT1HT1M", "P1", "PYD"},
		"period":                {"2024-01-01T00:00:00Z/P1D", "P1D/2024-01-02T00:00:00Z", "2024-01-01T00:00:00Z/2024-02-01T00:00:00Z", "2024-01-01", "P1X/2024-01-01T00:00:00Z", "2024-01-01T00:00:00Z/P", "x/y"},
		"semver":                {"1.2.3", "1.2.3-rc.1+build.5", "1.2", "01.2.3", "1.2.3-", "1.2.3-01", "1.2.3+", "1.2.3+a..b", "1.2.x", "1.2.3-a_b", ".1.2", "1..2"},
		"ipv6": {"::1", "1::", "::", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8:9", "1::2::3", "::ffff:1.2.3.4", "1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:1.2.3.4",
			"::1.2.3", "::01.2.3.4", "::256.1.1.1", "fe80::1%en0", "fe80::1%", "12345::", "1:", ":1", "1:2:3:4:5:6:7::", "::1.2.3.4.5", "%x", "1.2.3.4", "1:2:3:4:5:6:7:8::", "g::", "::1..2.3"},
		"ipv4": {"10.0.0.1", "256.1.1.1", "01.2.3.4", "+1.2.3.4", "1.2.3"},
	}
}

func (g *Gen) str(m map[string]any) string {
	if f, ok := m["format"].(string); ok {
		if s := g.formats[f]; len(s) > 0 {
			if g.Mutate {
				return s[g.rng.IntN(len(s))]
			}
			return s[0]
		}
	}
	if p, ok := m["pattern"].(string); ok && !g.chance(0.5) {
		// Patterns in the golden cases are simple; these candidates cover them.
		for _, c := range []string{"DE", "2024", "2024-Q3", "INV-2024-000123", "AB-123", "my-bucket.1", "pay_AbCd1234", "1234", "ab-12", "EUR", "mug-001"} {
			if ok, _ := regexp.MatchString(p, c); ok {
				return c
			}
		}
	}
	n := g.count(m, "minLength", "maxLength", 6)
	runes := []rune("aé€𝄞bZ<&'\"\\\n")
	var b strings.Builder
	for range n {
		b.WriteRune(runes[g.rng.IntN(len(runes))])
	}
	return b.String()
}

func (g *Gen) num(m map[string]any, integer bool) any {
	lo, hi := -50.0, 50.0
	if v, ok := m["minimum"].(float64); ok {
		lo = v
	}
	if v, ok := m["exclusiveMinimum"].(float64); ok {
		lo = v + 1
	}
	if v, ok := m["maximum"].(float64); ok {
		hi = v
	}
	if v, ok := m["exclusiveMaximum"].(float64); ok {
		hi = v - 1
	}
	if hi < lo {
		hi = lo
	}
	x := lo + g.rng.Float64()*(hi-lo)
	if g.chance(0.2) {
		x = []float64{lo - 1, hi + 1, lo, hi, 0.5}[g.rng.IntN(5)]
	}
	if v, ok := m["multipleOf"].(float64); ok && !g.chance(0.3) {
		x = float64(int64(x/v)) * v
	}
	if integer && !g.chance(0.1) {
		return json.Number(strconv.FormatInt(int64(x), 10))
	}
	b, _ := json.Marshal(x) // as Go writes a float64
	return json.Number(b)
}
