// Package modgraph measures what importing a package of this repository costs
// another module: the modules that module's go.sum has to name. The root
// module promises that an application importing only the runtime pays for
// pgx and little else (DESIGN.md, "Modules"); the test of this package keeps
// that promise measurable.
//
// The measurement is what a user gets: a fresh module that imports the
// packages, with a replace directive pointing at this checkout, tidied by
// the go command. go mod tidy records not only the modules that are built
// but also those needed to test the imported packages (go test all), which
// is why test-only dependencies of the runtime (internal/pgtest) count too.
//
// The tests also follow the README's steps for using jobc in a module of
// one's own (go get -tool with the CLI as a module of its own).
package modgraph

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Importer describes the module to measure: a module named Module that
// imports the packages Imports of the module at Root, or runs its commands
// Tools as tools (go get -tool).
type Importer struct {
	// Root is the directory of the module under measurement (the one with
	// go.mod); its module path is read from there. When Root holds a go.work,
	// every module it uses is taken from this checkout too, as a release
	// would publish them together.
	Root string
	// Imports are the import paths the measuring module imports.
	Imports []string
	// Tools are the packages the measuring module declares as tools.
	Tools []string
	// Module is the measuring module's path; empty means example.com/importer.
	Module string
	// Go is the go command; empty means "go" on PATH.
	Go string
}

// SumModules creates the importing module in dir (which must be empty),
// runs go mod tidy in it and returns the distinct module paths its go.sum
// names, sorted.
//
// The importing module's go.sum starts as a copy of the root module's, so
// that every checksum tidy may need is already known and no checksum database
// is consulted; tidy removes the lines the importer does not need. Modules
// are looked up in the local module cache first and then through the
// configured GOPROXY, so the measurement works offline with a filled cache
// and online with an empty one.
func (im Importer) SumModules(ctx context.Context, dir string) ([]string, error) {
	if len(im.Imports) == 0 && len(im.Tools) == 0 {
		return nil, errors.New("modgraph: no imports or tools to measure")
	}
	goCmd := im.Go
	if goCmd == "" {
		goCmd = "go"
	}
	modPath, err := modulePath(filepath.Join(im.Root, "go.mod"))
	if err != nil {
		return nil, err
	}
	root, err := filepath.Abs(im.Root)
	if err != nil {
		return nil, fmt.Errorf("modgraph: %w", err)
	}
	module := im.Module
	if module == "" {
		module = "example.com/importer"
	}
	goVersion, err := goDirective(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}

	files := map[string][]byte{}
	if len(im.Imports) > 0 {
		var src strings.Builder
		src.WriteString("// Command importer imports the packages whose module graph is measured.\npackage main\n\nimport (\n")
		for _, p := range im.Imports {
			fmt.Fprintf(&src, "\t_ %q\n", p)
		}
		src.WriteString(")\n\nfunc main() {}\n")
		files["main.go"] = []byte(src.String())
	}
	gomod := fmt.Sprintf("module %s\n\ngo %s\n", module, goVersion)
	for _, t := range im.Tools {
		gomod += "\ntool " + t + "\n"
	}
	mods, err := Workspace(ctx, goCmd, root)
	if err != nil {
		return nil, err
	}
	if len(mods) == 0 {
		mods = []Module{{Path: modPath, Dir: root}}
	}
	var sum []byte
	for _, m := range mods {
		gomod += fmt.Sprintf("\nreplace %s => %s\n", m.Path, m.Dir)
		data, err := os.ReadFile(filepath.Join(m.Dir, "go.sum"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("modgraph: %w", err)
		}
		sum = append(sum, data...)
	}
	files["go.mod"], files["go.sum"] = []byte(gomod), sum
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return nil, fmt.Errorf("modgraph: %w", err)
		}
	}

	env, err := tidyEnv(ctx, goCmd)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, goCmd, "mod", "tidy")
	cmd.Dir = dir
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("modgraph: go mod tidy in %s: %w\n%s", dir, err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	if err != nil {
		return nil, fmt.Errorf("modgraph: after go mod tidy: %w", err)
	}
	names, err := ParseSum(data)
	if err != nil {
		return nil, fmt.Errorf("modgraph: %s: %w", filepath.Join(dir, "go.sum"), err)
	}
	return names, nil
}

// Module is a module of a workspace.
type Module struct {
	Path string // module path
	Dir  string // absolute directory
}

// Workspace returns the modules the go.work in root uses, or none when root has no
// go.work.
func Workspace(ctx context.Context, goCmd, root string) ([]Module, error) {
	if _, err := os.Stat(filepath.Join(root, "go.work")); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	cmd := exec.CommandContext(ctx, goCmd, "work", "edit", "-json")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("modgraph: go work edit -json in %s: %w", root, err)
	}
	var work struct{ Use []struct{ DiskPath string } }
	if err := json.Unmarshal(out, &work); err != nil {
		return nil, fmt.Errorf("modgraph: go work edit -json: %w", err)
	}
	var mods []Module
	for _, u := range work.Use {
		dir := filepath.Join(root, filepath.FromSlash(u.DiskPath))
		path, err := modulePath(filepath.Join(dir, "go.mod"))
		if err != nil {
			return nil, err
		}
		mods = append(mods, Module{Path: path, Dir: dir})
	}
	return mods, nil
}

// tidyEnv is the environment for go mod tidy: no workspace (go.work would
// add the workspace's modules), -mod=mod, the toolchain at hand, and the
// module cache as the first proxy.
func tidyEnv(ctx context.Context, goCmd string) ([]string, error) {
	out, err := exec.CommandContext(ctx, goCmd, "env", "GOMODCACHE", "GOPROXY").Output()
	if err != nil {
		return nil, fmt.Errorf("modgraph: go env: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || lines[0] == "" {
		return nil, fmt.Errorf("modgraph: go env GOMODCACHE GOPROXY printed %q", out)
	}
	// A file:// proxy answers "not found" for what the cache lacks, and the
	// go command then moves on to the next proxy in a comma-separated list.
	proxy := "file://" + filepath.ToSlash(filepath.Join(lines[0], "cache", "download"))
	if p := strings.TrimSpace(lines[1]); p != "" {
		proxy += "," + p
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		for _, k := range []string{"GOWORK=", "GOFLAGS=", "GOPROXY=", "GOTOOLCHAIN="} {
			if strings.HasPrefix(kv, k) {
				return true
			}
		}
		return false
	})
	return append(env, "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY="+proxy, "GOTOOLCHAIN=local"), nil
}

// ParseSum returns the distinct module paths a go.sum file names, sorted. A
// go.sum line is "path version hash"; anything else is an error naming the
// line.
func ParseSum(data []byte) ([]string, error) {
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 || !strings.HasPrefix(f[2], "h1:") {
			return nil, fmt.Errorf("line %d: %q is not \"module version h1:hash\"", n, line)
		}
		seen[f[0]] = true
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	mods := make([]string, 0, len(seen))
	for m := range seen {
		mods = append(mods, m)
	}
	slices.Sort(mods)
	return mods, nil
}

// modulePath reads the module path from a go.mod file.
func modulePath(gomod string) (string, error) {
	return directive(gomod, "module")
}

// goDirective reads the go version from a go.mod file.
func goDirective(gomod string) (string, error) {
	return directive(gomod, "go")
}

// directive returns the argument of the first line "name arg" in a go.mod
// file.
func directive(gomod, name string) (string, error) {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return "", fmt.Errorf("modgraph: %w", err)
	}
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == name {
			return strings.Trim(f[1], `"`), nil
		}
	}
	return "", fmt.Errorf("modgraph: %s: no %s directive", gomod, name)
}
