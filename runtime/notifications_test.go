package runtime_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
)

// listenJobc opens a connection that listens on channel jobc, for tests of who is
// woken.
func listenJobc(t *testing.T, pool *pgxpool.Pool) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.SchemaConnString(t, pgtest.SchemaOf(pool)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	if _, err := conn.Exec(ctx, "LISTEN jobc"); err != nil {
		t.Fatal(err)
	}
	return conn
}

// notificationsUntilSentinel sends a sentinel notification on channel jobc and returns
// the payloads the listener received before it that start with prefix. PostgreSQL
// delivers a session's notifications in commit order, so everything committed before
// the sentinel is in the list, and nothing has to be waited for by a guessed time.
// LISTEN hears the whole database, which the tests running beside this one share
// (each in a schema of its own): so a test names its queues with a prefix of its own
// and reads only those, and its sentinel is its own too.
func notificationsUntilSentinel(t *testing.T, pool *pgxpool.Pool, listener *pgx.Conn, prefix string) []string {
	t.Helper()
	ctx := context.Background()
	sentinel := fmt.Sprintf("sentinel-%d", rand.Int64())
	if _, err := pool.Exec(ctx, `SELECT pg_notify('jobc', $1)`, sentinel); err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		n, err := listener.WaitForNotification(wctx)
		cancel()
		if err != nil {
			t.Fatalf("waiting for the sentinel notification (received %q so far): %v", got, err)
		}
		if n.Payload == sentinel {
			return got
		}
		if strings.HasPrefix(n.Payload, prefix) {
			got = append(got, n.Payload)
		}
	}
}
