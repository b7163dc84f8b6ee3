package runtime_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// countingTracer counts the statements it sees end, to show that FollowPrimary keeps
// the tracer an application configured.
type countingTracer struct{ ended atomic.Int64 }

func (c *countingTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

func (c *countingTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {
	c.ended.Add(1)
}

// followPool opens a pool with FollowPrimary on the test's schema.
func followPool(t *testing.T, tracer pgx.QueryTracer) *pgxpool.Pool {
	t.Helper()
	base := newDB(t)
	cfg, err := pgxpool.ParseConfig(pgtest.SchemaConnString(t, pgtest.SchemaOf(base)))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = tracer
	cfg.MaxConns = 3
	runtime.FollowPrimary(cfg)
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// backendPIDs acquires n connections at once and returns their server process ids.
func backendPIDs(t *testing.T, pool *pgxpool.Pool, n int) []uint32 {
	t.Helper()
	var conns []*pgxpool.Conn
	defer func() {
		for _, c := range conns {
			c.Release()
		}
	}()
	var pids []uint32
	for range n {
		c, err := pool.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if err := c.Ping(t.Context()); err != nil {
			t.Fatal(err)
		}
		pids = append(pids, c.Conn().PgConn().PID())
	}
	slices.Sort(pids)
	return pids
}

// A read-only error on one connection (what every statement gets from a demoted
// primary) retires all of the pool's connections, so that new ones choose the host
// again; an ordinary error retires none, a timeout only its own.
func TestFollowPrimaryRetiresConnectionsOnReadOnly(t *testing.T) {
	t.Parallel()
	tracer := &countingTracer{}
	pool := followPool(t, tracer)
	ctx := t.Context()
	before := backendPIDs(t, pool, 3)

	if _, err := pool.Exec(ctx, "SELECT * FROM no_such_table"); err == nil {
		t.Fatal("a query of a missing table succeeded")
	}
	if after := backendPIDs(t, pool, 3); !slices.Equal(after, before) {
		t.Fatalf("an undefined-table error replaced connections: %v, then %v", before, after)
	}

	// A statement that times out costs its own connection only: on an application's
	// pool that is a slow query under a deadline, not a sign of a failover.
	slow, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err := pool.Exec(slow, "SELECT pg_sleep(5)")
	cancel()
	if err == nil {
		t.Fatal("pg_sleep(5) finished within 50ms")
	}
	kept := 0
	afterTimeout := backendPIDs(t, pool, 3)
	for _, pid := range afterTimeout {
		if slices.Contains(before, pid) {
			kept++
		}
	}
	if kept != 2 {
		t.Fatalf("after one statement timed out the pool kept %d of its 3 connections, want 2: before %v, after %v", kept, before, afterTimeout)
	}
	before = afterTimeout

	// The session-level setting makes just this connection behave like one to a
	// demoted primary.
	c, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "SET default_transaction_read_only = on"); err != nil {
		t.Fatal(err)
	}
	_, err = c.Exec(ctx, "CREATE TABLE written_on_a_read_only_server (v int)")
	c.Release()
	if err == nil {
		t.Fatal("a write succeeded in a read-only session")
	}
	after := backendPIDs(t, pool, 3)
	for _, pid := range after {
		if slices.Contains(before, pid) {
			t.Fatalf("after a read-only error the pool still uses connection (backend %d); before %v, after %v", pid, before, after)
		}
	}
	if tracer.ended.Load() == 0 {
		t.Error("the application's tracer saw no statements: FollowPrimary replaced it instead of chaining it")
	}
}

// BenchmarkFollowPrimary measures what FollowPrimary's hooks (a generation check on
// acquire and release, a tracer on every statement) add to a pooled round trip.
func BenchmarkFollowPrimary(b *testing.B) {
	base := pgtest.NewSchema(b, nil)
	for _, follow := range []bool{false, true} {
		name := "plain"
		if follow {
			name = "follow"
		}
		b.Run(name, func(b *testing.B) {
			cfg, err := pgxpool.ParseConfig(pgtest.SchemaConnString(b, pgtest.SchemaOf(base)))
			if err != nil {
				b.Fatal(err)
			}
			if follow {
				runtime.FollowPrimary(cfg)
			}
			pool, err := pgxpool.NewWithConfig(b.Context(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer pool.Close()
			for b.Loop() {
				if _, err := pool.Exec(b.Context(), "SELECT 1"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
