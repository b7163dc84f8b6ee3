package generator

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/pmezard/go-difflib/difflib"
)

// Change is a difference between the generated files on disk and what the spec
// produces now.
type Change struct {
	Path string // relative to the project directory
	Kind string // "stale", "missing" or "extra"
	Diff string // unified diff, disk → generated
}

// Diff compares the result with the files on disk without writing anything.
func Diff(res *Result) ([]Change, error) {
	p := res.Project
	var out []Change
	want := map[string]bool{}
	for _, f := range res.Files {
		path := filepath.Join(p.Dir, f.Path)
		want[path] = true
		old, err := os.ReadFile(path)
		switch {
		case os.IsNotExist(err):
			out = append(out, Change{Path: f.Path, Kind: "missing", Diff: unified(f.Path, nil, f.Content)})
		case err != nil:
			return nil, fmt.Errorf("jobc: read %s: %w", f.Path, err)
		case !bytes.Equal(old, f.Content):
			out = append(out, Change{Path: f.Path, Kind: "stale", Diff: unified(f.Path, old, f.Content)})
		}
	}
	extra, err := extraFiles(filepath.Join(p.Dir, p.Out), want)
	if err != nil {
		return nil, err
	}
	for _, path := range extra {
		old, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("jobc: read %s: %w", path, err)
		}
		rel, _ := filepath.Rel(p.Dir, path)
		out = append(out, Change{Path: rel, Kind: "extra", Diff: unified(rel, old, nil)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func unified(name string, a, b []byte) string {
	d := difflib.UnifiedDiff{
		A:        difflib.SplitLines(string(a)),
		B:        difflib.SplitLines(string(b)),
		FromFile: "a/" + filepath.ToSlash(name),
		ToFile:   "b/" + filepath.ToSlash(name),
		Context:  3,
	}
	if len(a) == 0 {
		d.A = nil
	}
	if len(b) == 0 {
		d.B = nil
	}
	s, err := difflib.GetUnifiedDiffString(d)
	if err != nil {
		return fmt.Sprintf("(no diff: %v)\n", err)
	}
	return s
}
