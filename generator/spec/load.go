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

	"github.com/jobc-dev/jobc/generator/internal/confine"
)

// Job defaults, documented in docs/spec.md.
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
	// root opens the project's files; it refuses names that lead outside dir.
	root *os.Root
	// configName is the config file's name, which the project is the directory of.
	configName string
	d          diags
	// kinds remembers where each kind and alias was declared, to report clashes.
	kinds map[string]kindDecl
	// eventNames remembers where each event was declared.
	eventNames map[string]Pos
	// workflowNames remembers where each workflow was declared.
	workflowNames map[string]Pos
	// classes holds every error class name declared, valid or not, so that a class
	// with a problem of its own is not also reported as undeclared where it is used.
	classes map[string]bool
	// includePos is where each include pattern is written.
	includePos []node
	// docs caches the schema files that $refs name, by path relative to dir; nil for a
	// file that is not valid JSON or YAML.
	docs map[string]*extDoc
}

// Load reads the config file in dir (see ConfigNames) and every job file it includes,
// and checks the result. File names in diagnostics are relative to dir. The error, if
// any, is Diagnostics listing every problem found. With such an error, the project is
// still returned, holding what could be loaded, so that later stages can report their
// problems in the same run; it is nil only when the config file could not be read.
func Load(dir string) (*Project, error) {
	l := &loader{dir: dir, kinds: map[string]kindDecl{}, eventNames: map[string]Pos{}, workflowNames: map[string]Pos{}, classes: map[string]bool{}, docs: map[string]*extDoc{}}
	name, err := findConfig(dir)
	if err != nil {
		return nil, err
	}
	if l.root, err = os.OpenRoot(dir); err != nil {
		return nil, fmt.Errorf("jobc: %w", err)
	}
	defer l.root.Close()
	l.configName = name
	p := &Project{Dir: dir, File: name, Types: map[string]GoType{}, Defaults: Defaults{Queue: DefaultQueue}}
	root, ok := l.parse(name)
	if !ok {
		return nil, l.d.err()
	}
	l.config(root, p)
	for _, f := range l.includedFiles(p) {
		if r, ok := l.parse(f); ok {
			l.jobFile(r, p)
		}
	}
	sort.Slice(p.Jobs, func(i, j int) bool { return p.Jobs[i].Kind < p.Jobs[j].Kind })
	sort.Slice(p.Events, func(i, j int) bool { return p.Events[i].Name < p.Events[j].Name })
	sort.Slice(p.Workflows, func(i, j int) bool { return p.Workflows[i].Name < p.Workflows[j].Name })
	l.check(p)
	return p, l.d.err()
}

// includedFiles expands the include patterns, in order, each file once; the config
// file itself is never included.
func (l *loader) includedFiles(p *Project) []string {
	seen := map[string]bool{filepath.Clean(p.File): true}
	var files []string
	for i, pattern := range p.Include {
		at := l.includePos[i]
		if !confine.Lexical(filepath.FromSlash(pattern)) {
			l.d.add(at.pos(), at.path, "include pattern %q leads outside the project: patterns are relative to the directory of %s and stay inside it", pattern, l.configName)
			continue
		}
		matches, err := glob(l.dir, pattern)
		var out *confine.OutsideError
		if errors.As(err, &out) {
			l.d.add(at.pos(), at.path, "include pattern %q: %v", pattern, err)
			continue
		}
		if err != nil {
			l.d.add(at.pos(), at.path, "bad glob %q: %v", pattern, err)
			continue
		}
		if len(matches) == 0 {
			l.d.add(at.pos(), at.path, "glob %q matches no file", pattern)
		}
		for _, m := range matches {
			if !seen[m] {
				seen[m] = true
				files = append(files, m)
			}
		}
	}
	return files
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

// parse reads one YAML file; name is relative to l.dir.
func (l *loader) parse(name string) (node, bool) {
	n := l.parseFile(name)
	if n == nil {
		return node{}, false
	}
	return node{Node: n, file: name}, true
}

func (l *loader) config(root node, p *Project) {
	var jobs, events, workflows, classes node
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
				if s == "" {
					l.d.add(v.pos(), v.path, `is empty: name a directory inside the project ("." for the project's own)`)
				} else if !confine.Lexical(s) {
					l.d.add(v.pos(), v.path, "%q must be a directory inside the project", s)
				}
				p.Out, p.OutPos = filepath.Clean(s), v.pos()
			}
		},
		"include": func(v node) {
			if s, ok := l.strings(v); ok {
				p.Include = s
				for i, c := range v.Content {
					l.includePos = append(l.includePos, v.at(strconv.Itoa(i), c))
				}
			}
		},
		"types":         func(v node) { l.types(v, p) },
		"defaults":      func(v node) { l.defaults(v, p) },
		"error_classes": func(v node) { classes = v },
		"jobs":          func(v node) { jobs = v },
		"producers":     func(v node) { l.producers(v, p) },
		"events":        func(v node) { events = v },
		"queues":        func(v node) { l.queues(v, p) },
		"workflows":     func(v node) { workflows = v },
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
	if events.Node != nil {
		l.events(events, p)
	}
	if workflows.Node != nil {
		l.workflows(workflows, p)
	}
}

// producers reads the producers section: the file each producer language gets.
func (l *loader) producers(n node, p *Project) {
	file := func(v node, ext string, to *string, at *Pos) {
		s, ok := l.str(v)
		if !ok {
			return
		}
		clean := filepath.Clean(s)
		switch {
		case !confine.Lexical(s):
			l.d.add(v.pos(), v.path, "%q must be a file inside the project", s)
		case filepath.Ext(clean) != ext:
			l.d.add(v.pos(), v.path, "%q must be a %s file", s, ext)
		default:
			*to, *at = filepath.ToSlash(clean), v.pos()
		}
	}
	l.mapping(n, map[string]field{
		"sql":        func(v node) { file(v, ".sql", &p.Producers.SQL, &p.Producers.SQLPos) },
		"typescript": func(v node) { file(v, ".ts", &p.Producers.TypeScript, &p.Producers.TypeScriptPos) },
	})
}

var (
	goIdent    = regexp.MustCompile(`^[a-z][a-z0-9]*$`)
	goTypeName = regexp.MustCompile(`^[\pL_][\pL\pN_]*$`)
	importPath = regexp.MustCompile(`^[\pL\pN_.~+-]+(/[\pL\pN_.~+-]+)*$`)
)

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
		if !goTypeName.MatchString(t.Name) {
			l.d.add(v.pos(), v.path, "%q is not a Go type name: write the type without * or []", t.Name)
			return
		}
		if t.Import != "" && !importPath.MatchString(t.Import) {
			l.d.add(v.pos(), v.path, "%q is not a Go import path", t.Import)
			return
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
	l.classes[k.Value] = true
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
	if b != nil {
		l.checkBackoff(v, present, b)
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
	var jobs, events, workflows node
	l.mapping(root, map[string]field{"jobs": func(v node) { jobs = v }, "events": func(v node) { events = v },
		"workflows": func(v node) { workflows = v }})
	if jobs.Node != nil {
		l.jobs(jobs, p)
	}
	if events.Node != nil {
		l.events(events, p)
	}
	if workflows.Node != nil {
		l.workflows(workflows, p)
	}
}

// kindDecl is where a kind, or an alias of the kind aliasOf, is declared.
type kindDecl struct {
	pos     Pos
	aliasOf string
}

// claimKind records kind (or an alias of aliasOf), reporting a name declared before.
func (l *loader) claimKind(at node, name, aliasOf string) bool {
	prev, dup := l.kinds[name]
	if !dup {
		l.kinds[name] = kindDecl{pos: at.pos(), aliasOf: aliasOf}
		return true
	}
	what := "job kind"
	if aliasOf != "" {
		what = "alias"
	}
	switch {
	case prev.aliasOf != "":
		l.d.add(at.pos(), at.path, "%s %q is already an alias of %s, declared at %s", what, name, prev.aliasOf, prev.pos)
	case aliasOf != "":
		l.d.add(at.pos(), at.path, "alias %q is already a job kind, declared at %s", name, prev.pos)
	default:
		l.d.add(at.pos(), at.path, "job kind %q is already declared at %s", name, prev.pos)
	}
	return false
}

func (l *loader) jobs(n node, p *Project) {
	l.entries(n, func(k, v node) {
		if !l.checkName(k, k.Value, "job kind") {
			return
		}
		if !l.claimKind(k, k.Value, "") {
			return
		}
		if j := l.job(k, v, p); j != nil {
			p.Jobs = append(p.Jobs, j)
		}
	})
}
