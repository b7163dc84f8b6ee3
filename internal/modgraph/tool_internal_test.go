package modgraph

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIAsTool follows the README's "To use jobc in your own module" steps
// with the CLI as a module of its own: go get -tool, go tool jobc init,
// go generate, go mod tidy, go vet. Replace directives point jobc's modules at
// this checkout, as a published version would be found through the proxy
// (internal/release's test installs from one).
func TestCLIAsTool(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	goVersion, err := goDirective(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := "module example.com/userapp\n\ngo " + goVersion + "\n"
	// Every module of the workspace from this checkout, as a release tags them
	// together; their go.sum files hold every checksum the user module needs, so no
	// checksum database is asked.
	mods, err := Workspace(ctx, "go", root)
	if err != nil {
		t.Fatal(err)
	}
	var sum []byte
	for _, m := range mods {
		gomod += "\nreplace " + m.Path + " => " + m.Dir + "\n"
		data, err := os.ReadFile(filepath.Join(m.Dir, "go.sum"))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		sum = append(sum, data...)
	}
	for name, data := range map[string][]byte{"go.mod": []byte(gomod), "go.sum": sum} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env, err := tidyEnv(ctx, "go")
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"get", "-tool", "github.com/jobc-dev/jobc/cmd/jobc"},
		{"tool", "jobc", "init"},
		{"generate", "./..."},
		{"mod", "tidy"},
		{"vet", "./..."},
	} {
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = dir
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}

	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\ntool github.com/jobc-dev/jobc/cmd/jobc\n") {
		t.Errorf("go.mod has no tool directive for the CLI:\n%s", data)
	}
	generated, err := filepath.Glob(filepath.Join(dir, "internal", "jobs", "*.jobc.go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(generated) == 0 {
		entries, _ := os.ReadDir(filepath.Join(dir, "internal", "jobs"))
		t.Errorf("go generate wrote no *.jobc.go file into internal/jobs; it holds %v", entries)
	}
}
