package spec

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeProject writes files (path → content) into a new directory and returns it.
func writeProject(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// oneJob is a config with one job whose version 1 schema is the given YAML, indented
// to fit under `schema:`.
func oneJob(schema string) string {
	var b strings.Builder
	b.WriteString("version: 1\npackage: jobs\nout: jobs\njobs:\n  j:\n    payload:\n      versions:\n        1:\n          schema:\n")
	for _, line := range strings.Split(strings.TrimRight(schema, "\n"), "\n") {
		b.WriteString("            " + line + "\n")
	}
	return b.String()
}

func loadSchema(t *testing.T, files map[string]string) *Schema {
	t.Helper()
	p, err := Load(writeProject(t, files))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return p.Jobs[0].Payload.Versions[0].Schema
}

func loadErrors(t *testing.T, files map[string]string) string {
	t.Helper()
	_, err := Load(writeProject(t, files))
	if err == nil {
		t.Fatal("Load succeeded, want errors")
	}
	return err.Error()
}

func canonical(t *testing.T, s *Schema) string {
	t.Helper()
	b, err := s.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRefInlinesOncePerTarget(t *testing.T) {
	s := loadSchema(t, map[string]string{
		"jobc.yaml": oneJob(`type: object
properties:
  a: {$ref: ./s/addr.json}
  b: {$ref: s/../s/addr.json}
  c: {$ref: "s/addr.json#"}`),
		"s/addr.json": `{"type": "object", "properties": {"city": {"type": "string"}}}`,
	})
	want := `{"$defs":{"addr":{"properties":{"city":{"type":"string"}},"type":"object"}},"properties":{"a":{"$ref":"#/$defs/addr"},"b":{"$ref":"#/$defs/addr"},"c":{"$ref":"#/$defs/addr"}},"type":"object"}`
	if got := canonical(t, s); got != want {
		t.Errorf("canonical\n got %s\nwant %s", got, want)
	}
	if got, want := s.Inlined, map[string]Source{"addr": {File: "s/addr.json"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Inlined = %v, want %v", got, want)
	}
}

func TestRefNames(t *testing.T) {
	s := loadSchema(t, map[string]string{
		"jobc.yaml": oneJob(`type: object
properties:
  a: {$ref: "money.yaml#/$defs/Amount"}
  b: {$ref: "tax.yaml#/$defs/Amount"}
  c: {$ref: "other.yaml#/$defs/Amount"}
  d: {$ref: "#/$defs/address"}
  e: {$ref: "address.schema.json"}
  f: {$ref: "odd.yaml#/$defs/a~1b%20c"}
$defs:
  address: {type: string}`),
		"money.yaml":          "$defs: {Amount: {type: integer}}",
		"tax.yaml":            "$defs: {Amount: {type: number}}",
		"other/keep.txt":      "", // a directory named like the file beside it
		"other.yaml":          "$defs: {Amount: {type: string}}",
		"address.schema.json": `{"type": "object"}`,
		"odd.yaml":            "$defs: {\"a/b c\": {type: boolean}}",
	})
	got := map[string]string{}
	for name, src := range s.Inlined {
		got[name] = src.String()
	}
	want := map[string]string{
		"Amount":       "money.yaml#/$defs/Amount",
		"tax_Amount":   "tax.yaml#/$defs/Amount",
		"other_Amount": "other.yaml#/$defs/Amount",
		"address2":     "address.schema.json",
		"a/b c":        "odd.yaml#/$defs/a~1b c",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("names\n got %v\nwant %v", got, want)
	}
	if ref := mapGet(mapGet(mapGet(s.Node, "properties"), "f"), "$ref").Value; ref != "#/$defs/a~1b%20c" {
		t.Errorf("escaped ref = %q", ref)
	}
	if n := s.Resolve("#/$defs/a~1b%20c"); n == nil || mapGet(n, "type").Value != "boolean" {
		t.Errorf("Resolve of the escaped ref = %v", n)
	}
}

func TestRefInsideFileIsRelativeToIt(t *testing.T) {
	s := loadSchema(t, map[string]string{
		"jobc.yaml": oneJob(`{$ref: "schemas/payload.yaml"}`),
		"schemas/payload.yaml": `$schema: https://json-schema.org/draft/2020-12/schema
$id: https://example.com/payload
type: object
properties:
  total: {$ref: "#/$defs/money"}
  who: {$ref: "common/person.json"}
$defs:
  money: {type: integer, description: "in cents"}`,
		"schemas/common/person.json": `{"type": "object", "properties": {"name": {"type": "string"}, "boss": {"$ref": "#/$defs/name"}}, "$defs": {"name": {"type": "string"}}}`,
	})
	want := `{"$defs":{"money":{"description":"in cents","type":"integer"},"name":{"type":"string"},"payload":{"properties":{"total":{"$ref":"#/$defs/money"},"who":{"$ref":"#/$defs/person"}},"type":"object"},"person":{"properties":{"boss":{"$ref":"#/$defs/name"},"name":{"type":"string"}},"type":"object"}},"$ref":"#/$defs/payload"}`
	if got := canonical(t, s); got != want {
		t.Errorf("canonical\n got %s\nwant %s", got, want)
	}
	if root := s.Root(); mapGet(mapGet(root, "properties"), "total") == nil {
		t.Errorf("Root() does not follow the top-level $ref")
	}
	if src := s.Inlined["money"]; src.File != filepath.FromSlash("schemas/payload.yaml") || src.Path != "$defs.money" {
		t.Errorf("source of money = %+v", src)
	}
}

func TestRefErrors(t *testing.T) {
	cases := []struct {
		name   string
		schema string
		files  map[string]string
		want   string
	}{
		{"remote", `{$ref: "http://x/y.json"}`, nil, `schema.$ref: remote $ref "http://x/y.json" is not supported`},
		{"file scheme", `{$ref: "file:///etc/x.json"}`, nil, `remote $ref "file:///etc/x.json"`},
		{"not a string", `{$ref: [a]}`, nil, `schema.$ref: $ref must be a string, got a list`},
		{"missing", `{$ref: nope.json}`, nil, `cannot read nope.json: no such file or directory`},
		{"bad pointer", `{$ref: "a.yaml#/x/0/y"}`, map[string]string{"a.yaml": "x: [{z: 1}]"}, `a.yaml has no #/x/0/y: no member "y" under x.0`},
		{"index out of range", `{$ref: "a.yaml#/x/3"}`, map[string]string{"a.yaml": "x: [1]"}, `no element "3" under x`},
		{"into a scalar", `{$ref: "a.yaml#/x/y"}`, map[string]string{"a.yaml": "x: 1"}, `"y" goes into a scalar under x`},
		{"not a schema", `{$ref: "a.yaml#/x"}`, map[string]string{"a.yaml": "x: [1]"}, `does not point to a JSON Schema: want a mapping, got a list`},
		{"bad escape", `{$ref: "a.yaml#/%zz"}`, map[string]string{"a.yaml": "x: 1"}, `has a badly escaped fragment`},
		{"self", `{$ref: "a.yaml"}`, map[string]string{"a.yaml": "type: object\nproperties: {x: {$ref: '#'}}"}, `a.yaml:2:24: properties.x.$ref: $ref cycle: a.yaml → a.yaml; recursive schemas have no Go type`},
		{"invalid yaml", `{$ref: "a.yaml"}`, map[string]string{"a.yaml": "a: [1"}, `a.yaml:1:1: invalid YAML`},
		{"invalid json", `{$ref: "a.json"}`, map[string]string{"a.json": "{\n  \"a\": tru\n}"}, `a.json:2:11: invalid JSON: invalid character '\n' in literal true`},
		{"empty json", `{$ref: "a.json"}`, map[string]string{"a.json": ""}, `a.json:1:1: invalid JSON: the file is empty`},
		{"trailing json", `{$ref: "a.json"}`, map[string]string{"a.json": "{} {}"}, `a.json:1:4: invalid JSON: invalid character '{' after top-level value`},
		{"duplicate key", `{$ref: "a.json"}`, map[string]string{"a.json": `{"type": "object", "type": "string"}`}, `a.json:1:20: type: duplicate key "type"`},
		{"duplicate property", "type: object\nproperties:\n  a: {type: string}\n  a: {type: integer}", nil, `jobc.yaml:13:15: jobs.j.payload.versions.1.schema.properties.a: duplicate key "a"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := map[string]string{"jobc.yaml": oneJob(c.schema)}
			for k, v := range c.files {
				files[k] = v
			}
			if got := loadErrors(t, files); !strings.Contains(got, c.want) {
				t.Errorf("errors\n%s\nwant them to contain\n%s", got, c.want)
			}
		})
	}
}

func TestRefUnderDataIsNotResolved(t *testing.T) {
	s := loadSchema(t, map[string]string{
		"jobc.yaml": oneJob(`type: object
properties:
  a:
    type: object
    default: {$ref: not/a/file.json}
    examples: [{$ref: nope}]
    properties: {$ref: {type: string}}`),
	})
	if len(s.Inlined) != 0 {
		t.Errorf("inlined %v from data", s.Inlined)
	}
}

func TestParseJSONPositions(t *testing.T) {
	n, _, err := parseJSON([]byte("{\n\t\"a\": \"x\\/y\",\n\t\"é\": [1, 2.5, true, null]\n}"))
	if err != nil {
		t.Fatal(err)
	}
	a := mapGet(n, "a")
	if a.Value != "x/y" || a.Line != 2 || a.Column != 7 {
		t.Errorf("a = %q at %d:%d", a.Value, a.Line, a.Column)
	}
	list := mapGet(n, "é")
	if list.Line != 3 || list.Column != 7 {
		t.Errorf("list at %d:%d, want 3:7", list.Line, list.Column)
	}
	var tags []string
	for _, c := range list.Content {
		tags = append(tags, c.Tag)
	}
	if want := []string{"!!int", "!!float", "!!bool", "!!null"}; !reflect.DeepEqual(tags, want) {
		t.Errorf("tags %v, want %v", tags, want)
	}
	if _, _, err := parseJSON([]byte(strings.Repeat("[", maxJSONDepth+2))); err == nil {
		t.Error("deep nesting accepted")
	}
}
