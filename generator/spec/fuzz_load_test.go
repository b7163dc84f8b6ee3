package spec_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/generator"
	"github.com/jobc-dev/jobc/generator/spec"
)

var diagLine = regexp.MustCompile(`^[^:]+:\d+:\d+: `)

// FuzzLoad feeds mutated specs to the loader and the whole generator: neither may
// panic, and every problem must come back as spec.Diagnostics, one `file:line:col: `
// line each. The seed corpus is every golden case's jobc.yaml; each input runs in a
// copy of one golden case's directory (picked by c), so that included files and
// schema files exist.
func FuzzLoad(f *testing.F) {
	cases := goldenCaseDirs(f)
	for i, dir := range cases {
		b, err := os.ReadFile(filepath.Join(dir, "jobc.yaml"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), b)
	}
	for _, extra := range []string{
		"a: &a [*a, *a]\n",
		"version: 1\npackage: p\nout: o\njobs:\n  j: &j\n    payload: {versions: {1: {schema: {type: object, default: *j}}}}\n",
		"version: 1\npackage: p\nout: o\njobs:\n  j:\n    payload: {versions: {1: {schema: {$ref: '#'}}}}\n",
		"version: 1\npackage: p\nout: o\ninclude: ['**']\n",
	} {
		f.Add(uint8(0), []byte(extra))
	}
	f.Fuzz(func(t *testing.T, c uint8, config []byte) {
		dir := t.TempDir()
		copyDir(t, cases[int(c)%len(cases)], dir)
		if err := os.WriteFile(filepath.Join(dir, "jobc.yaml"), config, 0o644); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err := spec.Load(dir)
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("Load took %v", d)
		}
		checkDiagnostics(t, err)
		// Generate goes on past loading errors to report later stages' problems too,
		// so it runs on broken specs as well.
		_, err = generator.Generate(context.Background(), dir)
		checkDiagnostics(t, err)
	})
}

func checkDiagnostics(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var ds spec.Diagnostics
	if !errors.As(err, &ds) {
		t.Fatalf("error is %T, not spec.Diagnostics: %v", err, err)
	}
	if len(ds) == 0 {
		t.Fatal("empty Diagnostics as an error")
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		if !diagLine.MatchString(line) {
			t.Errorf("diagnostic line %q is not file:line:col: ...", line)
		}
	}
}

func goldenCaseDirs(tb testing.TB) []string {
	tb.Helper()
	dirs, err := filepath.Glob(filepath.Join("..", "..", "testdata", "*", "jobc.yaml"))
	if err != nil || len(dirs) == 0 {
		tb.Fatalf("no golden cases: %v", err)
	}
	for i, d := range dirs {
		dirs[i] = filepath.Dir(d)
	}
	sort.Strings(dirs)
	return dirs
}

// copyDir copies the spec and schema files of a golden case, not its generated Go.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		if strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".txt") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
