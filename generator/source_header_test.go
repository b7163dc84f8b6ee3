package generator_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/generator"
	"github.com/jobc-dev/jobc/generator/internal/codegen/golang"
)

// TestSourceHeader checks that every generated file starts with the exact Header line,
// which go tooling and jobc's ownership check read, and names on its second line the
// spec file it is rendered from: a file of the project, relative to it, with forward
// slashes. examples/shop joins the golden cases for its included job files and its
// SQL producers.
func TestSourceHeader(t *testing.T) {
	shop := filepath.Join("..", "examples", "shop") // declares every job in an included file
	dirs := append(goldenCases(t), shop)
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
			lines := strings.SplitN(string(f.Content), "\n", 3)
			if len(lines) < 3 {
				t.Errorf("%s: %s has fewer than 3 lines:\n%s", dir, f.Path, f.Content)
				continue
			}
			prefix := "//"
			if strings.HasSuffix(f.Path, ".sql") {
				prefix = "--"
			}
			if want := prefix + " " + golang.Header; lines[0] != want {
				t.Errorf("%s: %s starts with %q, want %q", dir, f.Path, lines[0], want)
			}
			source, ok := strings.CutPrefix(lines[1], prefix+" source: ")
			if !ok {
				t.Errorf("%s: %s's second line is %q, want %q", dir, f.Path, lines[1], prefix+" source: <spec file>")
				continue
			}
			if source == "" || filepath.IsAbs(source) || strings.Contains(source, `\`) || strings.HasPrefix(source, "..") {
				t.Errorf("%s: %s names source %q, want a slash-separated path inside the project", dir, f.Path, source)
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(source))); err != nil {
				t.Errorf("%s: %s names source %q: %v", dir, f.Path, source, err)
			}
			if strings.HasSuffix(f.Path, ".jobc.go") && !strings.HasSuffix(f.Path, generator.EventFileSuffix) && source == res.Project.File && dir == shop {
				t.Errorf("%s: %s names the config %q, want the included job file declaring it", dir, f.Path, source)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no generated file checked")
	}
}
