package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/jobc-dev/jobc/generator/internal/confine"
)

// Limits that keep a hostile or broken file from exhausting the generator.
const (
	maxFileSize = 8 << 20 // bytes of one spec or schema file
	// maxAliasNodes bounds the nodes that YAML aliases add to one file when expanded,
	// so that an alias bomb ("billion laughs") is an error, not an out-of-memory
	// crash. The file's own nodes are bounded by its size alone: a large spec without
	// aliases is not an alias bomb.
	maxAliasNodes = 100_000
)

// readFile reads a regular file of at most maxFileSize bytes; name is relative to the
// project directory. A name that leads outside the project, by ".." or through a
// symbolic link, is a *confine.OutsideError: a spec may only read its own project,
// and the content of a file outside it must never reach a diagnostic.
func (l *loader) readFile(name string) ([]byte, error) {
	real, err := confine.Resolve(l.dir, name)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	if real == "" {
		real = "."
	}
	// Resolve gives the clear error; the root refuses the same escapes when opening
	// the path it resolved to, so a link that changes in between cannot lead out.
	f, err := l.root.Open(real)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, unwrapPathError(err)
	}
	if !info.Mode().IsRegular() {
		if info.IsDir() {
			return nil, errors.New("is a directory")
		}
		return nil, errors.New("is not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, unwrapPathError(err)
	}
	if len(b) > maxFileSize {
		return nil, fmt.Errorf("larger than %d MiB", maxFileSize>>20)
	}
	return b, nil
}

// unwrapPathError drops the path from an *fs.PathError: diagnostics name the file
// already, relative to the project.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlErrorPos returns where in b the YAML syntax error err is, and its message.
//
// The parser names a line, but for the errors of its grammar ("did not find expected
// key", ...) that is where the list or mapping it could not finish starts, counted
// from 0, and the offending line may be many lines further down: a key indented one
// space off at the end of a long mapping. The offending line is the first at which
// the document stops parsing the same way: the shortest prefix of whole lines that
// fails with the same error ends with it (offendingLine). The column is that of the
// line's first token.
func yamlErrorPos(b []byte, err error) (Pos, string) {
	m := yamlLine.FindStringSubmatch(err.Error())
	if m == nil {
		return Pos{Line: 1, Col: 1}, strings.TrimPrefix(err.Error(), "yaml: ")
	}
	reported, _ := strconv.Atoi(m[1])
	msg := m[2]
	// ends[i] is the offset just past line i+1, its line break included; the line
	// breaks that end the file start no line: the parser may count one past the end.
	text := bytes.TrimRight(b, "\n")
	var ends []int
	for i, c := range text {
		if c == '\n' {
			ends = append(ends, i+1)
		}
	}
	ends = append(ends, len(b))
	lines := len(ends)
	line := min(max(reported, 1), lines)
	construct := 0 // the line where the unfinished list or mapping starts
	if strings.HasPrefix(msg, "did not find expected") {
		construct = min(reported+1, lines)
		line = construct
	}
	// A stream that ends inside a construct is reported where the construct starts;
	// any prefix would fail the same way, so there is nothing to search.
	if !strings.Contains(msg, "end of stream") {
		line = offendingLine(b, ends, err, line)
	}
	switch construct {
	case 0:
	case line:
		msg += " in the list or mapping that starts on this line"
	default:
		msg += fmt.Sprintf(" in the list or mapping that starts on line %d", construct)
	}
	col := 1
	if i := bytes.IndexFunc(lineAt(b, ends, line), func(r rune) bool { return r != ' ' && r != '\t' }); i >= 0 {
		col = i + 1
	}
	return Pos{Line: line, Col: col}, msg
}

// offendingLine returns the first line n >= from such that the prefix of b through
// line n fails to parse with err, the error of the whole of b.
//
// The parser reads its input as it goes, so the bytes it had read when it failed end
// a few lines past the offending one: the search starts there and gallops back,
// then bisects, each step a parse of a prefix. A file broken near its end costs
// about twice the parses of one broken near its start, not log2 of its length.
func offendingLine(b []byte, ends []int, err error, from int) int {
	fails := func(n int) bool {
		var doc yaml.Node
		e := yaml.Unmarshal(b[:ends[n-1]], &doc)
		return e != nil && e.Error() == err.Error()
	}
	lines := len(ends)
	hi := lines // fails(lines): the whole of b fails
	r := &countingReader{r: bytes.NewReader(b)}
	var doc yaml.Node
	if e := yaml.NewDecoder(r).Decode(&doc); e != nil && e.Error() == err.Error() {
		if n := sort.SearchInts(ends, r.n); n < lines && n+1 >= from && fails(n+1) {
			hi = n + 1
		}
	}
	// Gallop back from hi to a line whose prefix parses (or from), then bisect.
	lo := from
	for step := 1; hi-step > from; step *= 2 {
		if !fails(hi - step) {
			lo = hi - step + 1
			break
		}
		hi -= step
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if fails(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// lineAt returns line n (from 1) of b without its line break; ends are the offsets
// just past each line.
func lineAt(b []byte, ends []int, n int) []byte {
	start := 0
	if n > 1 {
		start = ends[n-2]
	}
	return bytes.TrimRight(b[start:ends[n-1]], "\r\n")
}

// parseFile reads and parses one file, JSON when its name ends in .json and YAML
// otherwise; name is relative to l.dir. It reports problems and returns nil for a file
// that cannot be used. The returned node is the document's root, never an alias.
func (l *loader) parseFile(name string) *yaml.Node {
	b, err := l.readFile(name)
	if err != nil {
		l.d.add(Pos{File: name, Line: 1, Col: 1}, "", "cannot read: %v", err)
		return nil
	}
	return l.parseBytes(name, b)
}

// parseBytes parses the content of file name; see parseFile.
func (l *loader) parseBytes(name string, b []byte) *yaml.Node {
	var root *yaml.Node
	if strings.EqualFold(filepath.Ext(name), ".json") {
		n, pos, err := parseJSON(b)
		if err != nil {
			l.d.add(Pos{File: name, Line: pos.Line, Col: pos.Col}, "", "invalid JSON: %v", err)
			return nil
		}
		root = n
	} else {
		var doc yaml.Node
		if err := yaml.Unmarshal(b, &doc); err != nil {
			pos, msg := yamlErrorPos(b, err)
			pos.File = name
			l.d.add(pos, "", "invalid YAML: %s", msg)
			return nil
		}
		if len(doc.Content) == 0 {
			l.d.add(Pos{File: name, Line: 1, Col: 1}, "", "the file is empty")
			return nil
		}
		root = doc.Content[0]
	}
	if !l.checkAliases(name, root) {
		return nil
	}
	return resolveAlias(root)
}

// checkAliases reports a YAML alias that refers to a node containing it, and aliases
// that expand the document by more than maxAliasNodes nodes. Everything after loading
// may then expand aliases freely.
func (l *loader) checkAliases(file string, root *yaml.Node) bool {
	// Without aliases no subtree has more nodes than the file; with them, one that has
	// more than the file plus maxAliasNodes got those from aliases.
	limit := literalNodes(root) + maxAliasNodes
	size := map[*yaml.Node]int{}
	onStack := map[*yaml.Node]bool{}
	var count func(n *yaml.Node) (int, bool)
	count = func(n *yaml.Node) (int, bool) {
		if n == nil {
			return 0, true
		}
		if s, ok := size[n]; ok {
			return s, true
		}
		if onStack[n] {
			return 0, false
		}
		onStack[n] = true
		defer delete(onStack, n)
		total := 1
		if n.Kind == yaml.AliasNode {
			s, ok := count(n.Alias)
			if !ok {
				if n.Alias != nil && onStack[n.Alias] {
					l.d.add(Pos{File: file, Line: n.Line, Col: n.Column}, "", "YAML alias *%s refers to a node that contains it", n.Value)
				}
				return 0, false
			}
			total = s
		}
		for _, c := range n.Content {
			s, ok := count(c)
			if !ok {
				return 0, false
			}
			total += s
			if total > limit {
				break
			}
		}
		if total > limit {
			l.d.add(Pos{File: file, Line: n.Line, Col: n.Column}, "", "YAML aliases expand this to more than %d nodes: the file has %d, and aliases may add at most %d", limit, limit-maxAliasNodes, maxAliasNodes)
			return 0, false
		}
		size[n] = total
		return total, true
	}
	_, ok := count(root)
	return ok
}

// literalNodes counts the nodes of a document as written, an alias as one node.
func literalNodes(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	total := 1
	for _, c := range n.Content {
		total += literalNodes(c)
	}
	return total
}

// copyTree returns a deep copy of n with every alias replaced by a copy of its target.
// It must only see trees that passed checkAliases.
func copyTree(n *yaml.Node) *yaml.Node {
	n = resolveAlias(n)
	if n == nil {
		return nil
	}
	c := *n
	c.Anchor = ""
	c.Content = nil
	if len(n.Content) > 0 {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, ch := range n.Content {
			c.Content[i] = copyTree(ch)
		}
	}
	return &c
}
