package doccheck

import (
	"bufio"
	"bytes"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// root is the repository root, relative to this package.
const root = "../.."

// markdownFiles returns every Markdown file of the repository, relative to root,
// leaving out hidden directories and installed node packages.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && (strings.HasPrefix(name, ".") || name == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(name, ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// link is one Markdown link of a file: its target and the line it is on.
type link struct {
	target string
	line   int
}

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// parse returns the links of a Markdown document outside fenced code blocks and
// inline code, and the anchors its headings make, as GitHub makes them.
func parse(doc []byte) (links []link, anchors map[string]bool) {
	anchors = map[string]bool{}
	seen := map[string]int{}
	fenced := false
	sc := bufio.NewScanner(bytes.NewReader(doc))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if h, ok := heading(line); ok {
			a := slug(h)
			if k := seen[a]; k > 0 {
				anchors[a+"-"+strconv.Itoa(k)] = true
			} else {
				anchors[a] = true
			}
			seen[a]++
		}
		for _, m := range linkRE.FindAllStringSubmatchIndex(line, -1) {
			if strings.Count(line[:m[0]], "`")%2 == 1 {
				continue // inside inline code
			}
			links = append(links, link{target: line[m[2]:m[3]], line: n})
		}
	}
	return links, anchors
}

// heading returns the text of an ATX heading line.
func heading(line string) (string, bool) {
	t := strings.TrimLeft(line, "#")
	if t == line || len(line)-len(t) > 6 || !strings.HasPrefix(t, " ") {
		return "", false
	}
	return strings.TrimSpace(t), true
}

// slug is GitHub's anchor of a heading: lower case, letters, digits, - and _ kept,
// spaces to hyphens, the rest (punctuation, symbols such as ×) dropped.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestLinks: every relative link of every Markdown file names a file or directory
// that exists, and every #anchor one of the target document's headings.
func TestLinks(t *testing.T) {
	files := markdownFiles(t)
	if len(files) < 10 {
		t.Fatalf("found %d Markdown files, want the README, docs/ and more", len(files))
	}
	anchorsOf := map[string]map[string]bool{}
	linksOf := map[string][]link{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		linksOf[f], anchorsOf[f] = parse(b)
	}
	checked := 0
	for _, f := range files {
		for _, l := range linksOf[f] {
			if u, err := url.Parse(l.target); err == nil && u.Scheme != "" {
				continue // http, https, mailto: not checked offline
			}
			target, frag, _ := strings.Cut(l.target, "#")
			path := f
			if target != "" {
				path = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(f), target)))
				if strings.HasPrefix(path, "../") {
					t.Errorf("%s:%d: link %s leads outside the repository", f, l.line, l.target)
					continue
				}
				if _, err := os.Stat(filepath.Join(root, path)); err != nil {
					t.Errorf("%s:%d: link %s: %s does not exist", f, l.line, l.target, path)
					continue
				}
			}
			checked++
			if frag == "" {
				continue
			}
			anchors, ok := anchorsOf[path]
			if !ok {
				t.Errorf("%s:%d: link %s: an anchor into %s, which is not a Markdown file", f, l.line, l.target, path)
				continue
			}
			if !anchors[frag] {
				t.Errorf("%s:%d: link %s: %s has no heading with anchor #%s", f, l.line, l.target, path, frag)
			}
		}
	}
	if checked < 50 {
		t.Errorf("checked %d relative links, want at least 50: is the link pattern still right?", checked)
	}
}

// TestREADMEIndexesDocs: the README's documentation index links every page of docs/,
// and the README stays a front door of at most 250 lines (the reference is in docs/).
func TestREADMEIndexesDocs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n > 250 {
		t.Errorf("README.md has %d lines, want at most 250: move reference material to docs/", n)
	}
	_, index, ok := strings.Cut(string(b), "\n## Documentation\n")
	if !ok {
		t.Fatal(`README.md has no "## Documentation" section`)
	}
	index, _, _ = strings.Cut(index, "\n## ")
	links, _ := parse([]byte(index))
	var linked []string
	for _, l := range links {
		linked = append(linked, l.target)
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("no docs/*.md")
	}
	for _, p := range pages {
		if want := "docs/" + filepath.Base(p); !slices.Contains(linked, want) {
			t.Errorf("README.md's documentation index does not link %s", want)
		}
	}
}
