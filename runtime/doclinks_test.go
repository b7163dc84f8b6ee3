package runtime_test

import (
	"go/ast"
	"go/doc"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

// TestDocLinksResolve fails when a doc link ([Name], [Type.Method],
// [github.com/jobc-dev/jobc/pkg.Name]) in what go doc shows of this package names
// nothing: go doc prints such a link as plain text, so a renamed function would leave
// the package doc pointing at a name that no longer exists without anyone noticing.
func TestDocLinksResolve(t *testing.T) {
	t.Parallel()
	const module = "github.com/jobc-dev/jobc/"
	own, pkg := packageSymbols(t, ".")
	// Every bracketed name is taken for a link, so that one naming nothing is seen.
	p := pkg.Parser()
	p.LookupSym = func(recv, name string) bool { return true }
	others := map[string]map[string]bool{module + "runtime": own}
	check := func(where, text string) {
		for _, link := range docLinks(p.Parse(text)) {
			if link.ImportPath == "" && !unicode.IsUpper([]rune(link.Name)[0]) {
				continue // an index such as a[i], not a link
			}
			syms := own
			if link.ImportPath != "" {
				dir, ok := strings.CutPrefix(link.ImportPath, module)
				if !ok {
					continue // the standard library and dependencies are go doc's to check
				}
				if syms = others[link.ImportPath]; syms == nil {
					syms, _ = packageSymbols(t, filepath.Join("..", filepath.FromSlash(dir)))
					others[link.ImportPath] = syms
				}
			}
			name := link.Name
			if name == "" && len(syms) > 0 {
				continue // a link to the package itself, which exists
			}
			if link.Recv != "" {
				name = link.Recv + "." + name
			}
			if !syms[name] {
				t.Errorf("%s: the doc link [%s] names nothing in %s", where, name, cmpOr(link.ImportPath, "package runtime"))
			}
		}
	}
	check("package doc", pkg.Doc)
	for _, v := range append(pkg.Consts, pkg.Vars...) {
		check(strings.Join(v.Names, ", "), v.Doc)
	}
	for _, f := range pkg.Funcs {
		check(f.Name, f.Doc)
	}
	for _, typ := range pkg.Types {
		check(typ.Name, typ.Doc)
		for _, v := range append(typ.Consts, typ.Vars...) {
			check(strings.Join(v.Names, ", "), v.Doc)
		}
		for _, f := range append(typ.Funcs, typ.Methods...) {
			check(f.Name, f.Doc)
		}
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// packageSymbols returns the exported names of the package in dir, as a doc link
// writes them (Name, Type.Method, Type.Field), and its go/doc description.
func packageSymbols(t *testing.T, dir string) (map[string]bool, *doc.Package) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Errorf("no Go files in %s", dir)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	pkg, err := doc.NewFromFiles(fset, files, "github.com/jobc-dev/jobc/"+filepath.ToSlash(dir))
	if err != nil {
		t.Fatal(err)
	}
	syms := map[string]bool{}
	for _, v := range append(pkg.Consts, pkg.Vars...) {
		for _, n := range v.Names {
			syms[n] = true
		}
	}
	for _, f := range pkg.Funcs {
		syms[f.Name] = true
	}
	for _, typ := range pkg.Types {
		syms[typ.Name] = true
		for _, v := range append(typ.Consts, typ.Vars...) {
			for _, n := range v.Names {
				syms[n] = true
			}
		}
		for _, f := range typ.Funcs {
			syms[f.Name] = true
		}
		for _, m := range typ.Methods {
			syms[typ.Name+"."+m.Name] = true
		}
		if st, ok := typ.Decl.Specs[0].(*ast.TypeSpec).Type.(*ast.StructType); ok {
			for _, field := range st.Fields.List {
				for _, n := range field.Names {
					syms[typ.Name+"."+n.Name] = true
				}
			}
		}
	}
	return syms, pkg
}

// docLinks returns every doc link in d.
func docLinks(d *comment.Doc) []*comment.DocLink {
	var links []*comment.DocLink
	var walk func([]comment.Text)
	walk = func(texts []comment.Text) {
		for _, x := range texts {
			switch x := x.(type) {
			case *comment.DocLink:
				links = append(links, x)
			case *comment.Link:
				walk(x.Text)
			}
		}
	}
	for _, b := range d.Content {
		switch b := b.(type) {
		case *comment.Paragraph:
			walk(b.Text)
		case *comment.Heading:
			walk(b.Text)
		case *comment.List:
			for _, item := range b.Items {
				for _, c := range item.Content {
					if para, ok := c.(*comment.Paragraph); ok {
						walk(para.Text)
					}
				}
			}
		}
	}
	return links
}
