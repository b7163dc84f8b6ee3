package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// childEnv makes the test binary act as the command run by withpostgres: it
// records DATABASE_URL in the file named by the variable, connects to it if
// it can and exits with 3 if it reached database postgres, 4 otherwise.
const childEnv = "WITHPOSTGRES_TEST_CHILD"

func TestMain(m *testing.M) {
	if out := os.Getenv(childEnv); out != "" {
		os.Exit(child(out))
	}
	os.Exit(m.Run())
}

func child(out string) int {
	url := os.Getenv("DATABASE_URL")
	if err := os.WriteFile(out, []byte(url), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		return 4
	}
	defer conn.Close(context.Background())
	var db string
	if err := conn.QueryRow(context.Background(), "SELECT current_database()").Scan(&db); err != nil || db != "postgres" {
		return 4
	}
	return 3
}

// runChild runs the test binary as the command under withpostgres and
// returns the exit code and the DATABASE_URL the child saw.
func runChild(t *testing.T) (int, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "url")
	t.Setenv(childEnv, out)
	code := run([]string{"--", os.Args[0], "-test.run=^$"})
	url, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("child did not run (exit code %d): %v", code, err)
	}
	return code, string(url)
}

func TestRunStartsServer(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	code, url := runChild(t)
	if code != 3 {
		t.Fatalf("exit code %d, want the child's 3 (connected to database postgres via %q)", code, url)
	}
	cfg, err := pgconn.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	// The throwaway cluster's socket directory is gone again.
	if _, err := os.Stat(cfg.Host); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after run: stat %s: %v, want not exist", cfg.Host, err)
	}
}

func TestRunKeepsDatabaseURL(t *testing.T) {
	const url = "host=/nonexistent port=1 user=nobody dbname=nothing connect_timeout=1"
	t.Setenv("DATABASE_URL", url)
	code, got := runChild(t)
	if got != url {
		t.Errorf("child saw DATABASE_URL %q, want %q", got, url)
	}
	if code != 4 {
		t.Errorf("exit code %d, want the child's 4", code)
	}
}

func TestRunUsage(t *testing.T) {
	if code := run(nil); code != 2 {
		t.Errorf("run without command: exit code %d, want 2", code)
	}
	if code := run([]string{"--", "withpostgres-no-such-command"}); code != 127 {
		t.Errorf("run of a missing command: exit code %d, want 127", code)
	}
}
