package pgtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// setupTimeout bounds finding/starting the server and creating the package
// database; teardownTimeout bounds dropping and stopping them.
const (
	setupTimeout    = 2 * time.Minute
	teardownTimeout = time.Minute
)

// packageDB is the database [Main] created for the test binary.
type packageDB struct {
	connString string
}

// current holds the package database while [Main] runs the tests.
//
// This is the package's only process-wide mutable state, and deliberately
// so: TestMain can pass nothing to the tests except through such state, and
// a test binary is exactly one package, so "the database of this test
// binary" is naturally process-wide. It is written once by Main before any
// test runs and cleared after all of them finished; [NewSchema] and
// [SchemaConnString] only read it.
var current atomic.Pointer[packageDB]

// Main is for TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// It finds or starts a server with [Start] once for the test binary (that is,
// once per package), creates a fresh database for the package on it, runs
// the tests, drops the database, stops the server, and exits with the tests'
// exit code. Tests then use [NewSchema] or [SchemaConnString]. Because every
// package gets its own database, packages can be tested in parallel against
// one server (as with withpostgres and DATABASE_URL).
//
// If no server can be found, Main prints the reason and exits with status 1
// without running the tests.
//
// If the test binary dies before Main's cleanup (a test timeout panics, for
// example), a throwaway cluster is still stopped and removed by its watchdog;
// a database created on DATABASE_URL's server is left behind (it is named
// after the package, so it can be spotted and dropped by hand).
func Main(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	srv, err := Start(ctx)
	if err != nil {
		cancel()
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	connString, drop, err := srv.CreateDatabase(ctx, packageDBPrefix())
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = stopServer(srv) // it prints its own error; the first one decides the exit code
		return 1
	}

	current.Store(&packageDB{connString: connString})
	code := m.Run()
	current.Store(nil)

	ctx, cancel = context.WithTimeout(context.Background(), teardownTimeout)
	defer cancel()
	if err := drop(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	if err := stopServer(srv); err != nil && code == 0 {
		code = 1
	}
	return code
}

func stopServer(srv *Server) error {
	ctx, cancel := context.WithTimeout(context.Background(), teardownTimeout)
	defer cancel()
	err := srv.Stop(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	return err
}

// packageDBPrefix names the package database after the test binary
// ("queue.test" -> "queue").
func packageDBPrefix() string {
	name := strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe")
	name = strings.TrimSuffix(name, ".test")
	if name == "" {
		name = "pgtest"
	}
	return name
}
