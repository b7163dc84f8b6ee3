package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitSuggestsGoGetTool: jobc init's next steps say `go get -tool` only when the
// module's go.mod (in the project directory or above it) does not already name jobc
// as a tool, in a tool line or a tool block; a commented-out line or another tool does
// not count.
func TestInitSuggestsGoGetTool(t *testing.T) {
	const getTool = "  go get -tool github.com/jobc-dev/jobc/cmd/jobc\n"
	for _, c := range []struct {
		name, gomod, sub string
		suggest          bool
	}{
		{"no go.mod", "", "", true},
		{"not a tool", "module example.com/a\n\ngo 1.25\n", "", true},
		{"tool line", "module example.com/a\n\ngo 1.25\n\ntool github.com/jobc-dev/jobc/cmd/jobc\n", "", false},
		{"tool block, project below the module root", "module example.com/a\n\ngo 1.25\n\ntool (\n\tgolang.org/x/tools/cmd/stringer\n\t\"github.com/jobc-dev/jobc/cmd/jobc\" // code generation\n)\n", "svc", false},
		{"another tool, jobc commented out", "module example.com/a\n\ngo 1.25\n\n// tool github.com/jobc-dev/jobc/cmd/jobc\ntool (\n\tgolang.org/x/tools/cmd/stringer\n)\n", "", true},
	} {
		root := t.TempDir()
		if c.gomod != "" {
			writeFile(t, filepath.Join(root, "go.mod"), c.gomod)
		}
		dir := filepath.Join(root, c.sub)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := jobc(t, "init", "-C", dir)
		if code != exitOK || !strings.Contains(out, "\n  go generate ./...\n") || strings.Contains(out, getTool) != c.suggest {
			t.Errorf("%s: init: exit %d, stdout:\n%s%s\nwant `go get -tool` suggested: %v", c.name, code, out, errOut, c.suggest)
		}
	}
}
