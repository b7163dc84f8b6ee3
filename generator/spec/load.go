package spec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Job defaults, documented in the README's spec reference.
const (
	DefaultQueue       = "default"
	DefaultPriority    = 5
	DefaultMaxAttempts = 25
)

// DefaultBackoff applies to jobs that declare no backoff.
func DefaultBackoff() Backoff {
	return Backoff{Kind: Exponential, Initial: 1e9, Max: 3600e9, Jitter: 0.1}
}

// loader accumulates diagnostics while it reads files.
type loader struct {
	dir string
	d   diags
	// kindFiles remembers where each kind and alias was declared, to report clashes.
	kindPos map[string]Pos
}

// Load reads the config file in dir (see ConfigNames) and every job file it includes,
// and checks the result. File names in diagnostics are relative to dir. The error, if
// any, is Diagnostics listing every problem found.
func Load(dir string) (*Project, error) {
	l := &loader{dir: dir, kindPos: map[string]Pos{}}
	name, err := findConfig(dir)
	if err != nil {
		return nil, err
	}
	p := &Project{Dir: dir, File: name, Types: map[string]GoType{}, Defaults: Defaults{Queue: DefaultQueue}}
	root, ok := l.parse(name)
	if !ok {
		return nil, l.d.err()
	}
	l.config(root, p)
	for _, pattern := range p.Include {
		matches, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			l.d.add(Pos{File: name, Line: 1, Col: 1}, "include", "bad glob %q: %v", pattern, err)
			continue
		}
		if len(matches) == 0 {
			l.d.add(Pos{File: name, Line: 1, Col: 1}, "include", "glob %q matches no file", pattern)
		}
		sort.Strings(matches)
		for _, m := range matches {
			rel, _ := filepath.Rel(dir, m)
			if r, ok := l.parse(rel); ok {
				l.jobFile(r, p)
			}
		}
	}
	sort.Slice(p.Jobs, func(i, j int) bool { return p.Jobs[i].Kind < p.Jobs[j].Kind })
	if len(l.d.list) == 0 {
		l.check(p)
	}
	if err := l.d.err(); err != nil {
		return nil, err
	}
	return p, nil
}

func findConfig(dir string) (string, error) {
	for _, n := range ConfigNames() {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return n, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("jobc: %w", err)
		}
	}
	return "", fmt.Errorf("jobc: no %s in %s: run `jobc init` to create one", ConfigNames()[0], displayDir(dir))
}

func displayDir(dir string) string {
	if dir == "." || dir == "" {
		return "the current directory"
	}
	return dir
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parse reads one YAML file; name is relative to l.dir.
func (l *loader) parse(name string) (node, bool) {
	b, err := os.ReadFile(filepath.Join(l.dir, name))
	if err != nil {
		l.d.add(Pos{File: name, Line: 1, Col: 1}, "", "cannot read: %v", err)
		return node{}, false
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		line, msg := 1, err.Error()
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = m[2]
			// The YAML parser reports these at the line before the list or mapping it
			// could not finish; point at that construct instead.
			if strings.HasPrefix(msg, "did not find expected") {
				line++
				msg += " in the list or mapping that starts on this line"
			}
		}
		l.d.add(Pos{File: name, Line: line, Col: 1}, "", "invalid YAML: %s", msg)
		return node{}, false
	}
	if len(doc.Content) == 0 {
		l.d.add(Pos{File: name, Line: 1, Col: 1}, "", "the file is empty")
		return node{}, false
	}
	return node{Node: resolveAlias(doc.Content[0]), file: name}, true
}

func (l *loader) config(root node, p *Project) {
	var jobs, classes node
	present := l.mapping(root, map[string]field{
		"version": func(v node) {
			if n, ok := l.integer(v); ok {
				if n != 1 {
					l.d.add(v.pos(), v.path, "unsupported config version %d: this jobc reads version 1", n)
				}
				p.Version = n
			}
		},
		"package": func(v node) {
			if s, ok := l.str(v); ok {
				if !goIdent.MatchString(s) {
					l.d.add(v.pos(), v.path, "%q is not a valid Go package name", s)
				}
				p.Package = s
			}
		},
		"out": func(v node) {
			if s, ok := l.str(v); ok {
				if filepath.IsAbs(s) || strings.HasPrefix(filepath.Clean(s), "..") {
					l.d.add(v.pos(), v.path, "%q must be a directory inside the project", s)
				}
				p.Out = filepath.Clean(s)
			}
		},
		"include": func(v node) {
			if s, ok := l.strings(v); ok {
				p.Include = s
			}
		},
		"types":         func(v node) { l.types(v, p) },
		"defaults":      func(v node) { l.defaults(v, p) },
		"error_classes": func(v node) { classes = v },
		"jobs":          func(v node) { jobs = v },
	})
	if present == nil {
		return
	}
	for _, k := range []string{"version", "package", "out"} {
		if _, ok := present[k]; !ok {
			l.d.add(root.pos(), "", "missing required key %q", k)
		}
	}
	if classes.Node != nil {
		l.entries(classes, func(k, v node) { l.errorClass(k, v, p) })
	}
	if jobs.Node != nil {
		l.jobs(jobs, p)
	}
}

var goIdent = regexp.MustCompile(`^[a-z][a-z0-9]*$`)

func (l *loader) types(n node, p *Project) {
	l.entries(n, func(k, v node) {
		var t GoType
		switch v.Kind {
		case yaml.ScalarNode:
			s, ok := l.str(v)
			if !ok {
				return
			}
			i := strings.LastIndex(s, ".")
			if i <= 0 || i == len(s)-1 || strings.Contains(s[i:], "/") {
				l.d.add(v.pos(), v.path, "want import/path.TypeName such as github.com/google/uuid.UUID, got %q", s)
				return
			}
			t = GoType{Import: s[:i], Name: s[i+1:]}
		default:
			l.mapping(v, map[string]field{
				"import": func(v node) { t.Import, _ = l.str(v) },
				"type":   func(v node) { t.Name, _ = l.str(v) },
			})
			if t.Name == "" {
				l.d.add(v.pos(), v.path, "missing required key %q", "type")
				return
			}
		}
		p.Types[k.Value] = t
	})
}

func (l *loader) defaults(n node, p *Project) {
	l.mapping(n, map[string]field{
		"queue": func(v node) {
			if s, ok := l.str(v); ok && l.checkName(v, s, "queue") {
				p.Defaults.Queue = s
			}
		},
		"timeout": func(v node) { p.Defaults.Timeout, _ = l.duration(v) },
	})
}

var snakeName = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// checkName requires lower snake_case names for kinds, queues and classes: they become
// Go identifiers and SQL values, and must read the same everywhere.
func (l *loader) checkName(n node, s, what string) bool {
	if !snakeName.MatchString(s) || len(s) > 100 {
		l.d.add(n.pos(), n.path, "%s name %q must be lower snake_case (a-z, 0-9, single underscores), at most 100 characters", what, s)
		return false
	}
	return true
}

func (l *loader) errorClass(k, v node, p *Project) {
	if !l.checkName(k, k.Value, "error class") {
		return
	}
	c := &ErrorClass{Name: k.Value, Pos: k.pos()}
	var b *Backoff
	backoff := func() *Backoff {
		if b == nil {
			d := DefaultBackoff()
			b = &d
		}
		return b
	}
	present := l.mapping(v, map[string]field{
		"description": func(v node) { c.Description, _ = l.str(v) },
		"retry":       func(v node) { c.Retry, _ = l.boolean(v) },
		"backoff":     func(v node) { l.backoffKind(v, backoff()) },
		"initial":     func(v node) { backoff().Initial, _ = l.duration(v) },
		"max":         func(v node) { backoff().Max, _ = l.duration(v) },
		"jitter":      func(v node) { l.jitter(v, backoff()) },
		"delay": func(v node) {
			if s, ok := l.str(v); ok {
				if s != "from_error" {
					l.d.add(v.pos(), v.path, "want from_error (the handler supplies the delay), got %q", s)
				}
				c.DelayFromError = true
			}
		},
		"max_attempts": func(v node) {
			if n, ok := l.integer(v); ok {
				if n < 1 {
					l.d.add(v.pos(), v.path, "max_attempts must be at least 1, got %d", n)
				}
				c.MaxAttempts = n
			}
		},
	})
	if present == nil {
		return
	}
	if _, ok := present["retry"]; !ok {
		l.d.add(v.pos(), v.path, "missing required key %q: say whether errors of this class are retried", "retry")
	}
	if !c.Retry {
		for _, key := range []string{"backoff", "initial", "max", "jitter", "delay", "max_attempts"} {
			if kv, ok := present[key]; ok {
				l.d.add(kv.pos(), kv.path, "has no effect: class %s is never retried (retry: false)", c.Name)
			}
		}
	}
	c.Backoff = b
	p.Classes = append(p.Classes, c)
}

func (l *loader) backoffKind(v node, b *Backoff) {
	s, ok := l.str(v)
	if !ok {
		return
	}
	switch k := BackoffKind(s); k {
	case Exponential, Linear, Constant:
		b.Kind = k
	default:
		l.d.add(v.pos(), v.path, "unknown backoff %q: want exponential, linear or constant", s)
	}
}

func (l *loader) jitter(v node, b *Backoff) {
	if f, ok := l.number(v); ok {
		if f < 0 || f > 1 {
			l.d.add(v.pos(), v.path, "jitter must be between 0 and 1, got %v", f)
		}
		b.Jitter = f
	}
}

func (l *loader) jobFile(root node, p *Project) {
	var jobs node
	l.mapping(root, map[string]field{"jobs": func(v node) { jobs = v }})
	if jobs.Node != nil {
		l.jobs(jobs, p)
	}
}

func (l *loader) jobs(n node, p *Project) {
	l.entries(n, func(k, v node) {
		if !l.checkName(k, k.Value, "job kind") {
			return
		}
		if prev, dup := l.kindPos[k.Value]; dup {
			l.d.add(k.pos(), k.path, "job kind %q is already declared at %s", k.Value, prev)
			return
		}
		l.kindPos[k.Value] = k.pos()
		if j := l.job(k, v, p); j != nil {
			p.Jobs = append(p.Jobs, j)
		}
	})
}
