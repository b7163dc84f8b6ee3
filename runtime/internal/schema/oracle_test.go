package schema_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/jobc-dev/jobc/generator/spec"
	"github.com/jobc-dev/jobc/internal/schemadocs"
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
	`{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"jobc:///every-format.json",
	  "title":"t","description":"d","$comment":"c","examples":[{}],"deprecated":false,"readOnly":false,"writeOnly":false,
	  "type":"object","properties":{
	    "date":{"type":"string","format":"date"},"date-time":{"type":"string","format":"date-time"},
	    "duration":{"type":"string","format":"duration"},"email":{"type":"string","format":"email"},
	    "hostname":{"type":"string","format":"hostname"},"iri":{"type":"string","format":"iri"},
	    "iri-reference":{"type":"string","format":"iri-reference"},"ipv4":{"type":"string","format":"ipv4"},
	    "ipv6":{"type":"string","format":"ipv6"},"json-pointer":{"type":"string","format":"json-pointer"},
	    "period":{"type":"string","format":"period"},"relative-json-pointer":{"type":"string","format":"relative-json-pointer"},
	    "semver":{"type":"string","format":"semver"},"time":{"type":"string","format":"time"},
	    "uri":{"type":"string","format":"uri"},"uri-reference":{"type":"string","format":"uri-reference"},
	    "uuid":{"type":"string","format":"uuid"},"uri-template":{"type":"string","format":"uri-template"},
	    "regex":{"type":"string","format":"regex"},
	    "old":{"$ref":"#/definitions/old"}},
	  "definitions":{"old":{"type":"integer","default":1}}}`,
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

// oracleFields is the sorted, distinct JSON pointers the library reports, nil if
// valid. ok is false when the library cannot judge the document: it panics on a
// number math/big does not parse (1E1000001, a fuzz input), which ours handles (the
// exactness tests hold ours to such numbers).
func oracleFields(s *jsonschema.Schema, doc any) (fields []string, ok bool) {
	defer func() {
		if recover() != nil {
			fields, ok = nil, false
		}
	}()
	return oracleValidate(s, doc), true
}

func oracleValidate(s *jsonschema.Schema, doc any) []string {
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
	want, ok := oracleFields(p.oracle, oracleDoc)
	if !ok {
		return false
	}
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
			g := schemadocs.New(tree.(map[string]any), rand.New(rand.NewPCG(1, uint64(len(p.json)))))
			valid, invalid := 0, 0
			for i := range 400 {
				g.Mutate = i%2 == 1 // half the documents are built valid, half perturbed
				data, err := json.Marshal(g.Document())
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
		g := schemadocs.New(tree.(map[string]any), rand.New(rand.NewPCG(2, uint64(i))))
		for j := range 4 {
			g.Mutate = j%2 == 1
			data, _ := json.Marshal(g.Document())
			f.Add(uint16(i), data)
		}
	}
	f.Fuzz(func(t *testing.T, which uint16, data []byte) {
		compare(t, pairs[int(which)%len(pairs)], data)
	})
}
