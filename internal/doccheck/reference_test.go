package doccheck

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// schemaKeys returns every property name that jobc.schema.json declares, anywhere in
// it (the top level, $defs, nested objects), each with a place it is declared.
func schemaKeys(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "jobc.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("jobc.schema.json: %v", err)
	}
	keys := map[string]string{}
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch v := v.(type) {
		case map[string]any:
			if props, ok := v["properties"].(map[string]any); ok {
				for name := range props {
					if _, seen := keys[name]; !seen {
						keys[name] = at + "/properties/" + name
					}
				}
			}
			for k, sub := range v {
				walk(sub, at+"/"+k)
			}
		case []any:
			for _, sub := range v {
				walk(sub, at)
			}
		}
	}
	walk(doc, "#")
	return keys
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// documentedKeys returns the keys docs/spec.md documents: the code spans of its
// headings and of the first cell of its tables' rows; and, apart, the first cells of
// the tables whose header's first cell is "key" (the key tables).
func documentedKeys(t *testing.T) (documented, keyRows map[string]bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs", "spec.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented, keyRows = map[string]bool{}, map[string]bool{}
	inKeyTable, fenced := false, false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		var cell string
		switch {
		case strings.HasPrefix(line, "#"):
			cell = line
			inKeyTable = false
		case strings.HasPrefix(line, "|"):
			cell, _, _ = strings.Cut(strings.TrimPrefix(line, "|"), "|")
			if strings.TrimSpace(cell) == "key" {
				inKeyTable = true
				continue
			}
		default:
			inKeyTable = false
			continue
		}
		for _, m := range codeSpan.FindAllStringSubmatch(cell, -1) {
			documented[m[1]] = true
			if inKeyTable {
				keyRows[m[1]] = true
			}
		}
	}
	return documented, keyRows
}

// TestSchemaJSONDocumented: docs/spec.md, the reference of jobc.yaml, documents every
// key jobc.schema.json declares — as a heading or in the first cell of a table row —
// and its key tables list no key the schema does not have. A key added to the loader
// and the schema without its documentation fails here.
func TestSchemaJSONDocumented(t *testing.T) {
	keys := schemaKeys(t)
	if len(keys) < 40 {
		t.Fatalf("found %d property names in jobc.schema.json, want the whole language", len(keys))
	}
	documented, keyRows := documentedKeys(t)
	var missing []string
	for k, at := range keys {
		if !documented[k] {
			missing = append(missing, k+" (at "+at+")")
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("docs/spec.md does not document key %s: give it a heading or a table row", m)
	}
	var unknown []string
	for k := range keyRows {
		if _, ok := keys[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		t.Errorf("docs/spec.md lists key %q in a key table, but jobc.schema.json has no such property", k)
	}
	if len(keyRows) < 40 {
		t.Errorf("docs/spec.md's key tables list %d keys, want them to hold the reference", len(keyRows))
	}
}
