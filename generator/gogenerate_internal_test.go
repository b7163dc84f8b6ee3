package generator

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestGoGenerateHasRead(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"internal/jobs", "internal/jobs/sub", "internal/jobs-x", "tools"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	at := func(dir, file string) *GoGenerate {
		return &GoGenerate{Dir: filepath.Join(root, dir), File: file, Line: 1}
	}
	jobs := func(name string) string { return filepath.Join(root, "internal/jobs", name) }
	cases := []struct {
		g    *GoGenerate
		path string
		want bool
	}{
		{at(".", "main.go"), jobs("zap.jobc.go"), false},              // a package after the root
		{at("tools", "gen.go"), jobs("zap.jobc.go"), true},            // internal/jobs sorts before tools
		{at("internal/jobs", "gen.go"), jobs("aaa.jobc.go"), true},    // earlier in the same package
		{at("internal/jobs", "gen.go"), jobs("gen.go"), true},         // the file being read
		{at("internal/jobs", "gen.go"), jobs("zap.jobc.go"), false},   // later in the same package
		{at("internal/jobs", "x_test.go"), jobs("zap.jobc.go"), true}, // test files come after the others
		{at("internal/jobs/sub", "a.go"), jobs("zap.jobc.go"), true},  // the parent package came first
		{at("internal/jobs-x", "a.go"), jobs("zap.jobc.go"), true},    // internal/jobs is a prefix of internal/jobs-x
		// Packages go in import-path order, not directory-walk order: "-" sorts before "/".
		{at("internal/jobs/sub", "a.go"), filepath.Join(root, "internal/jobs-x", "zap.jobc.go"), true},
	}
	for _, c := range cases {
		if got := c.g.hasRead(c.path); got != c.want {
			rel, _ := filepath.Rel(root, c.path)
			t.Errorf("under go generate of %s in %s: hasRead(%s) = %v, want %v", c.g.File, c.g.Dir, rel, got, c.want)
		}
	}
}

func TestGoGenerateRerun(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "internal", "jobs")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	src := "// Package main.\n" +
		"//go:generate -command jobc go run ./tools/jobc\n" +
		"//go:generate -command other echo\n" +
		"//go:generate jobc -C . generate\n" +
		"//go:generate go run ./wrapper\n" +
		"//go:generate ../bin/jobc generate\n" +
		"//go:generate jobc generate -C \"my project\"\n" +
		"package main\n"
	if err := os.WriteFile(filepath.Join(root, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		line int
		want []string
	}{
		// The alias comes along; relative paths are rewritten for internal/jobs; the
		// project's -C comes last, so it wins.
		{4, []string{"//go:generate -command jobc go run ../../tools/jobc", "//go:generate jobc -C ../.. generate -C ../.."}},
		{5, nil}, // not a jobc generate
		{6, []string{"//go:generate ../../../bin/jobc generate -C ../.."}},
		{7, nil}, // a quoted word
	}
	for _, c := range cases {
		g := &GoGenerate{Dir: root, File: "main.go", Line: c.line}
		if got := g.rerun(out, root); !reflect.DeepEqual(got, c.want) {
			t.Errorf("rerun of line %d = %q, want %q", c.line, got, c.want)
		}
	}
}
