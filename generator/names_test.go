package generator

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/generator/internal/names"
	"github.com/jobc-dev/jobc/generator/spec"
)

// TestNamesListEveryDeclaration checks that package names knows every identifier the
// emitter declares, and nothing more: the collision check can only be trusted if the
// names it compares are exactly those in the generated code. It parses each golden
// case's generated package and compares its top-level declarations with the list.
func TestNamesListEveryDeclaration(t *testing.T) {
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
		t.Run(filepath.Base(dir), func(t *testing.T) {
			p, err := spec.Load(dir)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			jobs, events, workflows, diags, _, err := build(context.Background(), p, nil)
			if err != nil || len(diags) > 0 {
				t.Fatalf("build: %v %v", err, diags)
			}
			want := map[string]bool{}
			handWritten := map[string]bool{}
			for _, id := range names.Catalogue() {
				want[id.Name] = true
			}
			if len(events) > 0 {
				for _, id := range names.EventCatalogue() {
					want[id.Name] = true
				}
			}
			if len(workflows) > 0 {
				for _, id := range names.WorkflowCatalogue() {
					want[id.Name] = true
				}
			}
			for _, w := range workflows {
				var vs []names.Version
				for _, v := range w.Versions {
					vs = append(vs, names.Version{Number: v.Spec.Number, Payload: v.Payload, Declared: v.Declared, HandWritten: v.HandWritten})
				}
				ids := w.Names.Idents(vs)
				for _, g := range w.Signals {
					var gs []names.Version
					for _, v := range g.Versions {
						gs = append(gs, names.Version{Number: v.Spec.Number, Payload: v.Payload, Declared: v.Declared, HandWritten: v.HandWritten})
					}
					ids = append(ids, g.Names.Idents(gs)...)
				}
				for _, id := range ids {
					if id.HandWritten {
						handWritten[id.Name] = true
					} else {
						want[id.Name] = true
					}
				}
			}
			for _, e := range events {
				var vs []names.Version
				for _, v := range e.Versions {
					vs = append(vs, names.Version{Number: v.Spec.Number, Payload: v.Payload, Declared: v.Declared, HandWritten: v.HandWritten})
				}
				for _, id := range e.Names.Idents(vs) {
					if id.HandWritten {
						handWritten[id.Name] = true
					} else {
						want[id.Name] = true
					}
				}
			}
			for _, j := range jobs {
				var vs []names.Version
				for _, v := range j.Versions {
					vs = append(vs, names.Version{Number: v.Spec.Number, Payload: v.Payload, Declared: v.Declared, HandWritten: v.HandWritten})
				}
				ids := j.Names.Idents(vs)
				if j.Spec.Result != nil {
					var rs []names.Version
					for _, v := range j.Result {
						rs = append(rs, names.Version{Number: v.Spec.Number, Payload: v.Payload, Declared: v.Declared, HandWritten: v.HandWritten})
					}
					ids = append(ids, j.Names.Result().Idents(rs)...)
				}
				for _, id := range ids {
					if id.HandWritten {
						handWritten[id.Name] = true
					} else {
						want[id.Name] = true
					}
				}
			}
			generated, written := declarations(t, filepath.Join(dir, p.Out))
			if g, w := sortedSet(generated), sortedSet(want); g != w {
				t.Errorf("generated files declare\n  %s\npackage names lists\n  %s", g, w)
			}
			for name := range handWritten {
				if !written[name] {
					t.Errorf("names lists the hand-written upcast %s, which no hand-written file declares", name)
				}
			}
		})
		checked++
	}
	if checked == 0 {
		t.Fatal("no golden success cases under testdata/")
	}
}

// declarations returns the top-level identifiers (not methods) declared in the
// generated files of the package in dir, and those of its hand-written files.
func declarations(t *testing.T, dir string) (generated, written map[string]bool) {
	t.Helper()
	generated, written = map[string]bool{}, map[string]bool{}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		into := written
		if ownedFile(t, path) {
			into = generated
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					into[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						into[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							into[n.Name] = true
						}
					}
				}
			}
		}
	}
	return generated, written
}

func sortedSet(m map[string]bool) string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// ownedFile reports whether the file at path belongs to the generator.
func ownedFile(t *testing.T, path string) bool {
	t.Helper()
	root, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	return owned(&project{dir: filepath.Dir(path), root: root}, filepath.Base(path))
}
