package spec

import (
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/jobc-dev/jobc/generator/internal/confine"
	"github.com/jobc-dev/jobc/internal/dialect"
)

// Source says where a schema came from: a file relative to the project, the dotted
// path of the schema in it for diagnostics ("" for the whole file), and the JSON
// pointer to it ("" for the whole file).
type Source struct {
	File    string
	Path    string
	Pointer string
}

// String returns the source as a reference: schemas/money.yaml#/$defs/Amount.
func (s Source) String() string {
	if s.Pointer == "" {
		return filepath.ToSlash(s.File)
	}
	return filepath.ToSlash(s.File) + "#" + s.Pointer
}

// valueForm is the form of keyword k's value (dialect.AnyValue for a word that is no
// keyword). The resolver follows subschemas, maps and lists of them, and only them: a
// $ref under default, const, enum or examples is data.
func valueForm(k string) dialect.Value {
	row, _ := dialect.Lookup(k)
	return row.Value
}

// target is a schema in another file: the file relative to the project directory,
// and a JSON pointer into it ("" for the whole document).
type target struct{ file, ptr string }

func (t target) String() string {
	if t.ptr == "" {
		return filepath.ToSlash(t.file)
	}
	return filepath.ToSlash(t.file) + "#" + t.ptr
}

// resolver makes one payload version's schema self-contained: it inlines every schema
// that a $ref takes from another file into the root's $defs, and rewrites the $ref to
// "#/$defs/<name>". A $ref inside an inlined schema is resolved against the file it
// was written in, local ("#/...") ones included.
type resolver struct {
	l       *loader
	root    *yaml.Node // the root schema: a copy, rewritten in place
	defs    *yaml.Node // the root's $defs mapping, created on first use
	names   map[string]bool
	done    map[target]string
	stack   []target
	inlined map[string]Source
	visited map[*yaml.Node]bool // schemas walked already: an inlined one is walked once, in its file
	failed  bool
	tooDeep bool // a schema nests deeper than MaxSchemaDepth: reported once per version
}

// MaxSchemaDepth bounds how deeply a schema nests subschemas (properties, items,
// allOf and the other keywords whose values are schemas), counting the schema under
// `schema:`, or one taken from a file by $ref, as level 1. Each level of a nested
// object becomes a Go type named after its parents, so the generated code grows with
// the square of the depth (and the schema validators with it); past this bound a
// spec is refused rather than left to exhaust time and memory. A deeper structure
// can be written with $defs and $ref, whose schemas become types of their own.
const MaxSchemaDepth = 64

// schema builds the Schema of a payload version from the node under `schema:`.
func (l *loader) schema(n node) *Schema {
	root := copyTree(n.Node)
	s := &Schema{File: n.file, Path: n.path, Node: root}
	r := &resolver{l: l, root: root, names: map[string]bool{}, done: map[target]string{}, inlined: map[string]Source{}, visited: map[*yaml.Node]bool{}}
	if defs := mapGet(root, "$defs"); defs != nil {
		if defs.Kind != yaml.MappingNode {
			l.d.add(n.pos(), join(n.path, "$defs"), "$defs must be a mapping of names to schemas")
			return s
		}
		r.defs = defs
		for i := 0; i+1 < len(defs.Content); i += 2 {
			r.names[defs.Content[i].Value] = true
		}
	}
	r.walk(root, n.file, n.path, nil, 1)
	if len(r.inlined) > 0 {
		s.Inlined = r.inlined
	}
	return s
}

// walk resolves the $refs of schema n and its subschemas. doc is the file n was
// inlined from, nil for a schema written in the spec, whose local refs stay as written.
// depth is n's level (see MaxSchemaDepth).
func (r *resolver) walk(n *yaml.Node, file, p string, doc *target, depth int) {
	if n == nil || n.Kind != yaml.MappingNode || r.visited[n] {
		return
	}
	r.visited[n] = true
	if depth > MaxSchemaDepth {
		if !r.tooDeep {
			r.l.d.add(Pos{File: file, Line: n.Line, Col: n.Column}, p, "the schema nests deeper than %d levels: move the inner schemas into $defs and refer to them with $ref", MaxSchemaDepth)
			r.tooDeep = true
		}
		// n is the resolver's copy: made the schema `true` (any value), it keeps the
		// later stages (which still run, to report their own problems) from paying
		// for the depth again, or reporting it twice.
		*n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true", Line: n.Line, Column: n.Column}
		r.failed = true
		return
	}
	r.l.checkDuplicateKeys(n, file, p)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		kp := join(p, k)
		switch {
		case k == "$ref":
			r.ref(v, file, kp, doc)
		case valueForm(k) == dialect.Schema:
			if v.Kind == yaml.SequenceNode { // items as a list, in older drafts
				for j, c := range v.Content {
					r.walk(c, file, join(kp, strconv.Itoa(j)), doc, depth+1)
				}
				continue
			}
			r.walk(v, file, kp, doc, depth+1)
		case valueForm(k) == dialect.SchemaMap && v.Kind == yaml.MappingNode:
			r.l.checkDuplicateKeys(v, file, kp)
			for j := 0; j+1 < len(v.Content); j += 2 {
				r.walk(v.Content[j+1], file, join(kp, v.Content[j].Value), doc, depth+1)
			}
		case valueForm(k) == dialect.SchemaList && v.Kind == yaml.SequenceNode:
			for j, c := range v.Content {
				r.walk(c, file, join(kp, strconv.Itoa(j)), doc, depth+1)
			}
		}
	}
}

// checkDuplicateKeys reports keys that a mapping repeats (the YAML parser keeps both).
func (l *loader) checkDuplicateKeys(n *yaml.Node, file, p string) {
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if seen[k.Value] {
			l.d.add(Pos{File: file, Line: k.Line, Col: k.Column}, join(p, k.Value), "duplicate key %q", k.Value)
		}
		seen[k.Value] = true
	}
}

var uriScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

func (r *resolver) ref(v *yaml.Node, file, p string, doc *target) {
	at := Pos{File: file, Line: v.Line, Col: v.Column}
	if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
		r.l.d.add(at, p, "$ref must be a string, got %s", kindName(v))
		r.failed = true
		return
	}
	ref := v.Value
	if uriScheme.MatchString(ref) {
		r.l.d.add(at, p, "remote $ref %q is not supported: save the schema in the project and refer to it by a relative path such as ./schemas/address.json", ref)
		r.failed = true
		return
	}
	loc, frag, hasFrag := strings.Cut(ref, "#")
	if hasFrag {
		var err error
		if frag, err = url.PathUnescape(frag); err != nil {
			r.l.d.add(at, p, "$ref %q has a badly escaped fragment", ref)
			r.failed = true
			return
		}
		if frag != "" && !strings.HasPrefix(frag, "/") {
			r.l.d.add(at, p, "$ref %q: plain-name fragments ($anchor) are not supported; use a JSON pointer such as #/$defs/Name", ref)
			r.failed = true
			return
		}
	}
	var t target
	switch {
	case loc == "" && doc == nil:
		return // local to the spec's schema: gotype resolves it against the root's $defs
	case loc == "":
		t = target{file: doc.file, ptr: frag}
	default:
		rel, err := url.PathUnescape(loc)
		if err != nil {
			rel = loc
		}
		if path.IsAbs(rel) || filepath.IsAbs(rel) {
			r.l.d.add(at, p, "$ref %q: refer to schema files by a path relative to %s", ref, filepath.ToSlash(file))
			r.failed = true
			return
		}
		t = target{file: filepath.Clean(filepath.Join(filepath.Dir(file), filepath.FromSlash(rel))), ptr: frag}
		if !confine.Lexical(t.file) {
			r.l.d.add(at, p, "$ref %q leads outside the project: schema files must be inside the directory of %s", ref, r.l.configName)
			r.failed = true
			return
		}
	}
	name, ok := r.inline(t, at, p, ref)
	if !ok {
		r.failed = true
		return
	}
	v.Value = "#/$defs/" + escapePointerToken(name)
	v.Style = 0
}

// inline copies the target schema into the root's $defs, once per target, and returns
// its name there.
func (r *resolver) inline(t target, at Pos, p, ref string) (string, bool) {
	if name, ok := r.done[t]; ok {
		return name, true
	}
	for i, s := range r.stack {
		if s == t {
			chain := make([]string, 0, len(r.stack)-i+1)
			for _, c := range r.stack[i:] {
				chain = append(chain, c.String())
			}
			chain = append(chain, t.String())
			r.l.d.add(at, p, "$ref cycle: %s; recursive schemas have no Go type", strings.Join(chain, " → "))
			return "", false
		}
	}
	doc, ok := r.l.document(t.file)
	if !ok {
		r.l.d.add(at, p, "$ref %q: cannot use %s (see the error reported for that file)", ref, filepath.ToSlash(t.file))
		return "", false
	}
	if doc.err != "" {
		r.l.d.add(at, p, "$ref %q: cannot read %s: %s", ref, filepath.ToSlash(t.file), doc.err)
		return "", false
	}
	n, srcPath, err := pointer(doc.root, t.ptr)
	if err != "" {
		r.l.d.add(at, p, "$ref %q: %s has no %s: %s", ref, filepath.ToSlash(t.file), "#"+t.ptr, err)
		return "", false
	}
	if msg := notSchema(n); msg != "" {
		r.l.d.add(at, p, "$ref %q does not point to a JSON Schema: %s", ref, msg)
		return "", false
	}
	name := r.nameFor(t)
	def := copyTree(n)
	if def.Kind == yaml.MappingNode {
		kept := def.Content[:0]
		for i := 0; i+1 < len(def.Content); i += 2 {
			switch def.Content[i].Value {
			case "$defs", "definitions", "$schema", "$id": // resolved by pointer; meaningless once inlined
				continue
			}
			kept = append(kept, def.Content[i], def.Content[i+1])
		}
		def.Content = kept
	}
	if r.defs == nil {
		r.defs = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: r.root.Line, Column: r.root.Column}
		key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "$defs", Line: r.root.Line, Column: r.root.Column}
		r.root.Content = append(r.root.Content, key, r.defs)
	}
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name, Line: n.Line, Column: n.Column}
	r.defs.Content = append(r.defs.Content, key, def)
	r.inlined[name] = Source{File: t.file, Path: srcPath, Pointer: t.ptr}
	r.stack = append(r.stack, t)
	r.walk(def, t.file, srcPath, &t, 1)
	r.stack = r.stack[:len(r.stack)-1]
	r.done[t] = name
	return name, true
}

// nameFor picks the $defs name of an inlined schema: the last token of its pointer,
// or else the file's name without extension (address.schema.json → address); the
// file's name and the token together, then a number, when that name is taken.
func (r *resolver) nameFor(t target) string {
	stem := filepath.Base(t.file)
	for _, ext := range []string{".json", ".yaml", ".yml", ".schema"} {
		if s, ok := strings.CutSuffix(strings.ToLower(stem), ext); ok && s != "" {
			stem = stem[:len(s)]
		}
	}
	candidates := []string{stem}
	if t.ptr != "" {
		last := t.ptr[strings.LastIndex(t.ptr, "/")+1:]
		last = strings.ReplaceAll(strings.ReplaceAll(last, "~1", "/"), "~0", "~")
		candidates = []string{last, stem + "_" + last}
	}
	for _, c := range candidates {
		if c != "" && !r.names[c] {
			r.names[c] = true
			return c
		}
	}
	base := candidates[len(candidates)-1]
	for i := 2; ; i++ {
		if c := base + strconv.Itoa(i); !r.names[c] {
			r.names[c] = true
			return c
		}
	}
}

// extDoc is a parsed schema file; err says why it cannot be read.
type extDoc struct {
	root *yaml.Node
	err  string
}

// document returns the parsed schema file name (relative to the project), parsing it
// on first use. ok is false when the file exists but is not valid JSON or YAML: that
// was reported once, in the file itself.
func (l *loader) document(name string) (doc *extDoc, ok bool) {
	if d, seen := l.docs[name]; seen {
		return d, d != nil
	}
	b, err := l.readFile(name)
	if err != nil {
		d := &extDoc{err: err.Error()}
		l.docs[name] = d
		return d, true
	}
	root := l.parseBytes(name, b)
	if root == nil {
		l.docs[name] = nil
		return nil, false
	}
	d := &extDoc{root: root}
	l.docs[name] = d
	return d, true
}

// pointer follows a JSON pointer from root. It returns the node, its dotted path, or
// why it does not resolve.
func pointer(root *yaml.Node, ptr string) (*yaml.Node, string, string) {
	n, p := root, ""
	if ptr == "" {
		return n, p, ""
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch n.Kind {
		case yaml.MappingNode:
			next := mapGet(n, tok)
			if next == nil {
				return nil, "", "no member " + strconv.Quote(tok) + atPath(p)
			}
			n = next
		case yaml.SequenceNode:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n.Content) || strconv.Itoa(i) != tok {
				return nil, "", "no element " + strconv.Quote(tok) + atPath(p)
			}
			n = resolveAlias(n.Content[i])
		default:
			return nil, "", strconv.Quote(tok) + " goes into a scalar" + atPath(p)
		}
		p = join(p, tok)
	}
	return n, p, ""
}

func atPath(p string) string {
	if p == "" {
		return ""
	}
	return " under " + p
}

// schemaHints are keywords of which a JSON Schema mapping has at least one; a mapping
// with none of them (and at least one key) is some other document.
var schemaHints = []string{
	"type", "properties", "items", "$ref", "enum", "const", "$defs", "definitions", "allOf",
	"anyOf", "oneOf", "not", "additionalProperties", "required", "format", "$schema", "$id",
}

func notSchema(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!!bool":
		return ""
	case n.Kind != yaml.MappingNode:
		return "want a mapping, got " + kindName(n)
	case len(n.Content) == 0:
		return ""
	}
	for _, h := range schemaHints {
		if mapGet(n, h) != nil {
			return ""
		}
	}
	return "it has none of the keywords " + strings.Join(schemaHints[:6], ", ") + ", ..."
}

// mapGet returns the value under key of a mapping node, or nil.
func mapGet(n *yaml.Node, key string) *yaml.Node {
	n = resolveAlias(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return resolveAlias(n.Content[i+1])
		}
	}
	return nil
}

func join(p, key string) string {
	if p == "" {
		return key
	}
	return p + "." + key
}

// escapePointerToken escapes a JSON-pointer token (RFC 6901) for use in a $ref.
func escapePointerToken(s string) string {
	s = strings.ReplaceAll(s, "~", "~0")
	s = strings.ReplaceAll(s, "/", "~1")
	return (&url.URL{Fragment: s}).EscapedFragment()
}
