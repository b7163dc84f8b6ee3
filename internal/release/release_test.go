package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// fakeVersion is the tag the test publishes every module at.
const fakeVersion = "v0.99.0-installtest"

// TestInstallFromProxy publishes every module at a fake tag into a file:// module
// proxy, the go.mod files requiring one another at that tag as a release commit
// would, and then does what the README tells a user: go install
// github.com/jobc-dev/jobc/cmd/jobc@TAG, and go get -tool of it in a fresh module
// followed by go tool jobc. Nothing comes from the network: jobc's modules from the
// proxy, the others from the local module cache (whose cache/download directory has
// a proxy's layout). A module cache of the test's own keeps the fake tag out of the
// developer's.
func TestInstallFromProxy(t *testing.T) {
	ctx := t.Context()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// The third-party modules the CLI needs, into the local module cache (a no-op
	// when the tests or builds of the workspace already fetched them).
	fill := exec.CommandContext(ctx, "go", "list", "-deps", "-test", "./...")
	fill.Dir = filepath.Join(root, "cmd", "jobc")
	if out, err := fill.CombinedOutput(); err != nil {
		t.Fatalf("go list -deps in cmd/jobc: %v\n%s", err, out)
	}
	cache, err := exec.CommandContext(ctx, "go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}

	proxy := t.TempDir()
	if err := Publish(root, fakeVersion, proxy); err != nil {
		t.Fatal(err)
	}
	// What a release would tag: every go.mod requires its siblings at the tag.
	data, err := os.ReadFile(filepath.Join(proxy, "github.com", "jobc-dev", "jobc", "cmd", "jobc", "@v", fakeVersion+".mod"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse("cmd/jobc/go.mod", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	siblings := 0
	for _, r := range f.Require {
		if strings.HasPrefix(r.Mod.Path, "github.com/jobc-dev/jobc") {
			siblings++
			if r.Mod.Version != fakeVersion {
				t.Errorf("published cmd/jobc/go.mod requires %s %s, want %s", r.Mod.Path, r.Mod.Version, fakeVersion)
			}
		}
	}
	if siblings == 0 || len(f.Replace) != 0 {
		t.Errorf("published cmd/jobc/go.mod requires %d of jobc's modules and has %d replace directives:\n%s", siblings, len(f.Replace), data)
	}

	home := t.TempDir()
	bin := filepath.Join(home, "bin")
	env := append(withoutEnv("GOWORK", "GOFLAGS", "GOPROXY", "GOSUMDB", "GONOSUMDB", "GOPRIVATE", "GOMODCACHE", "GOBIN", "GOTOOLCHAIN"),
		"GOWORK=off",
		"GOFLAGS=-mod=mod -modcacherw", // -modcacherw: t.TempDir can remove the cache
		"GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(filepath.Join(strings.TrimSpace(string(cache)), "cache", "download"))+",off",
		"GOSUMDB=off", // the fake tag has no checksum anywhere
		"GONOSUMDB=github.com/jobc-dev",
		"GOMODCACHE="+filepath.Join(home, "modcache"),
		"GOBIN="+bin,
		"GOTOOLCHAIN=local",
	)
	goCmd := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	goCmd(home, "install", "github.com/jobc-dev/jobc/cmd/jobc@"+fakeVersion)
	out, err := exec.CommandContext(ctx, filepath.Join(bin, "jobc"), "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Usage:") || !strings.Contains(string(out), "generate") {
		t.Fatalf("jobc --help after go install: %v\n%s", err, out)
	}
	// jobc relay, not installed, names the same tag.
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "jobc"), "relay")
	cmd.Env = append(withoutEnv("PATH", "GOBIN"), "PATH="+t.TempDir(), "GOBIN="+t.TempDir())
	out, err = cmd.CombinedOutput()
	var ee *exec.ExitError
	if want := "go install github.com/jobc-dev/jobc/cmd/jobc-relay@" + fakeVersion; !errors.As(err, &ee) || ee.ExitCode() != 127 || !strings.Contains(string(out), want) {
		t.Errorf("jobc relay without jobc-relay: %v\n%s\nwant exit 127 and %q", err, out, want)
	}
	// The servers resolve too (-n: without compiling the brokers' clients).
	goCmd(home, "install", "-n", "github.com/jobc-dev/jobc/cmd/jobc-relay@"+fakeVersion)
	goCmd(home, "install", "-n", "github.com/jobc-dev/jobc/cmd/jobc-metrics@"+fakeVersion)

	app := filepath.Join(home, "app")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	goCmd(app, "mod", "init", "example.com/app")
	goCmd(app, "get", "-tool", "github.com/jobc-dev/jobc/cmd/jobc@"+fakeVersion)
	if out := goCmd(app, "tool", "jobc", "--help"); !strings.Contains(out, "Usage:") {
		t.Errorf("go tool jobc --help:\n%s", out)
	}
	gomod, err := os.ReadFile(filepath.Join(app, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(gomod, []byte("\ntool github.com/jobc-dev/jobc/cmd/jobc\n")) {
		t.Errorf("go.mod after go get -tool:\n%s", gomod)
	}
}
