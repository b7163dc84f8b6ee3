package generator_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/generator"
)

// maxGoLine is the emitter's limit past which a line holding a list is broken.
const maxGoLine = 100

// TestGeneratedLinesFit checks that no line of the generated Go of the golden cases
// and examples/shop passes maxGoLine characters, a tab counting as one: signatures,
// calls and composite literals are broken one item a line instead, and so is every
// catalogue list, whatever its length. Only a doc comment's single overlong word and a
// literal's text (a schema, a default) may not be broken.
func TestGeneratedLinesFit(t *testing.T) {
	dirs := append(goldenCases(t), filepath.Join("..", "examples", "shop"))
	checked := 0
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, "error.txt")); err == nil {
			continue
		}
		res, err := generator.Generate(context.Background(), dir)
		if err != nil {
			t.Fatalf("%s: generate: %v", dir, err)
		}
		for _, f := range res.Files {
			if !strings.HasSuffix(f.Path, ".go") {
				continue
			}
			checked++
			lines := strings.Split(string(f.Content), "\n")
			for i, l := range lines {
				if len(l) <= maxGoLine || unbreakable(l) {
					continue
				}
				t.Errorf("%s: %s:%d has %d characters:\n%s", dir, f.Path, i+1, len(l), l)
			}
			if filepath.Base(f.Path) == generator.CatalogFileName {
				for _, open := range []string{"\treturn errors.Join(", "\treturn []*runtime.JobType{", "\treturn []*runtime.EventType{"} {
					for i, l := range lines {
						if strings.HasPrefix(l, open) && l != open {
							t.Errorf("%s: %s:%d lists on one line, want one item a line:\n%s", dir, f.Path, i+1, l)
						}
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no generated Go file checked")
	}
}

// unbreakable reports whether line is one the emitter cannot break: a comment (doc
// comments are wrapped; a single long word may remain) or a line of a literal's text.
func unbreakable(line string) bool {
	l := strings.TrimSpace(line)
	return strings.HasPrefix(l, "//") || strings.HasPrefix(l, "Schema:") || strings.Contains(l, "[]byte(`")
}
