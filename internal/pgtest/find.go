package pgtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// DefaultGlob matches the directories searched for PostgreSQL server binaries
// after PATH when [Finder.Globs] is nil. The Debian/Ubuntu packages install
// them there; the highest version wins.
const DefaultGlob = "/usr/lib/postgresql/*/bin"

// errNoBinaries reports that no directory with initdb, pg_ctl and postgres was
// found.
var errNoBinaries = errors.New("PostgreSQL server binaries (initdb, pg_ctl, postgres) not found")

// Finder locates the PostgreSQL server binaries. The zero value searches the
// PATH environment variable and then [DefaultGlob].
type Finder struct {
	// Path is a list of directories in PATH format searched first. Empty
	// means the PATH environment variable.
	Path string
	// Globs are filepath.Glob patterns of bin directories searched after
	// Path; among the matches, the one whose pattern-matched path has the
	// highest version number wins. Nil means [DefaultGlob]; an empty,
	// non-nil slice searches nothing.
	Globs []string
}

// Binaries is a directory holding initdb, pg_ctl and postgres.
type Binaries struct {
	Dir string
}

// Initdb returns the path of the initdb executable.
func (b Binaries) Initdb() string { return filepath.Join(b.Dir, "initdb") }

// PgCtl returns the path of the pg_ctl executable.
func (b Binaries) PgCtl() string { return filepath.Join(b.Dir, "pg_ctl") }

// Find returns the first directory holding initdb, pg_ctl and postgres: the
// directory of the initdb found on Path (symlinks resolved, since pg_ctl and
// initdb look for postgres next to their real location), then the glob match
// with the highest version.
func (f Finder) Find() (Binaries, error) {
	bin, err := f.find()
	if err != nil {
		return Binaries{}, fmt.Errorf("pgtest: %w", err)
	}
	return bin, nil
}

// find is Find without the package prefix on errors; errors wrap
// errNoBinaries when nothing was found.
func (f Finder) find() (Binaries, error) {
	path := f.Path
	if path == "" {
		path = os.Getenv("PATH")
	}
	var tried []string
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		exe := filepath.Join(dir, "initdb")
		if !isExecutable(exe) {
			continue
		}
		resolved, err := filepath.EvalSymlinks(exe)
		if err != nil {
			continue
		}
		bin := Binaries{Dir: filepath.Dir(resolved)}
		if bin.complete() {
			return bin, nil
		}
		tried = append(tried, bin.Dir)
	}

	globs := f.Globs
	if globs == nil {
		globs = []string{DefaultGlob}
	}
	var dirs []string
	for _, g := range globs {
		m, err := filepath.Glob(g)
		if err != nil {
			return Binaries{}, fmt.Errorf("find binaries: glob %q: %w", g, err)
		}
		dirs = append(dirs, m...)
	}
	slices.SortStableFunc(dirs, func(a, b string) int { return -compareVersionPaths(a, b) })
	for _, dir := range dirs {
		bin := Binaries{Dir: dir}
		if bin.complete() {
			return bin, nil
		}
		tried = append(tried, dir)
	}
	if len(tried) > 0 {
		return Binaries{}, fmt.Errorf("%w (incomplete installations in %s)", errNoBinaries, strings.Join(tried, ", "))
	}
	return Binaries{}, errNoBinaries
}

func (b Binaries) complete() bool {
	for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
		if !isExecutable(filepath.Join(b.Dir, name)) {
			return false
		}
	}
	return true
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// compareVersionPaths orders two paths by the version numbers found in their
// elements (e.g. /usr/lib/postgresql/9.6/bin < /usr/lib/postgresql/15/bin),
// falling back to string order.
func compareVersionPaths(a, b string) int {
	va, vb := pathVersion(a), pathVersion(b)
	if c := slices.Compare(va, vb); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// pathVersion returns the numbers of the last path element that is a dotted
// number, or nil.
func pathVersion(p string) []int {
	elems := strings.Split(filepath.ToSlash(p), "/")
	for i := len(elems) - 1; i >= 0; i-- {
		if v, ok := parseVersion(elems[i]); ok {
			return v
		}
	}
	return nil
}

func parseVersion(s string) ([]int, bool) {
	if s == "" {
		return nil, false
	}
	var v []int
	for _, part := range strings.Split(s, ".") {
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 {
			return nil, false
		}
		v = append(v, n)
	}
	return v, true
}
