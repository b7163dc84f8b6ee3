package generator

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
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

// Diff compares the result with the files on disk without writing anything. Like
// Write, it reads nothing outside the project.
func Diff(res *Result) ([]Change, error) {
	p := res.Project
	pr, err := openProject(res)
	if err != nil {
		return nil, err
	}
	defer pr.close()
	var out []Change
	want := map[string]bool{}
	for _, f := range res.Files {
		want[filepath.Clean(f.Path)] = true
		old, err := pr.readFile(f.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out = append(out, Change{Path: f.Path, Kind: "missing", Diff: unified(f.Path, nil, f.Content)})
		case err != nil:
			return nil, fmt.Errorf("jobc: read %s: %w", f.Path, err)
		case !bytes.Equal(old, f.Content):
			out = append(out, Change{Path: f.Path, Kind: "stale", Diff: unified(f.Path, old, f.Content)})
		}
	}
	extra, err := extraFiles(pr, p, want)
	if err != nil {
		return nil, err
	}
	for _, name := range extra {
		old, err := pr.readFile(name)
		if err != nil {
			return nil, fmt.Errorf("jobc: read %s: %w", filepath.Join(p.Dir, name), err)
		}
		out = append(out, Change{Path: name, Kind: "extra", Diff: unified(name, old, nil)})
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
