package pgtest_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jobc-dev/jobc/internal/pgtest"
)

// startCluster starts a throwaway cluster that is destroyed when the test
// ends.
func startCluster(t *testing.T) *pgtest.Cluster {
	t.Helper()
	began := time.Now()
	c, err := pgtest.StartCluster(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("started %s in %v", c, time.Since(began).Round(time.Millisecond))
	t.Cleanup(func() {
		if err := c.Destroy(context.Background()); err != nil {
			t.Errorf("Destroy: %v", err)
		}
	})
	return c
}

// clusterSocket returns the socket directory and port of a cluster.
func clusterSocket(t *testing.T, c *pgtest.Cluster) (dir string, port uint16) {
	t.Helper()
	cfg, err := pgconn.ParseConfig(c.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Host, cfg.Port
}

func TestClusterStopStartRestart(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	ctx := t.Context()

	conn, err := pgx.Connect(ctx, c.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('before stop')"); err != nil {
		t.Fatal(err)
	}
	_ = conn.Close(ctx)

	if err := c.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := c.Stop(ctx); err != nil {
		t.Errorf("Stop of a stopped cluster: %v", err)
	}
	if conn, err := pgx.Connect(ctx, c.ConnString()); err == nil {
		_ = conn.Close(ctx)
		t.Fatal("connected to a stopped cluster")
	}

	if err := c.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	// A failure includes the tail of the server log.
	if err := c.Start(ctx); err == nil || !strings.Contains(err.Error(), "server log") || !strings.Contains(err.Error(), "lock file") {
		t.Errorf("Start of a running cluster: err = %v, want failure with the server log's lock file complaint", err)
	} else {
		t.Logf("Start of a running cluster: %v", err)
	}
	conn = connect(t, c.ConnString())
	if got := queryString(t, conn, "SELECT string_agg(v, ',') FROM kept"); got != "before stop" {
		t.Errorf("after Stop/Start: kept = %q, want %q", got, "before stop")
	}
	if _, err := conn.Exec(ctx, "INSERT INTO kept VALUES ('before restart')"); err != nil {
		t.Fatal(err)
	}

	if err := c.Restart(ctx); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	if _, err := conn.Exec(ctx, "SELECT 1"); err == nil {
		t.Error("session survived Restart")
	}
	conn = connect(t, c.ConnString())
	if got := queryString(t, conn, "SELECT string_agg(v, ',' ORDER BY v) FROM kept"); got != "before restart,before stop" {
		t.Errorf("after Restart: kept = %q", got)
	}

	dir, _ := clusterSocket(t, c)
	if err := c.Destroy(ctx); err != nil {
		t.Fatalf("Destroy: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Destroy: stat %s: %v, want not exist", dir, err)
	}
	if err := c.Destroy(ctx); err != nil {
		t.Errorf("second Destroy: %v", err)
	}
	if err := c.Start(ctx); err == nil {
		t.Error("Start after Destroy succeeded")
	}
}

// watchdogChildEnv makes the test binary start a cluster, print its
// connection string and wait to be killed (see TestMain).
const watchdogChildEnv = "PGTEST_WATCHDOG_CHILD"

func watchdogChild() int {
	c, err := pgtest.StartCluster(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(c.ConnString())
	time.Sleep(time.Hour) // until killed
	return 0
}

func TestClusterWatchdogCleansUpAfterKill(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), watchdogChildEnv+"=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("child: %v\n%s", err, stderr.String())
	}
	connString := strings.TrimSpace(line)
	cfg, err := pgconn.ParseConfig(connString)
	if err != nil {
		t.Fatal(err)
	}
	conn := connect(t, connString)
	if _, err := conn.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}

	// SIGKILL: no deferred function or cleanup of the child runs.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	began := time.Now()
	for {
		_, statErr := os.Stat(cfg.Host)
		c, connErr := pgx.Connect(ctx, connString)
		if connErr == nil {
			_ = c.Close(ctx)
		}
		if errors.Is(statErr, os.ErrNotExist) && connErr != nil {
			t.Logf("server stopped and %s removed %v after the kill", cfg.Host, time.Since(began).Round(time.Millisecond))
			return
		}
		if time.Since(began) > 30*time.Second {
			t.Fatalf("30s after the kill: stat %s: %v; connect: %v", cfg.Host, statErr, connErr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
