package schema_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/runtime/internal/schema"
)

// TestExact: what would not reach a worker exactly is named at its JSON pointer, and
// what would is left alone; Check never vouches for a document Exact refuses.
func TestExact(t *testing.T) {
	s, err := schema.Compile([]byte(`{"type":"object","properties":{
		"i":{"type":"integer"},"f":{"type":"number"},"o":{"type":"integer","enum":[1,2]},
		"r":{"$ref":"#/$defs/int"},"l":{"type":"array","items":{"type":"integer"}},
		"m":{"type":"object","additionalProperties":{"type":"number"}},"any":{},
		"s":{"type":"string"}},"$defs":{"int":{"type":"integer"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	deep := strings.Repeat("[", schema.MaxDepth) + strings.Repeat("]", schema.MaxDepth)
	deeper := strings.Repeat("[", schema.MaxDepth+1) + strings.Repeat("]", schema.MaxDepth+1)
	const (
		fraction = "integer written with a fractional part, which Go's int64 does not decode"
		intRange = "integer out of int64 range"
		big      = "number out of float64 range"
		tiny     = "number too small for float64, which would round it to 0"
		numeric  = "number out of PostgreSQL's numeric range"
		nul      = `NUL character (\u0000), which PostgreSQL cannot store`
		utf8     = "invalid UTF-8"
	)
	for doc, want := range map[string][]string{
		`{"i":1,"f":1.5,"s":"é\u00e9\ufffd","any":1e400}`:                     nil,
		`{"i":1e2,"f":1e-300,"l":[9223372036854775807,-9223372036854775808]}`: nil, // 1e2 is stored 100
		`{"i":1.0}`:                          {"/i: " + fraction},
		`{"i":100e-2}`:                       {"/i: " + fraction}, // stored 1.00
		`{"i":1.5}`:                          nil,                 // not an integer: Validate says so
		`{"i":9223372036854775808}`:          {"/i: " + intRange},
		`{"l":[1,-9223372036854775809,2.0]}`: {"/l/1: " + intRange, "/l/2: " + fraction},
		`{"r":1e19}`:                         {"/r: " + intRange},
		`{"o":3.0}`:                          {"/o: " + fraction},
		`{"f":1e400,"m":{"a":-1e309,"b":1e-400,"c":0e-400}}`: {"/f: " + big, "/m/a: " + big, "/m/b: " + tiny},
		`{"any":1e131072}`: {"/any: " + numeric},
		`{"any":1e-16384}`: {"/any: " + numeric},
		// numeric_in refuses an exponent of INT_MAX/2 or more whatever the digits.
		`{"any":0e1073741823,"z":0e1073741822,"n":0e-1073741823}`: {"/any: " + numeric, "/n: " + numeric},
		`{"s":"a\u0000","x":{"\u0000":1}}`:                        {"/s: " + nul, "/x/\x00: " + nul},
		"{\"s\":\"\xff\",\"\xfe\":1}":                             {"/s: " + utf8, "/\ufffd: invalid UTF-8 in the property name"},
		`{"s":"\ud800"}`:                                          {"/s: lone UTF-16 surrogate in a \\u escape"},
		`{"s":1.0}`:                                               nil, // a string's place types nothing inside
		`[` + deep + `]`:                                          {"/0/" + strings.Repeat("0/", schema.MaxDepth-2) + "0: nested deeper than 64 levels"},
		`{"b":` + deeper + `,"a":` + deeper + `,"i":1.0}`:         {"/a/" + strings.Repeat("0/", schema.MaxDepth-2) + "0: nested deeper than 64 levels"},
		`{"any":` + deep[1:len(deep)-1] + `}`:                     nil,
	} {
		var got []string
		for _, p := range s.Exact([]byte(doc)) {
			got = append(got, p.Field+": "+p.Message)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%.80s:\n  got  %q\n  want %q", doc, got, want)
		}
		if len(want) > 0 && s.Check([]byte(doc)) != schema.Unsure {
			t.Errorf("%.80s: Check vouches for it", doc)
		}
	}
	if fmt.Sprint(schema.MaxDepth) != "64" {
		t.Errorf("MaxDepth %d: the message and schema/library (jobc_payload_too_deep) say 64", schema.MaxDepth)
	}
}

// Exact reads a document it has nothing to say of with one allocation, the tokens of
// the pointer it keeps: Enqueue runs it on every payload that takes the decoding path.
func TestExactDoesNotAllocate(t *testing.T) {
	s, err := schema.Compile([]byte(`{"type":"object","properties":{"id":{"type":"integer"},"q":{"type":"number"},
		"tags":{"type":"array","items":{"type":"string"}},"extra":{}}}`))
	if err != nil {
		t.Fatal(err)
	}
	doc := []byte(`{"id":42,"q":0.85,"tags":["a","b\n"],"extra":{"x":[1,{"y":null}],"z":true},"w":"é"}`)
	if ps := s.Exact(doc); len(ps) > 0 {
		t.Fatal(ps)
	}
	if n := testing.AllocsPerRun(100, func() { s.Exact(doc) }); n > 1 {
		t.Errorf("Exact allocates %v times, want 1", n)
	}
}
