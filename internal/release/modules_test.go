package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSetRequires: a release points every require between the modules, and go.work's
// replacements, at its version; the other requires, go.work's layout and its comments
// stay as they were.
func TestSetRequires(t *testing.T) {
	root := t.TempDir()
	const old = "v0.0.0-00010101000000-000000000000"
	files := map[string]string{
		"go.work":      "// the workspace\ngo 1.25.0\n\nuse (\n\t.\n\t./cmd/x\n)\n\nreplace (\n\tgithub.com/jobc-dev/jobc " + old + " => .\n)\n",
		"go.mod":       "module github.com/jobc-dev/jobc\n\ngo 1.25.0\n\nrequire github.com/jackc/pgx/v5 v5.12.0\n",
		"cmd/x/go.mod": "// x is a module of its own.\nmodule github.com/jobc-dev/jobc/cmd/x\n\ngo 1.25.0\n\nrequire (\n\tgithub.com/jackc/pgx/v5 v5.12.0\n\tgithub.com/jobc-dev/jobc " + old + "\n)\n",
	}
	for name, data := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := SetRequires(root, "v1.2"); err == nil {
		t.Error("SetRequires accepted v1.2, which is not canonical")
	}
	if err := SetRequires(root, "v1.2.3"); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	want := map[string][]string{
		"go.work":      {"// the workspace\n", "\tgithub.com/jobc-dev/jobc v1.2.3 => .\n", "\tgithub.com/jobc-dev/jobc/cmd/x v1.2.3 => ./cmd/x\n"},
		"go.mod":       {"require github.com/jackc/pgx/v5 v5.12.0\n"},
		"cmd/x/go.mod": {"// x is a module of its own.\n", "\tgithub.com/jackc/pgx/v5 v5.12.0\n", "\tgithub.com/jobc-dev/jobc v1.2.3\n"},
	}
	for name, lines := range want {
		got := read(name)
		for _, l := range lines {
			if !strings.Contains(got, l) {
				t.Errorf("%s after SetRequires has no line %q:\n%s", name, l, got)
			}
		}
		if strings.Contains(got, old) {
			t.Errorf("%s still names %s:\n%s", name, old, got)
		}
	}
	if got := read("go.work"); strings.Count(got, "replace") != 1 {
		t.Errorf("go.work's replacements are no longer one block:\n%s", got)
	}
}
