package schema_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/jobc-dev/jobc/generator/spec"
	"github.com/jobc-dev/jobc/runtime/internal/schema"
)

// The JSON Schema library is the oracle: for every payload schema of every golden
// success case, this package must accept exactly the documents the library accepts and
// report problems at the same JSON pointers.

// everyKeyword are schemas that use every keyword the runtime validates, in case the
// golden cases and examples leave some out.
var everyKeyword = []string{
	`{"type":"object","additionalProperties":false,"required":["a","b"],"minProperties":2,"maxProperties":6,
	  "properties":{
	    "a":{"type":"number","exclusiveMinimum":0.5,"exclusiveMaximum":10,"multipleOf":0.25},
	    "b":{"type":"integer","minimum":-3,"maximum":3},
	    "c":{"type":"array","items":{"type":"integer","multipleOf":3},"minItems":1,"maxItems":4,"uniqueItems":true},
	    "d":{"type":["string","null"],"minLength":2,"maxLength":3},
	    "e":{"const":"fixed"},
	    "f":{"enum":[1,"two",null]},
	    "g":{"$ref":"#/$defs/inner"},
	    "h":{"type":"object","additionalProperties":{"type":"integer","exclusiveMinimum":1}}},
	  "$defs":{"inner":{"type":"object","required":["x"],"properties":{"x":{"type":"string","format":"date"}}}}}`,
	`{"type":"object","properties":{"list":{"type":"array","uniqueItems":true,
	  "items":{"type":"object","properties":{"n":{"type":"number","multipleOf":1.5}}}}}}`,
}

type pair struct {
	name   string
	json   []byte
	ours   *schema.Schema
	oracle *jsonschema.Schema
}

func goldenSchemas(t testing.TB) []pair {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "*"))
	if err != nil {
		t.Fatal(err)
	}
	examples, err := filepath.Glob(filepath.Join("..", "..", "..", "examples", "*"))
	if err != nil {
		t.Fatal(err)
	}
	dirs = append(dirs, examples...)
	var out []pair
	for i, canon := range everyKeyword {
		name := fmt.Sprintf("every_keyword/%d", i)
		ours, err := schema.Compile([]byte(canon))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, pair{name: name, json: []byte(canon), ours: ours, oracle: compileOracle(t, []byte(canon))})
	}
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, "error.txt")); err == nil {
			continue // an error case: it has no schema that compiles
		}
		if _, err := os.Stat(filepath.Join(dir, "jobc.yaml")); err != nil {
			continue
		}
		p, err := spec.Load(dir)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, j := range p.Jobs {
			for _, v := range j.Payload.Versions {
				canon, err := v.Schema.Canonical()
				if err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("%s/%s/v%d", filepath.Base(dir), j.Kind, v.Number)
				ours, err := schema.Compile(canon)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				out = append(out, pair{name: name, json: canon, ours: ours, oracle: compileOracle(t, canon)})
			}
		}
	}
	if len(out) < 20 {
		t.Fatalf("found %d schemas in the golden cases, want at least 20", len(out))
	}
	return out
}

func compileOracle(t testing.TB, canon []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(canon))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource("jobc:///p.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("jobc:///p.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// oracleFields is the sorted, distinct JSON pointers the library reports, nil if valid.
func oracleFields(s *jsonschema.Schema, doc any) []string {
	err := s.Validate(doc)
	if err == nil {
		return nil
	}
	fields := []string{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			f := ""
			if len(e.InstanceLocation) > 0 {
				f = "/" + strings.Join(e.InstanceLocation, "/")
			}
			fields = append(fields, f)
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{"(not a validation error: " + err.Error() + ")"}
	}
	walk(ve)
	sort.Strings(fields)
	return slices.Compact(fields)
}

func ourFields(ps []schema.Problem) []string {
	if len(ps) == 0 {
		return nil
	}
	fields := []string{}
	for _, p := range ps {
		fields = append(fields, p.Field)
		if p.Message == "" {
			fields = append(fields, "(empty message at "+p.Field+")")
		}
	}
	sort.Strings(fields)
	return slices.Compact(fields)
}

// compare checks one document against both validators; it returns whether the
// document was valid.
func compare(t testing.TB, p pair, data []byte) bool {
	t.Helper()
	oracleDoc, oracleErr := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	doc, err := schema.Decode(data)
	if (oracleErr == nil) != (err == nil) {
		t.Fatalf("%s: %s\nparsing: library %v, ours %v", p.name, data, oracleErr, err)
	}
	if err != nil {
		return false
	}
	want := oracleFields(p.oracle, oracleDoc)
	ps := p.ours.Validate(doc)
	if got := ourFields(ps); !slices.Equal(got, want) {
		t.Fatalf("%s\nschema %s\ndocument %s\nproblems at %q %v, library at %q", p.name, p.json, data, got, ps, want)
	}
	return want == nil
}

func TestAgreesWithLibraryOnGoldenSchemas(t *testing.T) {
	for _, p := range goldenSchemas(t) {
		t.Run(p.name, func(t *testing.T) {
			var tree any
			if err := json.Unmarshal(p.json, &tree); err != nil {
				t.Fatal(err)
			}
			g := &gen{root: tree.(map[string]any), rng: rand.New(rand.NewPCG(1, uint64(len(p.json))))}
			valid, invalid := 0, 0
			for i := range 400 {
				g.mutate = i%2 == 1 // half the documents are built valid, half perturbed
				data, err := json.Marshal(g.value(tree, 0))
				if err != nil {
					t.Fatal(err)
				}
				if compare(t, p, data) {
					valid++
				} else {
					invalid++
				}
			}
			// The generator must exercise both sides, or the comparison proves little.
			if valid == 0 || invalid == 0 {
				t.Errorf("%d valid and %d invalid documents, want some of each", valid, invalid)
			}
		})
	}
}

func FuzzAgreesWithLibrary(f *testing.F) {
	pairs := goldenSchemas(f)
	for i, p := range pairs {
		var tree any
		if err := json.Unmarshal(p.json, &tree); err != nil {
			f.Fatal(err)
		}
		g := &gen{root: tree.(map[string]any), rng: rand.New(rand.NewPCG(2, uint64(i)))}
		for j := range 4 {
			g.mutate = j%2 == 1
			data, _ := json.Marshal(g.value(tree, 0))
			f.Add(uint16(i), data)
		}
	}
	f.Fuzz(func(t *testing.T, which uint16, data []byte) {
		compare(t, pairs[int(which)%len(pairs)], data)
	})
}

// gen builds documents from a schema: valid ones, and with mutate set, ones that break
// a rule now and then (a wrong type, a missing or unknown property, a value past a bound).
type gen struct {
	root   map[string]any
	rng    *rand.Rand
	mutate bool
}

func (g *gen) chance(p float64) bool { return g.mutate && g.rng.Float64() < p }

func (g *gen) value(s any, depth int) any {
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

func (g *gen) resolve(ref string) any {
	var v any = g.root
	for _, tok := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		v = v.(map[string]any)[tok]
	}
	return v
}

func (g *gen) object(m map[string]any, depth int) any {
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

func (g *gen) count(m map[string]any, minKey, maxKey string, dflt int) int {
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

var formatSamples = map[string][]string{
	"date":      {"2024-02-29", "2023-02-29", "2024-13-01"},
	"date-time": {"2024-01-01T10:00:00Z", "2024-01-01T10:00:00+02:00", "2024-01-01 10:00"},
	"email":     {"a@example.com", "a.b@c.d", "no-at-sign", "a..b@c.d"},
	"uuid":      {"123e4567-e89b-12d3-a456-426614174000", "123e4567e89b12d3a456426614174000"},
	"uri":       {"https://example.com/x?y=1", "relative/path", "mailto:a@b.c"},
	"ipv4":      {"10.0.0.1", "256.1.1.1", "01.2.3.4"},
	"time":      {"10:00:00Z", "24:00:00Z", "10:00"},
	"hostname":  {"example.com", "-bad.com"},
	"ipv6":      {"::1", "1::2::3"},
	"duration":  {"P1DT2H", "P1M1Y"},
	"period":    {"2024-01-01T00:00:00Z/P1D", "P1D"},
	"semver":    {"1.2.3", "01.2.3"},

	"uri-reference":         {"/a/b?c#d", "http://x/%zz"},
	"json-pointer":          {"/a/b~0", "a/b"},
	"relative-json-pointer": {"0/a", "01/a"},
}

func (g *gen) str(m map[string]any) string {
	if f, ok := m["format"].(string); ok {
		if s := formatSamples[f]; len(s) > 0 {
			if g.mutate {
				return s[g.rng.IntN(len(s))]
			}
			return s[0]
		}
	}
	if p, ok := m["pattern"].(string); ok && !g.chance(0.5) {
		// Patterns in the golden cases are simple; these candidates cover them.
		for _, c := range []string{"DE", "2024", "2024-Q3", "INV-2024-000123", "AB-123", "my-bucket.1", "pay_AbCd1234", "EUR", "mug-001"} {
			if ok, _ := regexpMatch(p, c); ok {
				return c
			}
		}
	}
	n := g.count(m, "minLength", "maxLength", 6)
	runes := []rune("aé€𝄞bZ")
	var b strings.Builder
	for range n {
		b.WriteRune(runes[g.rng.IntN(len(runes))])
	}
	return b.String()
}

func (g *gen) num(m map[string]any, integer bool) any {
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
		return json.Number(fmt.Sprint(int64(x)))
	}
	return json.Number(fmt.Sprintf("%g", x))
}

func regexpMatch(pattern, s string) (bool, error) { return regexp.MatchString(pattern, s) }
