package dberr

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jobc-dev/jobc/internal/pgtest"
)

// ConnectionLost is what makes a worker retire every connection it holds, busy ones
// included, so a false yes costs the claims in flight on them; a false no keeps a
// worker on a demoted primary.
func TestConnectionLost(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewSchema(t, nil)
	ctx := t.Context()
	open, err := pgx.ConnectConfig(ctx, pool.Config().ConnConfig)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = open.Close(context.Background()) })
	closed, err := pgx.ConnectConfig(ctx, pool.Config().ConnConfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := closed.Close(ctx); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	violation := &pgconn.PgError{Code: "23514", Message: "updated partition constraint for default partition would be violated by some row"}
	for _, c := range []struct {
		name     string
		ctx      context.Context
		conn     *pgx.Conn
		err      error
		timeouts bool
		want     bool
	}{
		{"the server's error on a live connection", ctx, open, violation, true, false},
		{"the server's error on a closed connection", ctx, closed, violation, true, true},
		// pgx closed the connection because the caller cancelled (the worker stopping),
		// and returned the error the server had sent meanwhile.
		{"the server's error on a connection closed as its caller cancelled", cancelled, closed, violation, true, false},
		{"the caller's cancellation", ctx, closed, context.Canceled, true, false},
		{"a demoted primary", ctx, open, &pgconn.PgError{Code: "25006"}, false, true},
		{"a demoted primary as its caller cancelled", cancelled, open, &pgconn.PgError{Code: "25006"}, false, false},
		{"a connection exception", ctx, open, &pgconn.PgError{Code: "08006"}, false, true},
		{"a timeout, for the worker's own pools", ctx, open, fmt.Errorf("claim: %w", context.DeadlineExceeded), true, true},
		{"a timeout, for the application's pool", ctx, open, fmt.Errorf("claim: %w", context.DeadlineExceeded), false, false},
	} {
		if got := ConnectionLost(c.ctx, c.conn, c.err, c.timeouts); got != c.want {
			t.Errorf("%s: ConnectionLost = %v, want %v", c.name, got, c.want)
		}
	}
}
