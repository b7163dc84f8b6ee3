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
// go generate, go mod tidy, go vet. Replace directives point both modules at
// this checkout, as a published version would be found through the proxy.
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
	gomod := "module example.com/userapp\n\ngo " + goVersion + "\n\n" +
		"replace github.com/jobc-dev/jobc => " + root + "\n\n" +
		"replace github.com/jobc-dev/jobc/cmd/jobc => " + filepath.Join(root, "cmd", "jobc") + "\n"
	// jobc metrics serves the Prometheus adapter's gauges and jobc relay publishes
	// through the sinks; a release tags those modules too.
	contribs := []string{"prometheus", "nats", "rabbitmq", "kafka"}
	for _, c := range contribs {
		gomod += "\nreplace github.com/jobc-dev/jobc/contrib/" + c + " => " + filepath.Join(root, "contrib", c) + "\n"
	}
	// The modules' go.sum files hold every checksum the user module needs, so no
	// checksum database is asked.
	sums := []string{filepath.Join(root, "go.sum"), filepath.Join(root, "cmd", "jobc", "go.sum")}
	for _, c := range contribs {
		sums = append(sums, filepath.Join(root, "contrib", c, "go.sum"))
	}
	var sum []byte
	for _, f := range sums {
		data, err := os.ReadFile(f)
		if err != nil {
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
