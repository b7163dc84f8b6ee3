package generator_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/generator"
)

// TestGoGenerateAfterRemovingAJob runs the real `go generate ./...` in a temporary
// module after removing job types whose generated files go generate still means to
// read (it lists every package's files before it runs the first directive). It must
// succeed, leave exactly the files of the remaining jobs, compile, and leave `jobc
// diff` clean.
func TestGoGenerateAfterRemovingAJob(t *testing.T) {
	env := newGoModule(t)

	t.Run("directive in the project root", func(t *testing.T) {
		// The README's layout: the directive next to jobc.yaml, the code in
		// internal/jobs, which go generate ./... reads after the root package.
		dir := env.module(t, map[string]string{
			"main.go": "//go:generate " + env.jobc + " generate\n\npackage main\n\nimport _ \"example.com/app/internal/jobs\"\n\nfunc main() {}\n",
		})
		env.spec(t, dir, "internal/jobs", "archive_orders", "send_email", "zap_cache")
		env.goGenerate(t, dir)
		wantFiles(t, filepath.Join(dir, "internal/jobs"), "archive_orders.jobc.go", "jobc.go", "jobstest", "send_email.jobc.go", "zap_cache.jobc.go")

		env.spec(t, dir, "internal/jobs", "archive_orders") // removes send_email and zap_cache
		env.goGenerate(t, dir)
		wantFiles(t, filepath.Join(dir, "internal/jobs"), "archive_orders.jobc.go", "jobc.go", "jobstest")
		env.goBuild(t, dir)
		wantClean(t, dir)
	})

	t.Run("directive in the output package", func(t *testing.T) {
		// The directive's own package: aaa_job sorts before generate.go (read
		// already), zap_cache after it (not read yet). The directive uses a -command
		// alias, which the rerun must carry along.
		dir := env.module(t, map[string]string{
			"main.go":                   "package main\n\nimport _ \"example.com/app/internal/jobs\"\n\nfunc main() {}\n",
			"internal/jobs/generate.go": "//go:generate -command jobc " + env.jobc + "\n//go:generate jobc generate -C ../..\n\npackage jobs\n",
		})
		env.spec(t, dir, "internal/jobs", "aaa_job", "send_email", "zap_cache")
		env.goGenerate(t, dir)
		env.spec(t, dir, "internal/jobs", "send_email")
		env.goGenerate(t, dir)
		wantFiles(t, filepath.Join(dir, "internal/jobs"), "generate.go", "jobc.go", "jobstest", "send_email.jobc.go")
		env.goBuild(t, dir)
		wantClean(t, dir)
	})

	t.Run("go generate of the directive's package only", func(t *testing.T) {
		// `go generate .` never reads internal/jobs: the emptied file stays, compiles to
		// nothing, is reported by diff, and the next jobc generate deletes it.
		dir := env.module(t, map[string]string{
			"main.go": "//go:generate " + env.jobc + " generate\n\npackage main\n\nimport _ \"example.com/app/internal/jobs\"\n\nfunc main() {}\n",
		})
		env.spec(t, dir, "internal/jobs", "send_email", "zap_cache")
		env.goGenerate(t, dir, ".")
		env.spec(t, dir, "internal/jobs", "send_email")
		env.goGenerate(t, dir, ".")
		stale := filepath.Join(dir, "internal/jobs", "zap_cache.jobc.go")
		b, err := os.ReadFile(stale)
		if err != nil {
			t.Fatalf("want the emptied file to stay after go generate .: %v", err)
		}
		if strings.Contains(string(b), "ZapCache") {
			t.Fatalf("the emptied file still declares the removed job:\n%s", b)
		}
		env.goBuild(t, dir)
		res, err := generator.Generate(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		changes, err := generator.Diff(res)
		if err != nil {
			t.Fatal(err)
		}
		if len(changes) != 1 || changes[0].Kind != "extra" || changes[0].Path != filepath.Join("internal", "jobs", "zap_cache.jobc.go") {
			t.Fatalf("diff = %+v, want zap_cache.jobc.go as extra", changes)
		}
		if err := generator.Write(res); err != nil {
			t.Fatal(err)
		}
		wantFiles(t, filepath.Join(dir, "internal/jobs"), "jobc.go", "jobstest", "send_email.jobc.go")
		wantClean(t, dir)
	})
}

// goModule builds modules that depend on this repository's jobc.
type goModule struct {
	repo string // the repository root
	jobc string // a jobc binary built from it
}

func newGoModule(t *testing.T) *goModule {
	t.Helper()
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "jobc")
	// Built from its own directory, so that this works whether cmd/jobc is a package
	// of this module or a module of its own; its modules downloaded first (a no-op
	// once they are in the module cache), as nothing else here needs them, then built
	// offline.
	cli := filepath.Join(repo, "cmd", "jobc")
	run(t, cli, nil, "go", "mod", "download")
	run(t, cli, []string{"GOPROXY=off"}, "go", "build", "-o", bin, ".")
	return &goModule{repo: repo, jobc: bin}
}

// module writes a new module requiring jobc from the repository, with files.
func (m *goModule) module(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = m.goMod(t)
	sum, err := os.ReadFile(filepath.Join(m.repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	files["go.sum"] = string(sum)
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// What the module selects, outside the workspace, is downloaded before the tests
	// go offline: the workspace's build of these tests may have cached other versions
	// (a fresh module cache held golang.org/x/text v0.44.0, the workspace's, and not
	// v0.41.0, the repository module's own, and every offline step failed).
	run(t, dir, []string{"GOWORK=off", "GOFLAGS=-mod=mod"}, "go", "mod", "download", "all")
	return dir
}

// goMod returns a go.mod for module example.com/app that requires jobc from the
// repository, with the repository's own requirements, so that the go command finds
// every module it needs in the module cache (go mod tidy would also want the modules
// of the runtime's tests on other platforms).
func (m *goModule) goMod(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(m.repo, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	out.WriteString("module example.com/app\n")
	block := ""
	for _, line := range strings.Split(string(b), "\n") {
		word, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch {
		case block != "":
			if block == "require" {
				out.WriteString(line + "\n")
			}
			if word == ")" {
				block = ""
			}
			continue
		case strings.HasSuffix(line, "("):
			block = word
			if block == "require" {
				out.WriteString(line + "\n")
			}
			continue
		}
		// Keep go and single-line require directives; module, tool and replace
		// directives are the repository's own business.
		if word == "go" || word == "require" {
			out.WriteString(line + "\n")
		}
	}
	out.WriteString("require github.com/jobc-dev/jobc v0.0.0\n\nreplace github.com/jobc-dev/jobc => " + m.repo + "\n")
	return out.String()
}

// offline makes the go command resolve modules from the module cache only: the ones
// jobc needs are there, as module downloaded them.
func offline() []string {
	return []string{"GOPROXY=off", "GOFLAGS=" + strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod"), "GOWORK=off"}
}

// spec writes jobc.yaml declaring the given job kinds.
func (m *goModule) spec(t *testing.T, dir, out string, kinds ...string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("version: 1\npackage: jobs\nout: " + out + "\njobs:\n")
	for _, k := range kinds {
		b.WriteString("  " + k + ":\n    payload: {versions: {1: {schema: {type: object, properties: {id: {type: string}}}}}}\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "jobc.yaml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (m *goModule) goGenerate(t *testing.T, dir string, patterns ...string) {
	t.Helper()
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	run(t, dir, offline(), "go", append([]string{"generate"}, patterns...)...)
}

// goBuild type-checks and vets every package of the module, the generated one included.
func (m *goModule) goBuild(t *testing.T, dir string) {
	t.Helper()
	run(t, dir, offline(), "go", "vet", "./...")
}

func run(t *testing.T, dir string, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, out)
	}
}

func wantFiles(t *testing.T, dir string, want ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("%s holds %v, want %v", dir, got, want)
	}
}

// wantClean fails when `jobc diff` would report anything.
func wantClean(t *testing.T, dir string) {
	t.Helper()
	res, err := generator.Generate(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	changes, err := generator.Diff(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range changes {
		t.Errorf("jobc diff: %s is %s:\n%s", c.Path, c.Kind, c.Diff)
	}
}
