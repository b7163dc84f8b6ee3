package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

// TestPrunerRunOnce: finished jobs older than their state's retention are deleted, with
// the unique keys they held, and so are old idempotency keys; younger ones and a state
// kept forever are not touched.
func TestPrunerRunOnce(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := emailType(t, func(jt *runtime.JobType) {
		jt.MaxAttempts = 1
		jt.Unique = &runtime.Unique{Fields: []string{"n"}, While: []runtime.State{runtime.StateAvailable, runtime.StateScheduled, runtime.StateRunning, runtime.StateCompleted}}
	})
	enqueue := func(n int) int64 {
		e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: n, Email: "ok@example.com"})
		if err != nil || e.Duplicate {
			t.Fatalf("enqueue %d: %+v, %v", n, e, err)
		}
		return e.ID
	}
	old, bad, young := enqueue(1), enqueue(2), enqueue(3)
	// Finish them as a worker would (jobc_finish), then make two of them old.
	leaseAll(t, ctx, pool, "me")
	for id, state := range map[int64]string{old: "completed", bad: "failed", young: "completed"} {
		if n := countRows(t, pool, `SELECT count(*) FROM jobc_finish(ARRAY[$1::bigint], $2::jobc_state, NULL, 'me', ARRAY[1])`, id, state); n != 1 {
			t.Fatalf("finishing job %d as %s moved %d rows", id, state, n)
		}
	}
	if _, err := pool.Exec(ctx, `UPDATE jobc_jobs_finished SET finished_at = now() - interval '2 hours' WHERE id IN ($1, $2)`, old, bad); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_idempotency_keys (key, job_id, created_at) VALUES
		('old:step', 1, now() - interval '2 hours'), ('new:step', 2, now())`); err != nil {
		t.Fatal(err)
	}

	retention := runtime.Retention{Completed: time.Hour, Failed: -1, Cancelled: time.Hour, IdempotencyKeys: time.Hour}
	res, err := runtime.NewPrunerForTest(pool, retention, 1, time.Now).RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Completed != 1 || res.Failed != 0 || res.Cancelled != 0 || res.IdempotencyKeys != 1 {
		t.Errorf("result %+v; want 1 completed job and 1 idempotency key pruned", res)
	}
	if _, err := runtime.GetJob(ctx, pool, old); !errors.Is(err, runtime.ErrJobNotFound) {
		t.Errorf("the old completed job: %v; want it pruned", err)
	}
	for id, state := range map[int64]runtime.State{bad: runtime.StateFailed, young: runtime.StateCompleted} {
		if info, err := runtime.GetJob(ctx, pool, id); err != nil || info.State != state {
			t.Errorf("job %d: %+v, %v; want it kept, %s", id, info, err, state)
		}
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_unique_keys WHERE job_id = $1`, old); n != 0 {
		t.Errorf("the pruned job's unique key survived")
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_unique_keys WHERE job_id = $1`, young); n != 1 {
		t.Errorf("the young completed job lost the unique key it holds while completed")
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_idempotency_keys WHERE key = 'new:step'`); n != 1 {
		t.Errorf("the young idempotency key was pruned")
	}
	again, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "ok@example.com"})
	if err != nil || again.Duplicate {
		t.Errorf("enqueue after pruning: %+v, %v; want a new job", again, err)
	}
	if dup, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 3, Email: "ok@example.com"}); err != nil || !dup.Duplicate || dup.ID != young {
		t.Errorf("enqueue of the young job's key: %+v, %v; want a duplicate of job %d", dup, err, young)
	}
}

// TestRegistryPrunerRunOnce: workers that missed ten leases of heartbeats leave the
// registry, and so do the sleeper rows of workers it no longer knows.
func TestRegistryPrunerRunOnce(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_workers (id, host, pid, queues, kinds, lease_secs, heartbeat_at) VALUES
		('dead', 'h', 1, '{email}', '{}', 30, now() - interval '301 seconds'),
		('slow', 'h', 2, '{email}', '{}', 30, now() - interval '200 seconds'),
		('live', 'h', 3, '{email}', '{}', 30, now())`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_sleepers (queue, worker) VALUES ('email', 'dead'), ('email', 'live'), ('email', 'gone')`); err != nil {
		t.Fatal(err)
	}
	res, err := runtime.NewRegistryPrunerForTest(pool).RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Workers != 1 || res.Sleepers != 2 {
		t.Errorf("result %+v; want 1 worker (dead) and 2 sleepers (dead, gone) pruned", res)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_workers WHERE id IN ('slow', 'live')`); n != 2 {
		t.Errorf("%d of the 2 workers within ten leases kept", n)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_sleepers WHERE worker = 'live'`); n != 1 {
		t.Errorf("the live worker's sleeper row was pruned")
	}
}
