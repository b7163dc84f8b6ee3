package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

// TestQueueStats: counts by state, the oldest available job's age, the last hour's
// completed and failed (older ones left out), paused, and live workers, per queue.
func TestQueueStats(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	jt := emailType(t, func(jt *runtime.JobType) { jt.MaxAttempts = 1 })
	other := emailType(t, func(jt *runtime.JobType) { jt.Kind = "other_kind"; jt.Queue = "other" })
	cfg := testConfig(map[string]runtime.QueueConfig{jt.Queue: {}})
	w := runtime.NewWorker(pool, cfg)
	if err := runtime.Handle(w, jt, func(_ context.Context, _ *runtime.Job, p emailPayload) error {
		if p.N%2 == 1 {
			return errors.New("odd")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// other's handler is registered so the worker can start, but the worker serves
	// only jt's queue (Config.Queues): other's jobs wait.
	if err := runtime.Handle(w, other, func(context.Context, *runtime.Job, emailPayload) error { return nil }); err != nil {
		t.Fatal(err)
	}
	stop := startWorker(t, w)
	for n := range 5 { // 3 complete, 2 fail
		if _, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: n, Email: "ada@example.com"}); err != nil {
			t.Fatal(err)
		}
	}
	patience := 20 * cfg.PollInterval
	deadline := time.Now().Add(patience)
	for n := 0; n < 5; n = countRows(t, pool, `SELECT count(*) FROM jobc_jobs_finished`) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 5 jobs finished after %s", n, patience)
		}
		time.Sleep(cfg.PollInterval / 5)
	}
	for n := range 2 { // one old finished row of each state, outside the hour
		if _, err := pool.Exec(ctx, `UPDATE jobc_jobs_finished SET finished_at = now() - interval '2 hours'
			WHERE id = (SELECT min(id) FROM jobc_jobs_finished WHERE state = $1 AND finished_at > now() - interval '1 hour')`,
			[]string{"completed", "failed"}[n]); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		if _, err := runtime.Enqueue(ctx, pool, other, emailPayload{N: i, Email: "ada@example.com"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := runtime.Enqueue(ctx, pool, other, emailPayload{N: 9, Email: "ada@example.com"}, runtime.RunAfter(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE jobc_jobs SET available_at = now() - interval '90 seconds' WHERE queue = 'other' AND state = 'available' AND payload->>'n' = '0'`); err != nil {
		t.Fatal(err)
	}
	if err := runtime.PauseQueue(ctx, pool, "other"); err != nil {
		t.Fatal(err)
	}

	stats, err := runtime.ListQueueStats(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != 2 {
		t.Fatalf("ListQueueStats: %+v; want the email and other queues", stats)
	}
	email, oth := stats[0], stats[1]
	if email.Queue != "email" || email.Available != 0 || email.Running != 0 || email.CompletedLastHour != 2 || email.FailedLastHour != 1 ||
		email.Paused || email.Workers != 1 || email.OldestAvailableAge != 0 {
		t.Errorf("email: %+v; want 2 completed and 1 failed in the last hour, one worker, nothing waiting", email)
	}
	if oth.Queue != "other" || oth.Available != 3 || oth.Scheduled != 1 || !oth.Paused || oth.Workers != 0 ||
		oth.OldestAvailableAge < 90*time.Second || oth.OldestAvailableAge > 10*time.Minute {
		t.Errorf("other: %+v; want 3 available (the oldest due 90s ago), 1 scheduled, paused, no worker", oth)
	}
	stop()
	if stats, err := runtime.ListQueueStats(ctx, pool); err != nil || stats[0].Workers != 0 {
		t.Errorf("after the worker stopped: %+v, %v; want no worker on email", stats, err)
	}
}
