package runtime_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrorsLiveInErrorsGo holds the package's rule that every exported error, a
// variable named Err… or an exported type with an Error method, is declared in
// errors.go, so that a caller finds everything it can test with errors.Is or errors.As
// in one place.
func TestErrorsLiveInErrorsGo(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	parsed := map[string]*ast.File{}
	errorTypes := map[string]bool{} // types with an Error method
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		parsed[name] = f
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil && fn.Name.Name == "Error" {
				r := fn.Recv.List[0].Type
				if st, ok := r.(*ast.StarExpr); ok {
					r = st.X
				}
				if id, ok := r.(*ast.Ident); ok {
					errorTypes[id.Name] = true
				}
			}
		}
	}
	found := 0
	for name, f := range parsed {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, s := range g.Specs {
				var idents []*ast.Ident
				switch s := s.(type) {
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() && strings.HasPrefix(n.Name, "Err") {
							idents = append(idents, n)
						}
					}
				case *ast.TypeSpec:
					if s.Name.IsExported() && errorTypes[s.Name.Name] {
						idents = append(idents, s.Name)
					}
				}
				for _, n := range idents {
					found++
					if name != "errors.go" {
						t.Errorf("%s: %s is an exported error declared outside errors.go", fset.Position(n.Pos()), n.Name)
					}
				}
			}
		}
	}
	// A walk that found no error walked nothing.
	if found < 10 {
		t.Fatalf("found %d exported errors, want at least 10 (8 variables, PayloadError, ClassError): the walk is broken", found)
	}
}
