package pgtest_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/internal/pgtest"
)

// fakeInstall creates dir with executable stand-ins for the server binaries.
func fakeInstall(t *testing.T, dir string, names ...string) {
	t.Helper()
	if len(names) == 0 {
		names = []string{"initdb", "pg_ctl", "postgres"}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFinderPicksHighestVersion(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, v := range []string{"9.6", "15", "10"} {
		fakeInstall(t, filepath.Join(root, v, "bin"))
	}
	fakeInstall(t, filepath.Join(root, "17", "bin"), "initdb", "pg_ctl") // incomplete: no postgres

	bin, err := pgtest.Finder{Path: t.TempDir(), Globs: []string{filepath.Join(root, "*", "bin")}}.Find()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "15", "bin"); bin.Dir != want {
		t.Errorf("Find() = %s, want %s", bin.Dir, want)
	}
	if bin.Initdb() != filepath.Join(bin.Dir, "initdb") || bin.PgCtl() != filepath.Join(bin.Dir, "pg_ctl") {
		t.Errorf("Initdb() = %s, PgCtl() = %s", bin.Initdb(), bin.PgCtl())
	}
}

func TestFinderPrefersPathAndResolvesSymlinks(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	real := filepath.Join(root, "pg", "bin")
	fakeInstall(t, real)
	fakeInstall(t, filepath.Join(root, "lib", "99", "bin"))
	pathDir := filepath.Join(root, "path")
	if err := os.MkdirAll(pathDir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Like /usr/local/bin/initdb -> /usr/lib/postgresql/15/bin/initdb.
	if err := os.Symlink(filepath.Join(real, "initdb"), filepath.Join(pathDir, "initdb")); err != nil {
		t.Fatal(err)
	}

	bin, err := pgtest.Finder{
		Path:  filepath.Join(root, "empty") + string(os.PathListSeparator) + pathDir,
		Globs: []string{filepath.Join(root, "lib", "*", "bin")},
	}.Find()
	if err != nil {
		t.Fatal(err)
	}
	if bin.Dir != real {
		t.Errorf("Find() = %s, want %s (the symlink target's directory)", bin.Dir, real)
	}
}

func TestFinderNothingFound(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	_, err := pgtest.Finder{Path: empty, Globs: []string{filepath.Join(empty, "*", "bin")}}.Find()
	if err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("Find() in an empty dir: err = %v, want not found", err)
	}

	_, err = pgtest.Finder{Path: empty, Globs: []string{}}.Find()
	if err == nil {
		t.Error("Find() with no globs and an empty PATH succeeded")
	}
}

func TestStartNothingFound(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	cfg := pgtest.Config{
		Getenv:   func(string) string { return "" },
		Finder:   pgtest.Finder{Path: empty, Globs: []string{filepath.Join(empty, "*", "bin")}},
		NoDocker: true,
	}
	srv, err := cfg.Start(t.Context())
	if err == nil {
		_ = srv.Stop(t.Context())
		t.Fatal("Start succeeded without DATABASE_URL, binaries or Docker")
	}
	if !errors.Is(err, pgtest.ErrNoServer) {
		t.Fatalf("Start: err = %v, want ErrNoServer", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("error is not one line: %q", msg)
	}
	for _, want := range []string{"DATABASE_URL", "initdb", "pg_ctl", "Docker"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %s", msg, want)
		}
	}
	t.Log(msg)

	if _, err := cfg.StartCluster(t.Context()); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("StartCluster: err = %v, want binaries not found", err)
	}
}
