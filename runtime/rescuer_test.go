package runtime_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

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
	// The queue's name is the test's own: the listener below hears the whole
	// database (notificationsUntilSentinel).
	jt := emailType(t, func(jt *runtime.JobType) { jt.MaxAttempts, jt.Queue = 2, "rescuer_email" })
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
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_sleepers (queue, worker) VALUES ('rescuer_email', 'w1')`); err != nil {
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
	if !maps.Equal(res.ByQueue, map[string]int{"rescuer_email": 4}) {
		t.Errorf("rescued by queue %v; want rescuer_email: 4", res.ByQueue)
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
	if got := notificationsUntilSentinel(t, pool, listener, "rescuer_"); !slices.Equal(got, []string{"rescuer_email"}) {
		t.Errorf("notified %q; want rescuer_email once, for the job back in it", got)
	}
	if got := rec.matching("WARN jobc worker: rescued jobs whose lease expired"); len(got) != 4 {
		t.Errorf("logged %q; want one record per batch of one", rec.all())
	}

	again, err := runtime.NewRescuerForTest(pool, log, 1).RunOnce(ctx)
	if err != nil || again.Retried+again.Failed+again.Cancelled != 0 || len(again.ByQueue) != 0 {
		t.Errorf("second run: %+v, %v; want nothing to rescue", again, err)
	}
}

// TestRescuerTakesOldestExpiriesOfEveryJob: jobs with a flow key and jobs without are
// found on different indexes of running jobs (jobc_jobs_running_idx holds only the
// second), and a batch takes the oldest expiries of both together, so neither kind
// waits behind the other.
func TestRescuerTakesOldestExpiriesOfEveryJob(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	plain := emailType(t, nil)
	flow := flowType(t, runtime.Flow{By: []string{"email"}, Concurrency: 2})
	var ids []int64
	for i, jt := range []*runtime.JobType{flow, plain, flow, plain} {
		e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: i, Email: "a@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	// Expired 4, 3, 2 and 1 seconds ago, in that order.
	if _, err := pool.Exec(ctx, `UPDATE jobc_jobs SET state = 'running', lease_owner = 'ghost', attempt = 1,
		lease_expires_at = now() - make_interval(secs => 4 - array_position($1::bigint[], id) + 1)`, ids); err != nil {
		t.Fatal(err)
	}
	rescue := func() []int64 {
		t.Helper()
		rows, err := pool.Query(ctx, `SELECT job_id FROM jobc_rescue_expired(3)`)
		if err != nil {
			t.Fatal(err)
		}
		got, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		return got
	}
	if got, want := rescue(), ids[:3]; !slices.Equal(got, want) {
		t.Errorf("first batch of 3 rescued %v, want the 3 oldest expiries %v", got, want)
	}
	if got, want := rescue(), ids[3:]; !slices.Equal(got, want) {
		t.Errorf("second batch rescued %v, want the last %v", got, want)
	}
	for i, id := range ids {
		if info, err := runtime.GetJob(ctx, pool, id); err != nil || info.State != runtime.StateAvailable {
			t.Errorf("job %d (%d of 4): %+v, %v; want available again", id, i+1, info.State, err)
		}
	}
}
