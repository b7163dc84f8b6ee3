package contract

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jobc-dev/jobc/generator/internal/codegen/golang"
	"github.com/jobc-dev/jobc/generator/internal/confine"
	"github.com/jobc-dev/jobc/generator/spec"
)

// goFunc is a top-level function declared in a hand-written file of the output package.
type goFunc struct {
	Pos     spec.Pos // file relative to the project directory
	Params  []string // parameter types, as written
	Results []string // result types, as written
	Generic bool
}

// signature renders the function's type as written.
func (f goFunc) signature() string {
	res := strings.Join(f.Results, ", ")
	if len(f.Results) > 1 {
		res = "(" + res + ")"
	}
	return strings.TrimSpace("func(" + strings.Join(f.Params, ", ") + ") " + res)
}

// handWritten finds the functions of the output package's hand-written Go files: the
// files of the output directory that the build would compile (build constraints
// hold, not _test.go) and that do not start with the generated-code header. It reads
// them on first use.
type handWritten struct {
	projectDir, out string
	funcs           map[string]goFunc
}

func (h *handWritten) lookup(name string) (goFunc, bool, error) {
	if h.funcs == nil {
		funcs, err := scanFuncs(h.projectDir, h.out)
		if err != nil {
			return goFunc{}, false, err
		}
		h.funcs = funcs
	}
	f, ok := h.funcs[name]
	return f, ok, nil
}

func scanFuncs(projectDir, out string) (map[string]goFunc, error) {
	funcs := map[string]goFunc{}
	dir := filepath.Join(projectDir, out)
	if _, err := confine.Resolve(projectDir, out); err != nil {
		// The generator refuses such an out too; the Go files there are not the
		// project's, and their content must not reach a finding.
		return nil, fmt.Errorf("read the output package: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return funcs, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the output package %s: %w", dir, err)
	}
	header := []byte("// " + golang.Header)
	fset := token.NewFileSet()
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, name := range names {
		if ok, err := build.Default.MatchFile(dir, name); err != nil || !ok {
			continue // excluded by its build constraints, or unreadable: not compiled either
		}
		path := filepath.Join(dir, name)
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if bytes.HasPrefix(src, header) {
			continue
		}
		// A file with syntax errors still yields the declarations before the error;
		// the compiler reports the error itself.
		f, _ := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if f == nil {
			continue
		}
		rel := filepath.Join(out, name)
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || fd.Name == nil {
				continue
			}
			if _, dup := funcs[fd.Name.Name]; dup {
				continue
			}
			p := fset.Position(fd.Name.Pos())
			funcs[fd.Name.Name] = goFunc{
				Pos:     spec.Pos{File: rel, Line: p.Line, Col: p.Column},
				Params:  fieldTypes(fd.Type.Params),
				Results: fieldTypes(fd.Type.Results),
				Generic: fd.Type.TypeParams != nil && fd.Type.TypeParams.NumFields() > 0,
			}
		}
	}
	return funcs, nil
}

// fieldTypes lists the type of each parameter or result, once per name.
func fieldTypes(fl *ast.FieldList) []string {
	if fl == nil {
		return nil
	}
	var out []string
	for _, f := range fl.List {
		t := types.ExprString(f.Type)
		for range max(len(f.Names), 1) {
			out = append(out, t)
		}
	}
	return out
}
