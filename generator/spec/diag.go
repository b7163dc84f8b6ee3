package spec

import (
	"fmt"
	"sort"
	"strings"
)

// Pos is a place in a spec file; Line and Col count from 1.
type Pos struct {
	File string
	Line int
	Col  int
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }

// Diagnostic is one problem in a spec, reported as `file:line:col: path: message`.
type Diagnostic struct {
	Pos
	Path    string // dotted path of the offending field, e.g. jobs.send_email.retry.max_attempts
	Message string
}

// String formats the diagnostic on one line: line breaks in the path or message (which
// may quote the spec) are escaped.
func (d Diagnostic) String() string {
	if d.Path == "" {
		return fmt.Sprintf("%s: %s", d.Pos, oneLine.Replace(d.Message))
	}
	return fmt.Sprintf("%s: %s: %s", d.Pos, oneLine.Replace(d.Path), oneLine.Replace(d.Message))
}

var oneLine = strings.NewReplacer("\n", "\\n", "\r", "\\r")

// Diagnostics is every problem found in one run; as an error it prints one per line.
type Diagnostics []Diagnostic

func (ds Diagnostics) Error() string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// Sorted orders diagnostics by file, line, column and message, and drops duplicates.
func (ds Diagnostics) Sorted() Diagnostics {
	out := append(Diagnostics(nil), ds...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		return a.String() < b.String()
	})
	uniq := out[:0]
	for i, d := range out {
		if i > 0 && d == out[i-1] {
			continue
		}
		uniq = append(uniq, d)
	}
	return uniq
}

// diags collects diagnostics during loading and checking.
type diags struct{ list Diagnostics }

func (d *diags) add(pos Pos, path, format string, args ...any) {
	d.list = append(d.list, Diagnostic{Pos: pos, Path: path, Message: fmt.Sprintf(format, args...)})
}

func (d *diags) err() error {
	if len(d.list) == 0 {
		return nil
	}
	return d.list.Sorted()
}
