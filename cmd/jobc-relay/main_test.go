package main

import (
	"testing"

	"github.com/jobc-dev/jobc/cmd/internal/clitest"
	"github.com/jobc-dev/jobc/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// jobc runs the command line args (starting with "relay") in-process.
func jobc(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return clitest.Run(t, newRoot(), args...)
}

// TestDatabaseFlags: the relay's commands open the database as every jobc command does.
func TestDatabaseFlags(t *testing.T) {
	clitest.CheckDatabaseFlags(t, newRoot, []string{"relay", "--to", "nats://127.0.0.1:1"}, []string{"relay", "failed"}, []string{"relay", "retry", "--all"})
}
