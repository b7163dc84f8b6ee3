package sql_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/jobc-dev/jobc/internal/dialect"
)

// TestEveryKeywordIsChecked: each keyword the dialect gives to SQL producers changes
// the function generated for a schema that uses it, so none is silently skipped. A
// row added to the table without a case here fails too.
func TestEveryKeywordIsChecked(t *testing.T) {
	t.Parallel()
	// Property v's schema with the keyword, and without it; defs is the root's
	// $defs (or definitions) in both.
	type variant struct{ with, without, defs string }
	cases := map[string]variant{
		"type":                 {with: "{type: string}", without: "{}"},
		"enum":                 {with: "{enum: [a, b]}", without: "{}"},
		"const":                {with: "{const: a}", without: "{}"},
		"format":               {with: "{type: string, format: uuid}", without: "{type: string}"},
		"minimum":              {with: "{type: number, minimum: 1}", without: "{type: number}"},
		"exclusiveMinimum":     {with: "{type: number, exclusiveMinimum: 1}", without: "{type: number}"},
		"maximum":              {with: "{type: number, maximum: 1}", without: "{type: number}"},
		"exclusiveMaximum":     {with: "{type: number, exclusiveMaximum: 1}", without: "{type: number}"},
		"multipleOf":           {with: "{type: number, multipleOf: 2}", without: "{type: number}"},
		"minLength":            {with: "{type: string, minLength: 1}", without: "{type: string}"},
		"maxLength":            {with: "{type: string, maxLength: 1}", without: "{type: string}"},
		"pattern":              {with: "{type: string, pattern: '^a'}", without: "{type: string}"},
		"minItems":             {with: "{type: array, minItems: 1}", without: "{type: array}"},
		"maxItems":             {with: "{type: array, maxItems: 1}", without: "{type: array}"},
		"uniqueItems":          {with: "{type: array, uniqueItems: true}", without: "{type: array}"},
		"minProperties":        {with: "{type: object, minProperties: 1}", without: "{type: object}"},
		"maxProperties":        {with: "{type: object, maxProperties: 1}", without: "{type: object}"},
		"properties":           {with: "{type: object, properties: {a: {type: string}}}", without: "{type: object}"},
		"required":             {with: "{type: object, required: [a]}", without: "{type: object}"},
		"additionalProperties": {with: "{type: object, additionalProperties: false}", without: "{type: object}"},
		"items":                {with: "{type: array, items: {type: string}}", without: "{type: array}"},
		"$ref":                 {with: "{$ref: '#/$defs/d'}", without: "{}", defs: "$defs: {d: {type: string}}"},
		"$defs":                {with: "{$ref: '#/$defs/d'}", without: "{$ref: '#/$defs/e'}", defs: "$defs: {d: {type: string}, e: {}}"},
		"definitions":          {with: "{$ref: '#/definitions/d'}", without: "{$ref: '#/definitions/e'}", defs: "definitions: {d: {type: string}, e: {}}"},
	}
	sql := func(t *testing.T, v, defs string) string {
		dir := t.TempDir()
		spec := "version: 1\npackage: jobs\nout: jobs\njobs:\n  check:\n    payload:\n      versions:\n        1:\n          schema:\n" +
			"            type: object\n            properties:\n              v: " + v + "\n"
		if defs != "" {
			spec += "            " + defs + "\n"
		}
		if err := os.WriteFile(filepath.Join(dir, "jobc.yaml"), []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
		kinds, file, refused := project(t, dir)
		if len(refused) > 0 || len(kinds) != 1 {
			t.Fatalf("%s: refused: %v", v, refused)
		}
		return string(file)
	}
	claimed := dialect.Supported(dialect.SQL)
	for _, name := range claimed {
		c, ok := cases[name]
		if !ok {
			t.Errorf("keyword %s: the table says SQL producers check it, and no case here shows it", name)
			continue
		}
		if sql(t, c.with, c.defs) == sql(t, c.without, c.defs) {
			t.Errorf("keyword %s: %s and %s make the same SQL producer", name, c.with, c.without)
		}
	}
	for name := range cases {
		if !slices.Contains(claimed, name) {
			t.Errorf("keyword %s: a case here, but the table does not give it to SQL", name)
		}
	}
}

// TestDifferentialCoversTheDialect: the schemas TestSQLAgreesWithGo and
// FuzzSQLAgreesWithGo compare Go and SQL on use every keyword the table gives to
// SQL producers.
func TestDifferentialCoversTheDialect(t *testing.T) {
	t.Parallel()
	used := map[string]bool{}
	for _, kinds := range cases(t) {
		for _, k := range kinds {
			for _, v := range k.jt.Versions {
				var doc any
				if err := json.Unmarshal([]byte(v.Schema), &doc); err != nil {
					t.Fatal(err)
				}
				keywords(doc, used)
			}
		}
	}
	for _, name := range dialect.Supported(dialect.SQL) {
		if !used[name] {
			t.Errorf("keyword %s: no schema of the differential tests uses it", name)
		}
	}
}

// keywords records the keywords of schema s and of its subschemas.
func keywords(s any, used map[string]bool) {
	m, ok := s.(map[string]any)
	if !ok {
		return
	}
	for k, v := range m {
		used[k] = true
		row, _ := dialect.Lookup(k)
		switch row.Value {
		case dialect.Schema:
			keywords(v, used)
		case dialect.SchemaMap:
			vm, _ := v.(map[string]any)
			for _, sub := range vm {
				keywords(sub, used)
			}
		case dialect.SchemaList:
			l, _ := v.([]any)
			for _, sub := range l {
				keywords(sub, used)
			}
		}
	}
}
