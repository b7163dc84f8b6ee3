package confine_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/jobc-dev/jobc/generator/internal/confine"
)

// TestResolve builds a project next to a directory outside it and resolves names
// that reach out in every way a committed file can: "..", absolute paths, and links
// (relative, absolute, chained, dangling, in the middle of the name or at its end).
func TestResolve(t *testing.T) {
	base := t.TempDir()
	proj, outside := filepath.Join(base, "proj"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(proj, "real", "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"up":           "../outside",
		"abs_out":      outside,
		"abs_in":       filepath.Join(proj, "real"),
		"in":           "real",
		"chain":        "in/sub",
		"chain_out":    "up",
		"real/sub/esc": "../../../outside/x",
		"real/sub/ok":  "../../real",
		"dangling_out": "../outside/missing/file",
		"dangling_in":  "real/missing",
		"loop_a":       "loop_b",
		"loop_b":       "loop_a",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(proj, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, want, link string // link: the link named by the OutsideError; "-" for a lexical one
	}{
		{name: "real/sub/new.go", want: "real/sub/new.go"},
		{name: "missing/a/b", want: "missing/a/b"},
		{name: "in/sub", want: "real/sub"},
		{name: "chain/x.go", want: "real/sub/x.go"},
		{name: "abs_in/sub", want: "real/sub"},
		{name: "real/sub/ok/sub", want: "real/sub"},
		{name: "dangling_in", want: "real/missing"},
		{name: "real/../in", want: "real"},
		{name: "../outside", link: "-"},
		{name: "real/../../outside", link: "-"},
		{name: filepath.Join(outside, "x"), link: "-"},
		{name: "up", link: "up"},
		{name: "up/x.go", link: "up"},
		{name: "abs_out/x.go", link: "abs_out"},
		{name: "chain_out/x", link: "up"}, // the link that leads out, at the end of the chain
		{name: "real/sub/esc", link: "real/sub/esc"},
		{name: "in/sub/esc", link: "real/sub/esc"},
		{name: "dangling_out", link: "dangling_out"},
	} {
		got, err := confine.Resolve(proj, filepath.FromSlash(tc.name))
		if tc.link == "" {
			if err != nil || filepath.ToSlash(got) != tc.want {
				t.Errorf("Resolve(%s) = %q, %v; want %q", tc.name, got, err, tc.want)
			}
			continue
		}
		var out *confine.OutsideError
		if !errors.As(err, &out) {
			t.Errorf("Resolve(%s) = %q, %v; want an *OutsideError", tc.name, got, err)
			continue
		}
		if want := tc.link; (want == "-" && out.Link != "") || (want != "-" && filepath.ToSlash(out.Link) != want) {
			t.Errorf("Resolve(%s): the error names link %q, want %q (%v)", tc.name, out.Link, want, err)
		}
	}
	// The project reached through a link of its own: an absolute link by that path
	// stays inside.
	alias := filepath.Join(base, "alias")
	if err := os.Symlink("proj", alias); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(alias, "real", "sub"), filepath.Join(proj, "via_alias")); err != nil {
		t.Fatal(err)
	}
	if got, err := confine.Resolve(alias, "via_alias/x.go"); err != nil || filepath.ToSlash(got) != "real/sub/x.go" {
		t.Errorf("Resolve(via_alias/x.go) in the project reached by a link = %q, %v; want real/sub/x.go", got, err)
	}
	if _, err := confine.Resolve(proj, "loop_a/x"); err == nil {
		t.Error("Resolve(loop_a/x) followed a loop of links without an error")
	}
}

func TestLexical(t *testing.T) {
	for name, want := range map[string]bool{
		"": true, ".": true, "gen": true, "..gen": true, "a/..b/c": true, "a/../b": true, "./x": true,
		"..": false, "../x": false, "a/../../x": false, "/etc": false, "/": false,
	} {
		if got := confine.Lexical(filepath.FromSlash(name)); got != want {
			t.Errorf("Lexical(%q) = %v, want %v", name, got, want)
		}
	}
}
