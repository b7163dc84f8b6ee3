package schema_test

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/jobc-dev/jobc/internal/schemadocs"
	"github.com/jobc-dev/jobc/runtime/internal/schema"
)

// Check is the fast path in front of Decode and Validate: whenever it vouches for a
// document, they must accept it, and FillDefaults must agree on whether it changes
// anything.

// checkAgrees holds Check's verdict on data to Decode, Validate and FillDefaults, and
// returns the verdict and whether the slow path accepts the document.
func checkAgrees(t testing.TB, s *schema.Schema, data []byte) (schema.Verdict, bool) {
	t.Helper()
	v := s.Check(data)
	doc, err := schema.Decode(data)
	valid := err == nil && len(s.Validate(doc)) == 0
	if v == schema.Unsure {
		return v, valid
	}
	if err != nil {
		t.Fatalf("%s: Check says %v, Decode: %v", data, v, err)
	}
	if ps := s.Validate(doc); len(ps) > 0 {
		t.Fatalf("%s: Check says %v, Validate: %v", data, v, ps)
	}
	if filled := s.FillDefaults(doc); filled != (v == schema.ValidNeedsDefaults) {
		t.Fatalf("%s: Check says %v, FillDefaults changed it: %v", data, v, filled)
	}
	return v, valid
}

// corpus is the documents the oracle test draws for a schema: half built valid, half
// perturbed.
func corpus(t testing.TB, p pair, seed uint64, n int) [][]byte {
	t.Helper()
	var tree any
	if err := json.Unmarshal(p.json, &tree); err != nil {
		t.Fatal(err)
	}
	g := schemadocs.New(tree.(map[string]any), rand.New(rand.NewPCG(seed, uint64(len(p.json)))))
	docs := make([][]byte, n)
	for i := range docs {
		g.Mutate = i%2 == 1
		data, err := json.Marshal(g.Document())
		if err != nil {
			t.Fatal(err)
		}
		docs[i] = data
	}
	return docs
}

func TestCheckAgreesOnGoldenSchemas(t *testing.T) {
	valid, vouched := 0, 0
	for _, p := range goldenSchemas(t) {
		t.Run(p.name, func(t *testing.T) {
			for _, data := range corpus(t, p, 3, 400) {
				v, ok := checkAgrees(t, p.ours, data)
				if ok {
					valid++
				}
				if v != schema.Unsure {
					vouched++
				}
			}
		})
	}
	// The fast path must take (nearly) every valid document of the golden schemas, or
	// it only adds work in front of the slow one.
	t.Logf("Check vouched for %d of %d valid documents", vouched, valid)
	if valid == 0 || float64(vouched) < 0.95*float64(valid) {
		t.Errorf("Check vouched for %d of %d valid documents, want at least 95%%", vouched, valid)
	}
}

func FuzzCheckAgreesWithValidate(f *testing.F) {
	pairs := goldenSchemas(f)
	for i, p := range pairs {
		for _, data := range corpus(f, p, 4, 4) {
			f.Add(uint16(i), data)
		}
	}
	f.Fuzz(func(t *testing.T, which uint16, data []byte) {
		checkAgrees(t, pairs[int(which)%len(pairs)].ours, data)
	})
}

// The tricky parts of reading JSON in place. Each case is also held to the slow path.
func TestCheck(t *testing.T) {
	const (
		valid    = schema.Valid
		defaults = schema.ValidNeedsDefaults
		unsure   = schema.Unsure
	)
	for _, tc := range []struct {
		schema string
		docs   map[string]schema.Verdict
	}{
		{`{"type":"string","maxLength":1}`, map[string]schema.Verdict{
			`"é"`:              valid,
			`"\u00e9"`:         valid,
			`"\ud83d\ude00"`:   valid, // a surrogate pair is one code point
			`"\uD83D\uDE00"`:   valid,
			`"\ud83d"`:         unsure, // a lone surrogate: encoding/json makes it U+FFFD
			`"\ud83dx"`:        unsure,
			`"\ud83d\u0041"`:   unsure,
			`"\ude00\ud83d"`:   unsure,
			`"\u00e9\u00e9"`:   unsure, // two code points
			`"\u0000"`:         unsure, // a NUL: PostgreSQL refuses it, Exact names it
			`"\x"`:             unsure,
			`"\u00g0"`:         unsure,
			`"\u00e"`:          unsure,
			"\"\x01\"":         unsure, // a raw control character
			"\"\xff\"":         unsure, // invalid UTF-8: encoding/json makes it U+FFFD
			"\"\xed\xa0\x80\"": unsure, // a surrogate encoded as UTF-8
			`"a`:               unsure,
			`"\`:               unsure,
		}},
		{`{"type":"string","pattern":"^a\"b/c\\\\d\n$"}`, map[string]schema.Verdict{
			`"a\"b\/c\\d\n"`:    valid, // the pattern sees the string unescaped
			`"a\"b/c\\d\u000a"`: valid,
			`"a\"b/c\\d"`:       unsure,
		}},
		{`{"enum":["<b>","x"]}`, map[string]schema.Verdict{
			`"\u003cb\u003e"`: valid, // as json.Marshal escapes HTML
			`"x"`:             valid,
			`"y"`:             unsure,
			`1`:               unsure,
		}},
		{`{"type":"integer"}`, map[string]schema.Verdict{
			// What is not an int64 as written is left to Exact (1.0 stays 1.0 in
			// PostgreSQL, which int64 does not decode; 1e2 becomes 100, which it does).
			`1`: valid, `1.0`: unsure, `1e2`: unsure, `1E+2`: unsure, `-0`: valid, `100e-2`: unsure,
			`123456789012345678901234567890`: unsure, // past int64
			`1.5`:                            unsure, `1e-2`: unsure, `"1"`: unsure,
			`01`: unsure, `1.`: unsure, `.5`: unsure, `+1`: unsure, `-`: unsure, `1e`: unsure, `1e+`: unsure, `--1`: unsure, `0x1`: unsure,
		}},
		{`{"type":"number","minimum":-0.5,"exclusiveMaximum":9223372036854775808,"multipleOf":0.1}`, map[string]schema.Verdict{
			`0.3`: valid, `-0`: valid, `-0.5`: valid, `9223372036854775807`: valid, `9223372036854775800`: valid,
			`-0.6`: unsure, `0.35`: unsure, `9223372036854775808`: unsure,
		}},
		{`{"exclusiveMinimum":0}`, map[string]schema.Verdict{`-0`: unsure, `0.0`: unsure, `1e-400`: unsure, `"s"`: valid}},
		{`{"const":1}`, map[string]schema.Verdict{`1.0`: valid, `1`: valid, `2`: unsure, `"1"`: unsure}},
		{`{"type":"array","uniqueItems":true}`, map[string]schema.Verdict{
			`[1,2,"1",true,false,null,"a"]`: valid,
			`[1,1.0]`:                       unsure, `[0,-0]`: unsure, `[1,1]`: unsure, `[1e0,1]`: unsure, `[0.5,5e-1]`: unsure,
			`["a","a"]`: unsure, `["a","\u0061"]`: unsure, `["\u0061","a"]`: unsure, `[null,null]`: unsure,
			`[{},{"a":1}]`:   unsure, // objects and arrays are left to the tree validator
			`["\u0061","b"]`: valid,
			`[[1],[[1]]]`:    unsure,
		}},
		{`{"type":"object","properties":{"a":{"type":"integer"}}}`, map[string]schema.Verdict{
			`{"a":1,"a":"x"}`:     unsure, // duplicate keys: Decode keeps the last
			`{"b":1,"b":2}`:       unsure,
			`{"\u0061":1}`:        valid,
			`{"\u0061":"x"}`:      unsure,
			`{"\u0062":1}`:        unsure, // an unknown key with an escape
			`{"b":{"c":1,"c":1}}`: unsure,
		}},
		{`{"type":"object","required":["a","z"],"properties":{"a":{}}}`, map[string]schema.Verdict{
			`{"a":1,"z":2}`: valid, `{"z":2,"a":1}`: valid, `{"a":1}`: unsure, `{"z":1}`: unsure,
		}},
		{`{"type":"object","additionalProperties":false,"properties":{"a":{"$ref":"#/$defs/n"}},"$defs":{"n":{"type":"integer","maximum":3}}}`, map[string]schema.Verdict{
			`{"a":3}`: valid, `{"a":4}`: unsure, `{"b":1}`: unsure, `{}`: valid,
		}},
		{`{"properties":{"a":{"$ref":"#/$defs/n","minimum":0}},"$defs":{"n":{"type":"integer"}}}`, map[string]schema.Verdict{
			`{"a":3}`: unsure, // a $ref beside other rules is left to the tree validator
		}},
		{`{"type":"object","minProperties":1,"maxProperties":2,"additionalProperties":{"type":"boolean"}}`, map[string]schema.Verdict{
			`{"a":true}`: valid, `{}`: unsure, `{"a":true,"b":false,"c":true}`: unsure, `{"a":1}`: unsure,
		}},
		{`{"type":"array","minItems":1,"maxItems":2,"items":{"type":"null"}}`, map[string]schema.Verdict{
			`[null]`: valid, `[]`: unsure, `[null,null,null]`: unsure, `[0]`: unsure,
			`[null,]`: unsure, `[,null]`: unsure, `[null null]`: unsure, `[null`: unsure,
		}},
		{`true`, map[string]schema.Verdict{
			` {"a" : [ 1 , {"b":"c"} ] , "d":null}`:               valid,
			" \t\r\n{ \t\r\n\"a\" \t\r\n: \t\r\n1 \t\r\n} \t\r\n": valid, // every kind of JSON space
			"\f{}": unsure, "{}\u00a0": unsure,
			``: unsure, ` `: unsure,
			`{} {}`: unsure, `{}x`: unsure, `1 2`: unsure, `{}]`: unsure, `nul`: unsure, `truex`: unsure, `[tru]`: unsure,
			`{"a":1,}`: unsure, `{"a" 1}`: unsure, `{a:1}`: unsure, `{"a":1`: unsure, "\xef\xbb\xbf{}": unsure,
		}},
		{`false`, map[string]schema.Verdict{`{}`: unsure}},
		{`{"properties":{"n":{"type":"integer","default":3},"o":{"properties":{"g":{"default":"c"}}},
		   "l":{"type":"array","items":{"$ref":"#/$defs/i"}}},"$defs":{"i":{"properties":{"q":{"default":0.5}}}}}`, map[string]schema.Verdict{
			`{"n":1}`:                      valid,
			`{}`:                           defaults,
			`{"n":1,"o":{}}`:               defaults,
			`{"n":1,"o":{"g":"x"}}`:        valid,
			`{"n":1,"l":[{"q":1},{}]}`:     defaults,
			`{"n":1,"l":[{"q":1}],"x":{}}`: valid,
			`{"n":1.5}`:                    unsure,
		}},
	} {
		s, err := schema.Compile([]byte(tc.schema))
		if err != nil {
			t.Fatalf("%s: %v", tc.schema, err)
		}
		for doc, want := range tc.docs {
			if got, _ := checkAgrees(t, s, []byte(doc)); got != want {
				t.Errorf("schema %s, document %s: got %v, want %v", tc.schema, doc, got, want)
			}
		}
	}
}

// The common documents cost no allocation: no strings or keys of their own, no
// numbers beyond int64 arithmetic.
func TestCheckDoesNotAllocate(t *testing.T) {
	s, err := schema.Compile([]byte(`{"type":"object","additionalProperties":false,"required":["id","owner"],
		"properties":{"id":{"type":"integer","minimum":1},"owner":{"type":"string","minLength":1,"maxLength":200,"pattern":"^[a-z][a-z0-9_]*$"},
		"kind":{"enum":["a","b"]},"sizes":{"type":"array","items":{"type":"integer","maximum":4096}},
		"crop":{"$ref":"#/$defs/crop"},"note":{"type":["string","null"]},"flag":{"type":"boolean","default":false}},
		"$defs":{"crop":{"type":"object","properties":{"x":{"type":"integer"},"gravity":{"type":"string"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	doc := []byte(`{"id":42,"owner":"user_42","kind":"b","sizes":[128,2048],"crop":{"x":-3,"gravity":"north"},"note":null,"flag":true}`)
	if v := s.Check(doc); v != schema.Valid {
		t.Fatalf("Check says %v, want Valid", v)
	}
	if n := testing.AllocsPerRun(100, func() { s.Check(doc) }); n != 0 {
		t.Errorf("Check allocates %v times, want 0", n)
	}
}

// benchSchemas are golden schemas for the benchmarks: a small payload, one with $refs
// and money, and a large one with formats, nested objects and arrays.
var benchSchemas = []string{"quickstart/send_welcome_email/v1", "defs_refs/transfer_funds/v1", "shop/send_order_confirmation/v2"}

// benchDocs returns, per bench schema, the schema and the longest of its generated
// documents that Check vouches for.
func benchDocs(b *testing.B) map[string]struct {
	s   *schema.Schema
	doc []byte
} {
	out := map[string]struct {
		s   *schema.Schema
		doc []byte
	}{}
	for _, p := range goldenSchemas(b) {
		if !slices.Contains(benchSchemas, p.name) {
			continue
		}
		var doc []byte
		for _, data := range corpus(b, p, 5, 100) {
			if p.ours.Check(data) == schema.Valid && len(data) > len(doc) {
				doc = data
			}
		}
		out[p.name] = struct {
			s   *schema.Schema
			doc []byte
		}{p.ours, doc}
	}
	if len(out) != len(benchSchemas) {
		b.Fatalf("found %d of the bench schemas %q", len(out), benchSchemas)
	}
	return out
}

// BenchmarkCheck is the fast path: one pass over the bytes.
func BenchmarkCheck(b *testing.B) {
	docs := benchDocs(b)
	for _, name := range benchSchemas {
		d := docs[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(d.doc)))
			b.ReportAllocs()
			for b.Loop() {
				if d.s.Check(d.doc) != schema.Valid {
					b.Fatal("not valid")
				}
			}
		})
	}
}

// BenchmarkDecodeValidate is the slow path Check stands in front of.
func BenchmarkDecodeValidate(b *testing.B) {
	docs := benchDocs(b)
	for _, name := range benchSchemas {
		d := docs[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(d.doc)))
			b.ReportAllocs()
			for b.Loop() {
				doc, err := schema.Decode(d.doc)
				if err != nil || len(d.s.Validate(doc)) > 0 {
					b.Fatal("not valid")
				}
			}
		})
	}
}
