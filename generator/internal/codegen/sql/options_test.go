package sql_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestSQLProducerOptionsAndWakeUps: run_at, priority and a NULL payload do what Go's
// RunAt, WithPriority and a nil payload do, and an available job notifies channel
// jobc only while a worker of its queue sleeps, as Go's Enqueue does (jobc_wake).
func TestSQLProducerOptionsAndWakeUps(t *testing.T) {
	t.Parallel()
	_, file, _ := project(t, filepath.Join("..", "..", "..", "..", "testdata", "sql_producers"))
	pool := migrated(t, file)
	ctx := t.Context()

	listener, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Release()
	if _, err := listener.Exec(ctx, "LISTEN jobc"); err != nil {
		t.Fatal(err)
	}
	// next returns the next notification; a marker sent after an enqueue shows that
	// the enqueue sent none, without waiting for a notification that does not come.
	next := func() string {
		t.Helper()
		n, err := listener.Conn().WaitForNotification(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n.Payload
	}
	enqueue := func(query string, args ...any) int64 {
		t.Helper()
		var id int64
		if err := pool.QueryRow(ctx, query, args...).Scan(&id); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return id
	}
	state := func(id int64) (st string, priority int) {
		t.Helper()
		if err := pool.QueryRow(ctx, `SELECT state::text, priority FROM jobc_jobs WHERE id = $1`, id).Scan(&st, &priority); err != nil {
			t.Fatal(err)
		}
		return st, priority
	}

	// No worker sleeps: no notification.
	id := enqueue(`SELECT jobc_enqueue_purge_carts('{}')`)
	if _, err := pool.Exec(ctx, `SELECT pg_notify('jobc', 'marker-1')`); err != nil {
		t.Fatal(err)
	}
	if got := next(); got != "marker-1" {
		t.Errorf("notification %q with no sleeper, want none before marker-1", got)
	}
	if st, p := state(id); st != "available" || p != 5 {
		t.Errorf("job %d is %s with priority %d, want available with the job type's 5", id, st, p)
	}

	// A worker of queue maintenance sleeps: an available job wakes it, a scheduled one does not.
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_sleepers (queue, worker) VALUES ('maintenance', 'w1')`); err != nil {
		t.Fatal(err)
	}
	later := enqueue(`SELECT jobc_enqueue_purge_carts('{}', run_at => $1, priority => 9)`, time.Now().Add(time.Hour))
	if _, err := pool.Exec(ctx, `SELECT pg_notify('jobc', 'marker-2')`); err != nil {
		t.Fatal(err)
	}
	if got := next(); got != "marker-2" {
		t.Errorf("notification %q for a scheduled job, want none before marker-2", got)
	}
	if st, p := state(later); st != "scheduled" || p != 9 {
		t.Errorf("job %d is %s with priority %d, want scheduled with priority 9", later, st, p)
	}
	enqueue(`SELECT jobc_enqueue_purge_carts('{}', priority => 1)`)
	if got := next(); got != "maintenance" {
		t.Errorf("notification %q, want maintenance for the sleeping worker", got)
	}

	var pgErr *pgconn.PgError
	_, err = pool.Exec(ctx, `SELECT jobc_enqueue_purge_carts('{}', priority => 0)`)
	if !errors.As(err, &pgErr) || pgErr.Code != "22023" || pgErr.Message != "jobc: enqueue purge_carts: priority 0 out of range 1..9" {
		t.Errorf("priority 0: %v; want SQLSTATE 22023 with Go's message", err)
	}
	_, err = pool.Exec(ctx, `SELECT jobc_enqueue_purge_carts(NULL)`)
	if !errors.As(err, &pgErr) || pgErr.Code != "22J01" || pgErr.Message != "jobc: enqueue purge_carts: invalid purge_carts payload (version 1): got null, want object" {
		t.Errorf("a NULL payload: %v; want Go's error for null", err)
	}
}
