package pgtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/internal/pgtest"
)

func TestStandbyReplicatesAndPromotes(t *testing.T) {
	t.Parallel()
	primary := startCluster(t)
	ctx := t.Context()
	standby, err := primary.StartStandby(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := standby.Destroy(context.Background()); err != nil {
			t.Errorf("Destroy standby: %v", err)
		}
	})

	p, err := pgx.Connect(ctx, primary.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	if _, err := p.Exec(ctx, "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('replicated')"); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := pgtest.WaitReplayed(wctx, primary, standby); err != nil {
		t.Fatal(err)
	}

	s, err := pgx.Connect(ctx, standby.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	var v string
	if err := s.QueryRow(ctx, "SELECT v FROM kept").Scan(&v); err != nil || v != "replicated" {
		t.Fatalf("standby reads %q, %v; want the row written on the primary", v, err)
	}
	if _, err := s.Exec(ctx, "INSERT INTO kept VALUES ('on the standby')"); err == nil {
		t.Fatal("the standby accepted a write before its promotion")
	}

	// Before the promotion the multi-host string finds the primary, after it (with
	// the old primary stopped) the standby.
	follow := pgtest.FollowConnString(primary, standby)
	if got := serverPort(t, follow); got != serverPort(t, primary.ConnString()) {
		t.Fatalf("FollowConnString reached port %d before the promotion, want the primary's", got)
	}
	if err := standby.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	if err := primary.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(ctx, "INSERT INTO kept VALUES ('after the promotion')"); err != nil {
		t.Fatalf("the promoted standby refused a write: %v", err)
	}
	if got := serverPort(t, follow); got != serverPort(t, standby.ConnString()) {
		t.Fatalf("FollowConnString reached port %d after the promotion, want the promoted standby's", got)
	}
}

// serverPort connects with connString and returns the port of the server it reached.
func serverPort(t *testing.T, connString string) int {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), connString)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	var port int
	if err := conn.QueryRow(t.Context(), "SELECT current_setting('port')::int").Scan(&port); err != nil {
		t.Fatal(err)
	}
	return port
}
