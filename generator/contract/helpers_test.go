package contract_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/generator/contract"
	"github.com/jobc-dev/jobc/generator/spec"
)

// header is the first four lines of every test spec; jobs start on line 5.
const header = "version: 1\npackage: jobs\nout: jobs\njobs:\n"

// writeFiles writes files (path relative to dir → content) into dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// load writes jobs (indented under `jobs:`) and the extra files into a new directory
// and loads the spec there.
func load(t *testing.T, jobs string, extra map[string]string) *spec.Project {
	t.Helper()
	return loadIn(t, t.TempDir(), jobs, extra)
}

func loadIn(t *testing.T, dir, jobs string, extra map[string]string) *spec.Project {
	t.Helper()
	files := map[string]string{"jobc.yaml": header + jobs}
	for k, v := range extra {
		files[k] = v
	}
	writeFiles(t, dir, files)
	p, err := spec.Load(dir)
	if err != nil {
		t.Fatalf("spec.Load:\n%v", err)
	}
	return p
}

// loadError writes a project as load does and returns why spec.Load refuses it.
func loadError(t *testing.T, jobs string, extra map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"jobc.yaml": header + jobs}
	for k, v := range extra {
		files[k] = v
	}
	writeFiles(t, dir, files)
	_, err := spec.Load(dir)
	if err == nil {
		t.Fatal("spec.Load succeeded, want an error")
	}
	return err.Error()
}

// lines renders findings as `jobc check` prints them, one string per line.
func lines(t *testing.T, fs contract.Findings) []string {
	t.Helper()
	var b bytes.Buffer
	if err := fs.Write(&b); err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSuffix(b.String(), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// compareLines fails with both listings when got and want differ.
func compareLines(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") == strings.Join(want, "\n") {
		return
	}
	var b strings.Builder
	for _, l := range got {
		if strings.Contains(l, "`") {
			b.WriteString("\t\t\t" + strconv.Quote(l) + ",\n")
		} else {
			b.WriteString("\t\t\t`" + l + "`,\n")
		}
	}
	t.Errorf("got:\n%s\nwant:\n%s\ngot, quoted:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), b.String())
}
