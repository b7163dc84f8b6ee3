package dbconn

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// On the worker's pools a stall retires the generation and cuts off busy connections
// at once: a statement hung on a dead link must not keep one of a few connections. A
// stall with nothing left to retire does not retire again.
func TestOwnedHealthAbandonsBusyConnections(t *testing.T) {
	t.Parallel()
	base := pgtest.NewSchema(t, nil)
	ctx := t.Context()
	pool, h, retired := ownedPool(t, base, func(cfg *pgxpool.Config) {
		cfg.ConnConfig.RuntimeParams["application_name"] = "abandon-test"
	})
	t.Cleanup(func() {
		// The server notices the abandoned session only when it next writes to it.
		_, _ = base.Exec(context.Background(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'abandon-test'`)
	})

	const sleep = 60 * time.Second
	done := make(chan error, 1)
	go func() {
		_, err := pool.Exec(ctx, fmt.Sprintf("SELECT pg_sleep(%d)", int(sleep.Seconds())))
		done <- err
	}()
	waitActive(t, base, sleep/2, `application_name = 'abandon-test'`)

	h.Stalled(ctx, errors.New("test: the listener's ping timed out"))
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the busy statement succeeded after its connection was abandoned")
		}
	case <-time.After(sleep / 2):
		t.Fatalf("the busy statement was still running %s after the stall retired its connection", sleep/2)
	}
	if n := retired.Load(); n != 1 {
		t.Fatalf("retired %d times, want 1", n)
	}

	// Nothing of the new generation is open yet: another stall retires nothing.
	h.Stalled(ctx, errors.New("test: the listener's ping timed out again"))
	if n := retired.Load(); n != 1 {
		t.Fatalf("a stall with no connection to retire retired again (%d times)", n)
	}
	// A connection opened since is retired by the next stall.
	if _, err := pool.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatalf("the pool did not open a new connection after the stall: %v", err)
	}
	h.Stalled(ctx, errors.New("test: and again"))
	if n := retired.Load(); n != 2 {
		t.Fatalf("a stall with a connection of the current generation: retired %d times in all, want 2", n)
	}
}

// A server that refuses a new connection because it is full (here a role's connection
// limit; max_connections answers with the same SQLSTATE, 53300) is alive: the acquire
// fails, and the busy connection of an owned pool finishes its statement. Retiring it
// lost claims the server had committed, each costing its jobs an attempt and a lease.
func TestOwnedHealthKeepsBusyConnectionsWhenTheServerIsFull(t *testing.T) {
	t.Parallel()
	base := pgtest.NewSchema(t, nil)
	ctx := t.Context()
	role := fmt.Sprintf("jobc_full_%d", time.Now().UnixNano())
	if _, err := base.Exec(ctx, `CREATE ROLE `+role+` LOGIN CONNECTION LIMIT 1`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_, _ = base.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, role)
		_, _ = base.Exec(ctx, `DROP ROLE `+role)
	})
	pool, _, retired := ownedPool(t, base, func(cfg *pgxpool.Config) {
		cfg.ConnConfig.User = role
		cfg.MaxConns = 2
	})

	done := make(chan error, 1)
	go func() {
		_, err := pool.Exec(ctx, "SELECT pg_sleep(3)")
		done <- err
	}()
	waitActive(t, base, 10*time.Second, `usename = $1`, role)
	_, err := pool.Exec(ctx, "SELECT 1")
	if !dberr.ServerFull(err) {
		t.Fatalf("a second connection of a role limited to one: %v, want SQLSTATE 53300", err)
	}
	if err := <-done; err != nil {
		t.Errorf("the busy statement failed after the server refused another connection: %v", err)
	}
	if n := retired.Load(); n != 0 {
		t.Errorf("a refused connection retired the pool's connections %d times, want none", n)
	}
}

// On a loaded machine one of the worker's statements, or an acquire, can wait out its
// timeout while the others succeed: the server answers, so the timeout costs that
// statement's connection and retires no other (retiring them all for it reopened every
// connection, whose slower statements timed out in turn: storms of reconnections in
// CI). A timeout when no statement has answered for a statement timeout is a stall,
// and retires the generation.
func TestOwnedHealthRetiresOnATimeoutOnlyWhenNothingAnswers(t *testing.T) {
	t.Parallel()
	base := pgtest.NewSchema(t, nil)
	ctx := t.Context()
	pool, _, retired := ownedPool(t, base, func(cfg *pgxpool.Config) { cfg.MaxConns = 2 })
	timedOut := func(what string, run func(ctx context.Context) error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(ctx, quiet/4)
		defer cancel()
		if err := run(ctx); !dberr.Timeout(err) {
			t.Fatalf("%s: %v, want a timeout", what, err)
		}
	}
	slow := func(ctx context.Context) error {
		_, err := pool.Exec(ctx, "SELECT pg_sleep(60)")
		return err
	}

	// One connection answers all along, a statement at least every quiet/10. The test's
	// context ends before its cleanups run, so that a failed test returns the
	// connection before the pool closes.
	answering, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stop, answered := make(chan struct{}), make(chan error, 1)
	go func() {
		defer answering.Release()
		for {
			select {
			case <-stop:
				answered <- nil
				return
			case <-time.After(quiet / 20):
			}
			if _, err := answering.Exec(ctx, "SELECT 1"); err != nil {
				answered <- err
				return
			}
		}
	}()
	timedOut("a statement on the other connection", slow)
	if n := retired.Load(); n != 0 {
		t.Fatalf("a statement's timeout while another connection answered retired the generation %d times, want none", n)
	}
	// In a transaction, whose rollback then runs on the connection the timeout closed.
	timedOut("a statement in a transaction", func(ctx context.Context) error {
		return pgx.BeginFunc(t.Context(), pool, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, "SELECT pg_sleep(60)")
			return err
		})
	})
	if n := retired.Load(); n != 0 {
		t.Fatalf("a timeout in a transaction while another connection answered retired the generation %d times, want none", n)
	}
	// An acquire that times out because every connection is busy, one answering.
	sleepCtx, cancelSleep := context.WithCancel(ctx)
	slept := make(chan error, 1)
	go func() { slept <- slow(sleepCtx) }()
	waitActive(t, base, 10*quiet, `query = 'SELECT pg_sleep(60)'`)
	timedOut("an acquire of a full pool", func(ctx context.Context) error {
		c, err := pool.Acquire(ctx)
		if err == nil {
			c.Release()
		}
		return err
	})
	cancelSleep()
	if err := <-slept; !errors.Is(err, context.Canceled) {
		t.Fatalf("the sleeping statement: %v, want it cancelled", err)
	}
	close(stop)
	if err := <-answered; err != nil {
		t.Fatalf("the answering connection failed: %v", err)
	}
	if n := retired.Load(); n != 0 {
		t.Fatalf("an acquire's timeout while a connection answered retired the generation %d times, want none", n)
	}

	// Nothing has answered for a statement timeout: the next timeout is a stall.
	time.Sleep(quiet)
	timedOut("a statement after a statement timeout of silence", slow)
	if n := retired.Load(); n != 1 {
		t.Fatalf("a timeout after %s without an answer retired the generation %d times, want once", quiet, n)
	}
}

// quiet is the statement timeout of ownedPool's pools.
const quiet = time.Second

// ownedPool opens a pool on base's schema, configured by configure, with an owned
// Health installed (the worker's pools', with a statement timeout of quiet), and
// counts the generations it retires.
// waitActive waits up to patience for the test's pg_sleep statement to run: for a
// session of pg_stat_activity matching where (with args) to be active.
func waitActive(t *testing.T, base *pgxpool.Pool, patience time.Duration, where string, args ...any) {
	t.Helper()
	for deadline := time.Now().Add(patience); ; time.Sleep(5 * time.Millisecond) {
		var n int
		if err := base.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND `+where, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pg_sleep statement never showed up as active in pg_stat_activity (%s) within %s", where, patience)
		}
	}
}

func ownedPool(t *testing.T, base *pgxpool.Pool, configure func(*pgxpool.Config)) (*pgxpool.Pool, *Health, *atomic.Int32) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(pgtest.SchemaConnString(t, pgtest.SchemaOf(base)))
	if err != nil {
		t.Fatal(err)
	}
	configure(cfg)
	h := new(Health)
	retired := new(atomic.Int32)
	h.Install(cfg, &Owned{StatementTimeout: quiet, OnRetire: func(context.Context, error) { retired.Add(1) }})
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool, h, retired
}

// One connection of an owned pool that breaks (its backend terminated: an operator's
// pg_terminate_backend, a crashed backend) retires the generation, but the statements
// busy on the others finish: they are bounded by their own timeouts, and a stalled
// server makes them fail on their own. Cutting them off lost a claim the server had
// committed on one of them, its jobs left leased to a worker that never saw them.
func TestOwnedHealthKeepsBusyConnectionsWhenOneBreaks(t *testing.T) {
	t.Parallel()
	base := pgtest.NewSchema(t, nil)
	ctx := t.Context()
	pool, _, retired := ownedPool(t, base, func(cfg *pgxpool.Config) {
		cfg.ConnConfig.RuntimeParams["application_name"] = "one-breaks-test"
		cfg.MaxConns = 2
	})
	busy, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Release()
	breaking, pid := pgtest.Backend(t, pool)
	defer breaking.Release()

	const sleep = time.Second
	done := make(chan error, 1)
	go func() {
		var n int
		err := busy.QueryRow(ctx, fmt.Sprintf(`SELECT 42 FROM pg_sleep(%g)`, sleep.Seconds())).Scan(&n)
		if err == nil && n != 42 {
			err = fmt.Errorf("read %d, want 42", n)
		}
		done <- err
	}()
	waitActive(t, base, 10*sleep, `application_name = 'one-breaks-test'`)
	if _, err := base.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	if _, err := breaking.Exec(ctx, `SELECT 1`); err == nil {
		t.Fatal("a statement on a terminated backend succeeded")
	}
	if n := retired.Load(); n != 1 {
		t.Fatalf("the broken connection retired the pool's connections %d times, want 1", n)
	}
	if err := <-done; err != nil {
		t.Errorf("the statement busy on another connection when one broke: %v, want it to finish", err)
	}
}

// BenchmarkSucceeded measures what an owned pool's statement pays to note its success
// (the clock read, and a write of the shared clock at most once a millisecond), from
// as many goroutines as there are cores.
func BenchmarkSucceeded(b *testing.B) {
	cfg, err := pgxpool.ParseConfig("")
	if err != nil {
		b.Fatal(err)
	}
	h := new(Health)
	h.Install(cfg, &Owned{StatementTimeout: time.Second})
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			h.succeeded()
		}
	})
	if !h.answering() {
		b.Fatal("no success noted")
	}
}
