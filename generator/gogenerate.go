package generator

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jobc-dev/jobc/generator/internal/codegen/golang"
)

// Removing a generated file while go generate runs.
//
// `go generate ./...` lists every package and its files up front, then reads the files
// one at a time and runs their directives as it meets them (cmd/go's runGenerate: the
// packages in import-path order, a package's files in name order, test files last). A
// generated file that jobc deletes while go generate has yet to read it makes go
// generate fail with "no such file or directory" — the usual case being a removed job
// whose file sits in internal/jobs, read after the directive in the project's main.go.
//
// So under go generate (which sets $GOFILE) jobc deletes a stale file only when go
// generate has already read it; a file it may still read is emptied instead, into a
// tombstone: a Go file of the package that declares nothing (so the removed job no
// longer compiles) and carries a copy of the directive that is running. When go
// generate reaches the tombstone, that directive runs jobc again; the tombstone is then
// the file being read ($GOFILE), so that run deletes it. After `go generate ./...` no
// tombstone is left, and `jobc diff` is clean.
//
// A tombstone that go generate never reaches (`go generate .` in the directory of the
// directive, with the output package elsewhere) stays behind, inert; `jobc diff`
// reports it as extra, and the next `jobc generate` or `go generate ./...` deletes it.
// The alternatives are worse: keeping the stale file leaves the removed job compiled,
// and deleting it later from a background process races with whatever runs after go
// generate (a build, a `git diff --exit-code`).

// GoGenerate is the go generate run that jobc is part of.
type GoGenerate struct {
	Dir  string // the directory of the package go generate is reading: the working directory
	File string // $GOFILE: the file whose directive runs jobc
	Line int    // $GOLINE: the line of that directive
}

// GoGenerateFromEnv returns the go generate run described by the environment (getenv,
// usually os.Getenv) and the working directory wd, or nil when jobc does not run under
// go generate.
func GoGenerateFromEnv(getenv func(string) string, wd string) *GoGenerate {
	file := getenv("GOFILE")
	if file == "" {
		return nil
	}
	line, _ := strconv.Atoi(getenv("GOLINE"))
	return &GoGenerate{Dir: wd, File: file, Line: line}
}

// hasRead reports whether go generate has already read the file at path (absolute), or
// is reading it now, assuming it visits packages in import-path order as it does for a
// ./... pattern. For other patterns the answer errs on the side of "not yet".
func (g *GoGenerate) hasRead(path string) bool {
	dir, base := filepath.Dir(path), filepath.Base(path)
	here, there := filepath.ToSlash(canonical(g.Dir)), filepath.ToSlash(canonical(dir))
	if here != there {
		// Import paths of one module sort like their directories.
		return there < here
	}
	if strings.HasSuffix(g.File, "_test.go") {
		return !strings.HasSuffix(base, "_test.go") || base <= g.File
	}
	return base <= g.File
}

func canonical(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return dir
}

// rerun returns the directive lines that run the same jobc generate again from the
// directory outDir for the project in projectDir, copied from the directive that is
// running (and the -command line that defines its first word, if any), with relative
// paths in them made relative to outDir; nil when that directive cannot be read, does
// not end in a generate command, or quotes a word.
func (g *GoGenerate) rerun(outDir, projectDir string) []string {
	src, err := os.ReadFile(filepath.Join(g.Dir, g.File))
	if err != nil {
		return nil
	}
	from, to := canonical(g.Dir), canonical(outDir)
	var alias []string // the -command line in force for the directive's first word
	var aliases [][]string
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		args, ok := strings.CutPrefix(strings.TrimRight(sc.Text(), "\r"), "//go:generate")
		if !ok || args == "" || (args[0] != ' ' && args[0] != '\t') {
			continue
		}
		words := strings.Fields(args)
		if strings.Contains(args, `"`) {
			words = nil // quoted words would need go generate's own parser; give up
		}
		if n != g.Line {
			if len(words) > 2 && words[0] == "-command" {
				aliases = append(aliases, words)
			}
			continue
		}
		i := lastIndex(words, "generate")
		if i < 1 {
			return nil
		}
		for _, a := range aliases {
			if a[1] == words[0] {
				alias = a // the last definition before the directive is the one in force
			}
		}
		rel, err := filepath.Rel(to, canonical(projectDir))
		if err != nil {
			return nil
		}
		// The project's -C, given last, wins over any -C the directive has.
		cmd := append(relocate(words[:i+1], from, to), "-C", quoteWord(filepath.ToSlash(rel)))
		var lines []string
		if alias != nil {
			lines = append(lines, "//go:generate "+strings.Join(relocate(alias, from, to), " "))
		}
		return append(lines, "//go:generate "+strings.Join(cmd, " "))
	}
	return nil
}

// relocate rewrites the relative paths among words (./bin/jobc, ../tools), which go
// generate resolves against the directory of the directive, for a directive in to
// instead of from.
func relocate(words []string, from, to string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = w
		if w != "." && w != ".." && !strings.HasPrefix(w, "./") && !strings.HasPrefix(w, "../") {
			continue
		}
		rel, err := filepath.Rel(to, filepath.Join(from, filepath.FromSlash(w)))
		if err != nil {
			continue
		}
		rel = filepath.ToSlash(rel)
		if rel != "." && rel != ".." && !strings.HasPrefix(rel, "../") {
			rel = "./" + rel
		}
		out[i] = quoteWord(rel)
	}
	return out
}

func lastIndex(words []string, w string) int {
	for i := len(words) - 1; i >= 0; i-- {
		if words[i] == w {
			return i
		}
	}
	return -1
}

// quoteWord quotes s the way go generate reads a quoted word, when it has to be.
func quoteWord(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\"") {
		return s
	}
	return strconv.Quote(s)
}

// tombstone is the content of a removed job's file that go generate may still read.
func tombstone(pkg string, directive []string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// %s\n\npackage %s\n\n", golang.Header, pkg)
	b.WriteString("// The job type generated into this file was removed while go generate was running,\n")
	b.WriteString("// and go generate still meant to read the file, so jobc emptied it instead of deleting it.\n")
	if len(directive) > 0 {
		b.WriteString("// The directive below runs jobc again when go generate reaches this file; that run\n")
		b.WriteString("// deletes it.\n//\n")
		for _, d := range directive {
			b.WriteString(d + "\n")
		}
	} else {
		b.WriteString("// The next jobc generate deletes it.\n")
	}
	return b.Bytes()
}
