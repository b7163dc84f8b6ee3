package generator

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/jobc-dev/jobc/generator/internal/codegen/golang"
	"github.com/jobc-dev/jobc/generator/internal/names"
	"github.com/jobc-dev/jobc/generator/spec"
)

// tsDecl matches a top-level declaration of the generated TypeScript.
var tsDecl = regexp.MustCompile(`(?m)^(?:export )?(?:async )?(?:interface|type|function) ([A-Za-z_$][A-Za-z0-9_$]*)`)

// TestTSNamesListEveryDeclaration is TestNamesListEveryDeclaration for the TypeScript
// producers: package names lists exactly the identifiers the file declares, so that
// the collision check compares the right names.
func TestTSNamesListEveryDeclaration(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("..", "testdata", "*", "jobc.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, cfg := range dirs {
		dir := filepath.Dir(cfg)
		if _, err := os.Stat(filepath.Join(dir, "error.txt")); err == nil {
			continue
		}
		p, err := spec.Load(dir)
		if err != nil {
			t.Fatalf("%s: load: %v", dir, err)
		}
		if p.Producers.TypeScript == "" {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			jobs, _, workflows, diags, _, err := build(context.Background(), p, nil)
			if err != nil || len(diags) > 0 {
				t.Fatalf("build: %v %v", err, diags)
			}
			want := map[string]bool{}
			for _, id := range names.TSCatalogue() {
				want[id.Name] = true
			}
			for _, j := range jobs {
				var vs []names.Version
				for _, v := range j.Versions {
					vs = append(vs, names.Version{Number: v.Spec.Number, Payload: v.Payload})
				}
				for _, id := range j.Names.TSIdents(vs) {
					want[id.Name] = true
				}
			}
			if len(workflows) > 0 {
				for _, id := range names.TSWorkflowCatalogue() {
					want[id.Name] = true
				}
			}
			versions := func(vs []golang.Version) []names.Version {
				var out []names.Version
				for _, v := range vs {
					out = append(out, names.Version{Number: v.Spec.Number, Payload: v.Payload})
				}
				return out
			}
			for _, w := range workflows {
				ids := w.Names.TSIdents(versions(w.Versions))
				for _, g := range w.Signals {
					ids = append(ids, g.Names.TSIdents(versions(g.Versions))...)
				}
				for _, id := range ids {
					want[id.Name] = true
				}
			}
			b, err := os.ReadFile(filepath.Join(dir, p.Producers.TypeScript))
			if err != nil {
				t.Fatal(err)
			}
			declared := map[string]bool{}
			for _, m := range tsDecl.FindAllStringSubmatch(string(b), -1) {
				if declared[m[1]] {
					t.Errorf("%s is declared twice", m[1])
				}
				declared[m[1]] = true
			}
			if g, w := sortedSet(declared), sortedSet(want); g != w {
				t.Errorf("%s declares\n  %s\npackage names lists\n  %s", p.Producers.TypeScript, g, w)
			}
		})
		checked++
	}
	if checked == 0 {
		t.Fatal("no golden case with TypeScript producers under testdata/")
	}
}
