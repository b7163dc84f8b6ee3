package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
	"github.com/jobc-dev/jobc/generator/spec"
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
		if code != cli.ExitOK || !strings.Contains(out, "\n  go generate ./...\n") || strings.Contains(out, getTool) != c.suggest {
			t.Errorf("%s: init: exit %d, stdout:\n%s%s\nwant `go get -tool` suggested: %v", c.name, code, out, errOut, c.suggest)
		}
	}
}

// TestInitModeline: the jobc.yaml init writes starts with a yaml-language-server
// modeline whose schema is a file of this repository, and the scaffold passes that
// schema.
func TestInitModeline(t *testing.T) {
	dir := t.TempDir()
	if _, errOut, code := jobc(t, "init", "-C", dir); code != cli.ExitOK {
		t.Fatalf("init: exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, "jobc.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	url, ok := strings.CutPrefix(first, "# yaml-language-server: $schema=")
	if !ok {
		t.Fatalf("jobc.yaml starts with %q, want a yaml-language-server modeline", first)
	}
	// The URL is the raw file at a ref of the repository: the path after the ref is
	// the file's path in this repository.
	rest, ok := strings.CutPrefix(url, "https://raw.githubusercontent.com/jobc-dev/jobc/")
	if !ok {
		t.Fatalf("modeline schema %q is not a file of jobc's repository", url)
	}
	ref, path, _ := strings.Cut(rest, "/")
	if ref != "main" { // the test binary is built from this tree, not a release
		t.Errorf("modeline schema %q: ref %q, want main for a development build", url, ref)
	}
	schemaPath := filepath.Join("..", "..", filepath.FromSlash(path))
	raw, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatalf("modeline schema %q names %s, which is not in the repository: %v", url, path, err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("%s: %v", schemaPath, err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("file:///"+path, doc); err != nil {
		t.Fatalf("%s: %v", schemaPath, err)
	}
	sch, err := c.Compile("file:///" + path)
	if err != nil {
		t.Fatalf("%s: %v", schemaPath, err)
	}
	var n yaml.Node
	if err := yaml.Unmarshal(b, &n); err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(spec.JSONValue(n.Content[0]))
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(v); err != nil {
		t.Errorf("the jobc.yaml init writes fails %s:\n%v", path, err)
	}
}

// TestSchemaURL: a release names the schema at its tag, anything else at main.
func TestSchemaURL(t *testing.T) {
	const base = "https://raw.githubusercontent.com/jobc-dev/jobc/"
	for version, ref := range map[string]string{
		"v0.4.0":                               "v0.4.0",
		"v1.0.0-rc.1":                          "v1.0.0-rc.1",
		"(devel)":                              "main",
		"":                                     "main",
		"v0.0.0-20240501093000-abcdef123456":   "main",
		"v1.2.4-0.20240501093000-abcdef123456": "main",
		"v1.2.3-rc.1.0.20240501093000-abcdef123456": "main",
	} {
		if got, want := schemaURL(version), base+ref+"/jobc.schema.json"; got != want {
			t.Errorf("schemaURL(%q) = %q, want %q", version, got, want)
		}
	}
}
