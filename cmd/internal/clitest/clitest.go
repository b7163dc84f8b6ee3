// Package clitest holds what the tests of jobc, jobc-relay and jobc-metrics share:
// running a command in-process, waiting, and a migrated database of the test's own.
package clitest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// Slowdown multiplies every interval a test waits on: on a loaded machine a process or
// goroutine may get the CPU late, while a wait a few intervals long still fails soon
// when something is broken.
const Slowdown = 10

// WaitFor polls cond until it reports done, and fails after timeout with the last
// status it described.
func WaitFor(t *testing.T, what string, timeout time.Duration, cond func() (done bool, status string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		done, status := cond()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last seen: %s", timeout, what, status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Run runs the command tree root on args in-process, as main does, and returns its
// output and exit status. Whatever a test runs, no line of stderr may say the command
// prefix twice ("jobc relay: jobc relay: ...", "jobc: retry job 5: jobc: ...").
func Run(t *testing.T, root *cobra.Command, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = cli.Run(t.Context(), root, args, &out, &errOut)
	for line := range strings.Lines(errOut.String()) {
		prefixes := 0
		for _, seg := range strings.Split(line, ": ") {
			if cli.IsCommandPrefix(seg) {
				prefixes++
			}
		}
		if prefixes > 1 {
			t.Errorf("jobc %s: stderr says the command prefix %d times: %s", strings.Join(args, " "), prefixes, line)
		}
	}
	return out.String(), errOut.String(), code
}

// WriteFile writes content to path, creating its directory.
func WriteFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// MigratedDB gives the test its own schema, migrated by runtime.Migrate, and the URL a
// command reaches it by.
func MigratedDB(t *testing.T) (*pgxpool.Pool, string) {
	t.Helper()
	pool := pgtest.NewSchema(t, nil)
	if _, err := runtime.Migrate(t.Context(), pool); err != nil {
		t.Fatal(fmt.Errorf("migrate: %w", err))
	}
	return pool, pgtest.SchemaConnString(t, pgtest.SchemaOf(pool))
}

// CheckDatabaseFlags runs each command line of newRoot's tree (each opens the
// database) without a database, and against a schema without jobc's tables: the
// first must be a usage error naming --database-url and $DATABASE_URL, the second a
// failure saying to run `jobc migrate up`, on one line. jobc's own tests hold every
// command of its tree to more than this; the servers' binaries share the code.
func CheckDatabaseFlags(t *testing.T, newRoot func() *cobra.Command, commands ...[]string) {
	t.Helper()
	empty := pgtest.SchemaConnString(t, pgtest.SchemaOf(pgtest.NewSchema(t, nil)))
	for _, args := range commands {
		t.Setenv("DATABASE_URL", "")
		out, errOut, code := Run(t, newRoot(), args...)
		if code != cli.ExitUsage || !strings.Contains(errOut, "--database-url") || !strings.Contains(errOut, "$DATABASE_URL") || out != "" {
			t.Errorf("jobc %s without a database: exit %d, stdout %q, stderr %q; want exit 2 naming --database-url and $DATABASE_URL",
				strings.Join(args, " "), code, out, errOut)
		}
		_, errOut, code = Run(t, newRoot(), append(args, "--database-url", empty)...)
		if code != cli.ExitFailure || !strings.Contains(errOut, "run `jobc migrate up`") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("jobc %s on an empty schema: exit %d, stderr %q; want exit 1 and one line saying to run `jobc migrate up`",
				strings.Join(args, " "), code, errOut)
		}
	}
}
