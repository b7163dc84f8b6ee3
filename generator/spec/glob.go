package spec

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jobc-dev/jobc/generator/internal/confine"
)

// glob returns the files under dir that pattern matches, relative to dir and sorted.
// Patterns use / and the syntax of path.Match, plus ** for any number of directories
// (jobs/**/*.yaml matches jobs/a.yaml and jobs/billing/eu/b.yaml). Directories never
// match.
func glob(dir, pattern string) ([]string, error) {
	pattern = path.Clean(filepath.ToSlash(pattern))
	if _, err := path.Match(pattern, ""); err != nil {
		return nil, err
	}
	segs := strings.Split(pattern, "/")
	// Walk from the longest prefix without wildcards.
	base := 0
	for base < len(segs)-1 && !hasMeta(segs[base]) {
		base++
	}
	// The walk starts at the base; a symbolic link on the way there must not lead it
	// out of the project (the walk itself follows no link).
	if _, err := confine.Resolve(dir, filepath.FromSlash(path.Join(segs[:base]...))); err != nil {
		var out *confine.OutsideError
		if errors.As(err, &out) {
			return nil, err
		}
	}
	root := filepath.Join(dir, filepath.FromSlash(path.Join(segs[:base]...)))
	var out []string
	visited := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if visited++; visited > maxGlobEntries {
			return fmt.Errorf("visits more than %d files and directories: make it narrower", maxGlobEntries)
		}
		if err != nil {
			if p == root {
				return fs.SkipAll // a missing base directory matches nothing
			}
			return nil
		}
		rel, rerr := filepath.Rel(dir, p)
		if rerr != nil {
			return nil
		}
		relSegs := strings.Split(filepath.ToSlash(rel), "/")
		if d.IsDir() {
			if p != root && !prefixCanMatch(segs, relSegs) {
				return fs.SkipDir
			}
			return nil
		}
		if matchSegs(segs, relSegs) {
			out = append(out, filepath.Clean(rel))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

// maxGlobEntries bounds the directory entries one include pattern may visit.
const maxGlobEntries = 50_000

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[\`) }

// matchSegs matches path segments against pattern segments; "**" matches zero or
// more segments.
func matchSegs(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchSegs(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// prefixCanMatch reports whether some path under directory dir could match pat.
func prefixCanMatch(pat, dir []string) bool {
	for i, d := range dir {
		if i >= len(pat) {
			return false
		}
		if pat[i] == "**" {
			return true
		}
		if ok, _ := path.Match(pat[i], d); !ok {
			return false
		}
	}
	return true
}
