package runtime_test

import (
	"context"
	"slices"
	"testing"

	"github.com/jobc-dev/jobc/runtime"
)

// TestSchedulerRunOnce: one run makes every due scheduled job available, a batch per
// statement, leaves jobs not yet due scheduled, and wakes only the queues that got
// work and have a sleeping worker.
func TestSchedulerRunOnce(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts, available_at)
		SELECT 'send_email', q, 'scheduled', 5, 1, '{}', 3, now() + d
		FROM (VALUES ('sched_email', interval '-1 second'), ('sched_email', interval '-1 minute'), ('sched_email', interval '-1 hour'),
		             ('sched_other', interval '-1 second'), ('sched_other', interval '-2 seconds'),
		             ('sched_email', interval '1 hour'), ('sched_idle', interval '1 hour')) v(q, d)`); err != nil {
		t.Fatal(err)
	}
	// Workers of email and idle sleep; nobody of queue other does. (The queues' names
	// are the test's own: the listener hears the whole database.)
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_sleepers (queue, worker) VALUES ('sched_email', 'w1'), ('sched_idle', 'w2')`); err != nil {
		t.Fatal(err)
	}
	listener := listenJobc(t, pool)

	res, err := runtime.NewSchedulerForTest(pool, 2).RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Promoted != 5 || res.ByQueue["sched_email"] != 3 || res.ByQueue["sched_other"] != 2 || len(res.ByQueue) != 2 {
		t.Errorf("result %+v; want 5 promoted, email 3 and other 2", res)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs WHERE state = 'scheduled' AND available_at > now()`); n != 2 {
		t.Errorf("%d jobs not yet due still scheduled, want 2", n)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs WHERE state = 'available'`); n != 5 {
		t.Errorf("%d jobs available, want 5", n)
	}
	// Each batch is a transaction of its own, so email may be told once per batch.
	got := notificationsUntilSentinel(t, pool, listener, "sched_")
	if !slices.Contains(got, "sched_email") || slices.Contains(got, "sched_other") || slices.Contains(got, "sched_idle") {
		t.Errorf("notified %q; want only email: other has no sleeping worker, idle got no work", got)
	}

	again, err := runtime.NewSchedulerForTest(pool, 2).RunOnce(ctx)
	if err != nil || again.Promoted != 0 {
		t.Errorf("second run: %+v, %v; want nothing promoted", again, err)
	}
}
