package runtime_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/jobc-dev/jobc/runtime"
)

// TestRescuerRunOnce: of the jobs whose lease expired, one with attempts left goes back
// to its queue with "lease expired" recorded (and wakes its sleeping worker), one out
// of attempts fails, one whose cancellation was requested ends cancelled; a lease
// still valid is left alone. The run logs what it did.
func TestRescuerRunOnce(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := emailType(t, func(jt *runtime.JobType) { jt.MaxAttempts = 2 })
	ids := make([]int64, 5)
	for i := range ids {
		e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: i, Email: "a@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = e.ID
	}
	retry, fail, cancel, alive, fail2 := ids[0], ids[1], ids[2], ids[3], ids[4]
	// A worker that died holding all four: retry on its first attempt, fail on its
	// last, cancel asked to cancel; alive is held by a worker whose lease is valid.
	if _, err := pool.Exec(ctx, `UPDATE jobc_jobs SET state = 'running', lease_owner = 'ghost',
		lease_expires_at = now() - interval '1 second',
		attempt = CASE WHEN id IN ($1, $3) THEN 2 ELSE 1 END,
		cancel_requested_at = CASE WHEN id = $2 THEN now() END`, fail, cancel, fail2); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE jobc_jobs SET lease_owner = 'alive', lease_expires_at = now() + interval '1 hour' WHERE id = $1`, alive); err != nil {
		t.Fatal(err)
	}
	// fail2 was held by a second dead worker: each is finished under its own lease.
	if _, err := pool.Exec(ctx, `UPDATE jobc_jobs SET lease_owner = 'ghost2' WHERE id = $1`, fail2); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_sleepers (queue, worker) VALUES ('email', 'w1')`); err != nil {
		t.Fatal(err)
	}
	listener := listenJobc(t, pool)
	log, rec := newLogRecorder()

	res, err := runtime.NewRescuerForTest(pool, log, 1).RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Retried != 1 || res.Failed != 2 || res.Cancelled != 1 {
		t.Errorf("result %+v; want 1 retried, 2 failed, 1 cancelled", res)
	}
	if !maps.Equal(res.ByQueue, map[string]int{"email": 4}) {
		t.Errorf("rescued by queue %v; want email: 4", res.ByQueue)
	}
	want := map[int64]runtime.State{retry: runtime.StateAvailable, fail: runtime.StateFailed, cancel: runtime.StateCancelled,
		alive: runtime.StateRunning, fail2: runtime.StateFailed}
	for id, state := range want {
		info, err := runtime.GetJob(ctx, pool, id)
		if err != nil {
			t.Fatal(err)
		}
		if info.State != state {
			t.Errorf("job %d is %s, want %s", id, info.State, state)
		}
		if id == alive {
			if len(info.Errors) != 0 || info.Attempt != 1 {
				t.Errorf("job %d with a valid lease: attempt %d errors %+v; want untouched", id, info.Attempt, info.Errors)
			}
			continue
		}
		worker := "ghost"
		if id == fail2 {
			worker = "ghost2"
		}
		if len(info.Errors) != 1 || info.Errors[0].Class != "lease_expired" || info.Errors[0].Worker != worker {
			t.Errorf("job %d (%s): errors %+v; want one lease_expired error of worker %s", id, state, info.Errors, worker)
		}
	}
	if info, _ := runtime.GetJob(ctx, pool, retry); info.Attempt != 1 || info.FinishedAt != nil {
		t.Errorf("retried job: attempt %d finished %v; want the attempt counted once, not finished", info.Attempt, info.FinishedAt)
	}
	if got := notificationsUntilSentinel(t, pool, listener); !slices.Equal(got, []string{"email"}) {
		t.Errorf("notified %q; want email once, for the job back in it", got)
	}
	if got := rec.matching("WARN jobc worker: rescued jobs whose lease expired"); len(got) != 4 {
		t.Errorf("logged %q; want one record per batch of one", rec.all())
	}

	again, err := runtime.NewRescuerForTest(pool, log, 1).RunOnce(ctx)
	if err != nil || again.Retried+again.Failed+again.Cancelled != 0 || len(again.ByQueue) != 0 {
		t.Errorf("second run: %+v, %v; want nothing to rescue", again, err)
	}
}
