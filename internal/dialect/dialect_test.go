package dialect_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/internal/dialect"
)

// The table's rows are consistent: what jobc generate accepts is checked by Go and by
// SQL (which refuses, with a diagnostic, the values it cannot check as Go does), and
// what it refuses no target but the compatibility checker claims.
func TestTableRules(t *testing.T) {
	seen := map[string]bool{}
	groups := map[string]int{}
	for _, k := range dialect.Keywords() {
		if seen[k.Name] {
			t.Errorf("%s: two rows", k.Name)
		}
		seen[k.Name] = true
		if got, ok := dialect.Lookup(k.Name); !ok || got.Name != k.Name {
			t.Errorf("Lookup(%q) = %v, %v", k.Name, got, ok)
		}
		switch k.Class {
		case dialect.Assertion, dialect.Container:
			if !k.Supports(dialect.Go) || !k.Supports(dialect.SQL) || !k.Supports(dialect.Compat) {
				t.Errorf("%s: an accepted %s that Go, SQL or the compatibility checker does not implement", k.Name, k.Class)
			}
		case dialect.Annotation:
			if k.Targets != 0 {
				t.Errorf("%s: an annotation claimed by a target", k.Name)
			}
		case dialect.Unsupported:
			if k.Supports(dialect.Go) || k.Supports(dialect.SQL) || k.Supports(dialect.TypeScript) {
				t.Errorf("%s: refused by jobc generate but claimed by a producer", k.Name)
			}
		default:
			t.Errorf("%s: no class", k.Name)
		}
		if k.Group != "" {
			groups[k.Group]++
		}
	}
	for g, n := range groups {
		if n < 2 {
			t.Errorf("group %s has %d keyword", g, n)
		}
	}
	if _, ok := dialect.Lookup("maxLenght"); ok {
		t.Error("Lookup found a keyword that is not one")
	}
	if got := dialect.Members("if"); !slices.Equal(got, []string{"if", "then", "else"}) {
		t.Errorf("Members(if) = %v", got)
	}
}

func TestConstrains(t *testing.T) {
	for _, tc := range []struct {
		name, ptr string
		want      bool
	}{
		{"minLength", "/properties/a", true}, {"title", "", false}, {"$defs", "", false},
		{"$id", "", false}, {"$id", "/properties/a", true}, {"oneOf", "", true}, {"default", "/x", false},
	} {
		k, _ := dialect.Lookup(tc.name)
		if got := k.Constrains(tc.ptr); got != tc.want {
			t.Errorf("%s at %q: Constrains = %v, want %v", tc.name, tc.ptr, got, tc.want)
		}
	}
}

// Every format's examples are valid as the runtime checks them (sample documents are
// made from them), and SQL checks a subset of what Go checks.
func TestFormats(t *testing.T) {
	goFormats := dialect.Formats(dialect.Go)
	for _, name := range goFormats {
		f, _ := dialect.LookupFormat(name)
		if len(f.Examples) == 0 {
			t.Errorf("format %s: no examples", name)
		}
		for _, e := range f.Examples {
			if err := dialect.CheckFormat(name, e); err != nil {
				t.Errorf("format %s: example %q: %v", name, e, err)
			}
		}
		if err := dialect.CheckFormat(name, "not valid \x00 %zz ("); err == nil && name != "uri-template" {
			t.Errorf("format %s accepts anything", name)
		}
	}
	for _, name := range dialect.Formats(dialect.SQL) {
		if !slices.Contains(goFormats, name) {
			t.Errorf("format %s: checked by SQL, not by Go", name)
		}
	}
	if err := dialect.CheckFormat("x-unknown", "anything"); err != nil {
		t.Errorf("an unknown format is an annotation, got %v", err)
	}
	if err := dialect.CheckFormat("uuid", "nope"); err == nil {
		t.Error("uuid accepts nope")
	}
}

// docs/spec.md, where the error for an unsupported keyword sends users, names every
// keyword and every format of the table.
func TestSpecDocNamesTheDialect(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "spec.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, k := range dialect.Keywords() {
		if !strings.Contains(doc, "`"+k.Name+"`") {
			t.Errorf("docs/spec.md does not name the %s keyword %s", k.Class, k.Name)
		}
	}
	for _, f := range dialect.Formats(dialect.Go) {
		if !strings.Contains(doc, "`"+f+"`") {
			t.Errorf("docs/spec.md does not name the format %s", f)
		}
	}
}
