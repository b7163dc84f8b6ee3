package samples_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/jobc-dev/jobc/generator/internal/samples"
	"github.com/jobc-dev/jobc/internal/dialect"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func encoded(t *testing.T, docs []any) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, d := range docs {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		out[string(b)] = true
	}
	return out
}

// TestDocumentsCoverTheSchema: boundaries, every enum value, an optional field present
// and absent, formats and nested arrays each appear in some sample.
func TestDocumentsCoverTheSchema(t *testing.T) {
	schema := decode(t, `{"type":"object","additionalProperties":false,"required":["n","kind"],
		"properties":{
			"n":{"type":"integer","minimum":3,"maximum":10},
			"kind":{"enum":["a","b","c"]},
			"at":{"type":"string","format":"date-time"},
			"tags":{"type":"array","minItems":1,"maxItems":2,"items":{"type":"array","items":{"type":"string","maxLength":2}}}}}`)
	docs, err := samples.Documents(schema)
	if err != nil {
		t.Fatal(err)
	}
	got := encoded(t, docs)
	for _, want := range []string{
		`{"kind":"a","n":3}`,                             // the base: required fields only, n at its minimum
		`{"kind":"a","n":10}`,                            // maximum
		`{"kind":"c","n":3}`,                             // every enum value
		`{"at":"2026-01-02T03:04:05Z","kind":"a","n":3}`, // optional present, with its format
		`{"kind":"a","n":3,"tags":[["aa"],["aa"]]}`,      // nested arrays, at maxItems and maxLength
	} {
		if !got[want] {
			t.Errorf("no sample %s among\n%v", want, got)
		}
	}
	for doc := range got {
		if strings.Contains(doc, `"n":2`) || strings.Contains(doc, `"n":11`) {
			t.Errorf("sample %s is outside the bounds", doc)
		}
	}
}

// TestDocumentsAreValid: every sample of a schema with $ref, oneOf and bounds that the
// walk only approximates is valid.
func TestDocumentsAreValid(t *testing.T) {
	raw := `{"$defs":{"money":{"type":"object","required":["cents"],"properties":{"cents":{"type":"integer","exclusiveMinimum":0,"multipleOf":5}}}},
		"type":"object","required":["price"],"properties":{"price":{"$ref":"#/$defs/money"},
		"id":{"oneOf":[{"type":"string","format":"uuid"},{"type":"integer","minimum":1}]},
		"code":{"type":"string","minLength":2,"maxLength":4,"pattern":"^b"}}}`
	docs, err := samples.Documents(decode(t, raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) < 4 {
		t.Fatalf("only %d samples: %v", len(docs), docs)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("s.json", decode(t, raw)); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("s.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		b, _ := json.Marshal(d)
		if err := s.Validate(decode(t, string(b))); err != nil {
			t.Errorf("invalid sample %s: %v", b, err)
		}
	}
}

// TestDocumentsMatchPatterns: a string with a pattern gets values that match it.
func TestDocumentsMatchPatterns(t *testing.T) {
	docs, err := samples.Documents(decode(t, `{"type":"object","required":["sku"],"properties":{"sku":{"type":"string","pattern":"^[A-Z0-9-]{3,32}$"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got := encoded(t, docs)
	for _, want := range []string{`{"sku":"---"}`, `{"sku":"--------------------------------"}`} {
		if !got[want] {
			t.Errorf("no sample %s among %v", want, got)
		}
	}
}

// TestEveryFormatHasSamples: a required property of any format the runtime checks
// still yields documents, so jobc check exercises the upcasts of such a schema. A
// format without examples used to leave nothing but invalid strings to try.
func TestEveryFormatHasSamples(t *testing.T) {
	for _, f := range dialect.Formats(dialect.Go) {
		schema := decode(t, `{"type":"object","required":["v"],"properties":{"v":{"type":"string","format":"`+f+`"}}}`)
		docs, err := samples.Documents(schema)
		if err != nil {
			t.Fatal(err)
		}
		if len(docs) == 0 {
			t.Errorf("format %s: no sample documents", f)
		}
	}
}
