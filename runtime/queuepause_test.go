package runtime_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

// TestPauseQueue: a paused queue claims nothing, through a restart of its worker; a
// resumed one is worked at once; a pause written without a notification is seen
// within one poll interval.
func TestPauseQueue(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	jt := emailType(t, nil)
	cfg := testConfig(nil)
	log, rec := newLogRecorder()
	cfg.Logger = log
	var runs atomic.Int32
	start := func() func() {
		w := runtime.NewWorker(pool, cfg)
		if err := runtime.Handle(w, jt, func(context.Context, *runtime.Job, emailPayload) error {
			runs.Add(1)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		stop := startWorker(t, w)
		// A pause is seen at once through the listener; before it is connected, only
		// by the next poll, which may come after a claim's.
		waitFor(t, "the worker to be healthy (listening)", 20*cfg.PollInterval, func() bool { return w.Health().Healthy })
		return stop
	}
	enqueue := func() int64 {
		t.Helper()
		e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "ada@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		return e.ID
	}
	// held checks that job id stays available, unclaimed, for two poll intervals.
	held := func(what string, id int64) {
		t.Helper()
		time.Sleep(2 * cfg.PollInterval)
		if info, err := runtime.GetJob(ctx, pool, id); err != nil || info.State != runtime.StateAvailable || info.Attempt != 0 {
			t.Fatalf("%s: job %d is %+v, %v after %s; want it available and never claimed", what, id, info, err, 2*cfg.PollInterval)
		}
	}

	stop := start()
	waitJob(t, pool, enqueue(), runtime.StateCompleted, 20*cfg.PollInterval)
	if err := runtime.PauseQueue(ctx, pool, jt.Queue); err != nil {
		t.Fatal(err)
	}
	if err := runtime.PauseQueue(ctx, pool, jt.Queue); err != nil {
		t.Errorf("pausing a paused queue: %v; want no error", err)
	}
	// The worker's flag flips once the listener hands it the notification, or its
	// next poll reads the pause, whichever comes first (under load, the poll did); it
	// says it saw the pause once a claim that had read the flag just before has ended
	// (a job enqueued between the two was claimed once, in CI, under load). So the
	// job comes once the worker says it saw the pause. How soon it does is a latency,
	// not asserted here (it waits the patience of the other waits).
	waitFor(t, "the worker to see the pause", 20*cfg.PollInterval, func() bool {
		return len(rec.matching("queue paused")) > 0
	})
	id := enqueue()
	held("paused queue", id)
	stop()
	stop = start()
	held("paused queue after its worker restarted", id)

	if err := runtime.ResumeQueue(ctx, pool, jt.Queue); err != nil {
		t.Fatal(err)
	}
	// The notification resumes it at once; the poll would take one interval.
	resumed := time.Now()
	waitJob(t, pool, id, runtime.StateCompleted, 20*cfg.PollInterval)
	t.Logf("the resumed queue's job completed %s after ResumeQueue", time.Since(resumed))

	// A pause that sends no notification (as if the listener missed it) is read at the
	// next poll.
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_queues (name, paused_at) VALUES ($1, now())
		ON CONFLICT (name) DO UPDATE SET paused_at = now()`, jt.Queue); err != nil {
		t.Fatal(err)
	}
	time.Sleep(cfg.PollInterval + cfg.PollInterval/2)
	held("paused without a notification", enqueue())
	stop()
	if got := runs.Load(); got != 2 {
		t.Errorf("%d handler runs; want the 2 jobs enqueued before the pause and during the resume", got)
	}
}

// TestPauseQueueBadInput: an empty name is refused and nothing is stored; a queue that
// no worker serves may be paused, and shows in ListQueueStats.
func TestPauseQueueBadInput(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	if err := runtime.PauseQueue(ctx, pool, ""); !errors.Is(err, runtime.ErrEmptyQueueName) {
		t.Errorf("PauseQueue(\"\"): %v; want ErrEmptyQueueName", err)
	}
	if err := runtime.ResumeQueue(ctx, pool, ""); !errors.Is(err, runtime.ErrEmptyQueueName) {
		t.Errorf("ResumeQueue(\"\"): %v; want ErrEmptyQueueName", err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_queues`); n != 0 {
		t.Errorf("%d queue rows after refused calls; want 0", n)
	}
	if err := runtime.PauseQueue(ctx, pool, "nobody_serves_this"); err != nil {
		t.Fatal(err)
	}
	stats, err := runtime.ListQueueStats(ctx, pool)
	if err != nil || len(stats) != 1 || stats[0].Queue != "nobody_serves_this" || !stats[0].Paused || stats[0].Workers != 0 {
		t.Errorf("ListQueueStats: %+v, %v; want the one paused queue without workers", stats, err)
	}
	if err := runtime.ResumeQueue(ctx, pool, "nobody_serves_this"); err != nil {
		t.Fatal(err)
	}
	if stats, err := runtime.ListQueueStats(ctx, pool); err != nil || len(stats) != 0 {
		t.Errorf("ListQueueStats after resuming the empty queue: %+v, %v; want no entry", stats, err)
	}
}
