// Package confine keeps the generator's reads and writes inside the project: the
// directory of jobc.yaml. A spec comes from whoever wrote it (in CI, the author of a
// pull request), so a $ref, an include pattern, the out directory or a producers file
// must not reach the runner's other files, whether by "..", by an absolute path or by
// a symbolic link committed into the project.
//
// Resolve gives the clear error, naming the link that leads out, and the path a name
// reaches with its links resolved; the reads and writes then open that path through an
// *os.Root, which refuses any escape at the system-call level, so that a link that
// changes between the check and the use cannot lead out either. (An *os.Root refuses
// every link by absolute path; opening the resolved path lets such a link work when
// it stays inside the project.)
package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxLinks bounds the symbolic links followed while resolving one name, like the
// kernel's limit (ELOOP).
const maxLinks = 40

// OutsideError says that a name leads outside the project.
type OutsideError struct {
	Name string // the name asked for, relative to the project
	// Link is the symbolic link, relative to the project, whose target lies outside;
	// "" when the name itself leads out ("..", an absolute path).
	Link string
}

func (e *OutsideError) Error() string {
	if e.Link == "" {
		return fmt.Sprintf("%s is outside the project", filepath.ToSlash(e.Name))
	}
	// The messages that quote the error name the file already.
	return fmt.Sprintf("%s is a symbolic link to a place outside the project", filepath.ToSlash(e.Link))
}

// Lexical reports whether name, relative to the project, stays inside it before any
// link is followed: it is relative and does not climb out with "..".
func Lexical(name string) bool {
	if name == "" {
		return true
	}
	if filepath.IsAbs(name) || filepath.VolumeName(name) != "" || strings.HasPrefix(filepath.ToSlash(name), "/") {
		return false
	}
	c := filepath.Clean(name)
	return c != ".." && !strings.HasPrefix(c, ".."+string(filepath.Separator))
}

// Resolve follows name (relative to dir) one component at a time, as the system would,
// and returns the path it reaches, relative to dir with every link resolved. It
// returns an *OutsideError when the name, or the target of a link on the way, lies
// outside dir. A component that does not exist ends the walk: the rest is returned
// as written (after the links before it), which is where a write would create it.
func Resolve(dir, name string) (string, error) {
	if !Lexical(name) {
		return "", &OutsideError{Name: name}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	rest := splitPath(filepath.Clean(name))
	cur := "" // resolved so far, relative to root
	for links := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(filepath.Join(root, next))
		if errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(append([]string{next}, rest...)...), nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("%s: more than %d symbolic links", filepath.ToSlash(name), maxLinks)
		}
		target, err := os.Readlink(filepath.Join(root, next))
		if err != nil {
			return "", err
		}
		var rel string
		if filepath.IsAbs(target) {
			// The project by its real path, or by the path jobc was given (which may
			// go through links of its own, as a home directory does).
			rel = ".."
			for _, r := range []string{root, abs} {
				if x, err := filepath.Rel(r, filepath.Clean(target)); err == nil && Lexical(x) {
					rel = x
					break
				}
			}
		} else {
			rel = filepath.Join(cur, target)
		}
		if !Lexical(rel) {
			return "", &OutsideError{Name: name, Link: next}
		}
		// Start again from the root with the link replaced by its (clean) target.
		rest = append(splitPath(filepath.Clean(rel)), rest...)
		cur = ""
	}
	return cur, nil
}

func splitPath(p string) []string {
	if p == "." || p == "" {
		return nil
	}
	return strings.Split(p, string(filepath.Separator))
}
