package schema_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/internal/dialect"
	"github.com/jobc-dev/jobc/runtime/internal/schema"
)

// The runtime compiles exactly the dialect jobc generate accepts: a keyword the table
// does not give to Go, a word that is no keyword and a root-only keyword below the
// root are refused, so a hand-written JobType is never checked by less than its
// schema says.
func TestCompileFollowsTheDialect(t *testing.T) {
	for _, k := range dialect.Keywords() {
		doc := fmt.Sprintf(`{%q:%s}`, k.Name, sampleValue(k))
		_, err := schema.Compile([]byte(doc))
		refused := k.Class == dialect.Unsupported || (k.Class == dialect.Assertion && !k.Supports(dialect.Go))
		switch {
		case refused && (err == nil || !strings.Contains(err.Error(), "keyword "+k.Name+" is not supported")):
			t.Errorf("%s: err = %v, want the keyword refused", doc, err)
		case !refused && err != nil:
			t.Errorf("%s: %v", doc, err)
		}
		if !k.RootOnly {
			continue
		}
		nested := fmt.Sprintf(`{"properties":{"a":{%q:%s}}}`, k.Name, sampleValue(k))
		want := `schema at "#/properties/a": keyword ` + k.Name + ` is only allowed at the top of a schema`
		if _, err := schema.Compile([]byte(nested)); err == nil || err.Error() != want {
			t.Errorf("%s: err = %v, want %s", nested, err, want)
		}
	}
	const typo = `{"type":"string","maxLenght":3}`
	if _, err := schema.Compile([]byte(typo)); err == nil || err.Error() != `schema at "#": unknown keyword maxLenght` {
		t.Errorf("%s: err = %v, want the unknown keyword refused", typo, err)
	}
}

// sampleValue is a well-formed value of keyword k.
func sampleValue(k dialect.Keyword) string {
	switch k.Value {
	case dialect.Types:
		return `"string"`
	case dialect.String:
		if k.Name == "$ref" {
			return `"#"`
		}
		return `"x"`
	case dialect.Boolean:
		return "true"
	case dialect.List, dialect.Strings:
		return `["a"]`
	case dialect.Count, dialect.Number, dialect.Positive:
		return "1"
	case dialect.SchemaList:
		return "[{}]"
	}
	return "{}"
}

// The schemas the differential tests compare with the library use every keyword and
// every format the table says the runtime checks, so a row added to the table without
// a case to hold it fails here.
func TestOracleCoversTheDialect(t *testing.T) {
	used, formats := map[string]bool{}, map[string]bool{}
	for _, p := range goldenSchemas(t) {
		var doc any
		if err := json.Unmarshal(p.json, &doc); err != nil {
			t.Fatal(err)
		}
		collect(doc, used, formats)
	}
	for _, k := range dialect.Keywords() {
		if (k.Supports(dialect.Go) || k.Class == dialect.Annotation) && !used[k.Name] {
			t.Errorf("keyword %s: no schema of the differential tests uses it", k.Name)
		}
	}
	for _, f := range dialect.Formats(dialect.Go) {
		if !formats[f] {
			t.Errorf("format %s: no schema of the differential tests uses it", f)
		}
	}
}

// collect records the keywords of schema s and its subschemas, and the formats.
func collect(s any, used, formats map[string]bool) {
	m, ok := s.(map[string]any)
	if !ok {
		return
	}
	for k, v := range m {
		used[k] = true
		row, _ := dialect.Lookup(k)
		switch row.Value {
		case dialect.Schema:
			collect(v, used, formats)
		case dialect.SchemaMap:
			vm, _ := v.(map[string]any)
			for _, sub := range vm {
				collect(sub, used, formats)
			}
		case dialect.SchemaList:
			l, _ := v.([]any)
			for _, e := range l {
				collect(e, used, formats)
			}
		}
		if f, ok := v.(string); ok && k == "format" {
			formats[f] = true
		}
	}
}
