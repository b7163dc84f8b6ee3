package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// TestEnqueueNotifiesOnlySleepingWorkers: an enqueue sends a notification only when a
// worker of the queue waits for one; a worker that ran dry registers itself, and is
// woken by the next enqueue at once, long before its poll interval.
func TestEnqueueNotifiesOnlySleepingWorkers(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	// Notifications are per database, and the package's other tests share it: this
	// test's queue is its own, and only notifications for it count.
	const queue = "notify_sleepers"
	jt := emailType(t, func(jt *runtime.JobType) { jt.Queue = queue })
	listener, err := pgx.Connect(ctx, pgtest.SchemaConnString(t, pgtest.SchemaOf(pool)))
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close(ctx)
	if _, err := listener.Exec(ctx, "LISTEN jobc"); err != nil {
		t.Fatal(err)
	}
	notified := func(within time.Duration) bool {
		wctx, cancel := context.WithTimeout(ctx, within)
		defer cancel()
		for {
			n, err := listener.WaitForNotification(wctx)
			if err != nil {
				return false
			}
			if n.Payload == queue {
				return true
			}
		}
	}

	if _, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "a@example.com"}); err != nil {
		t.Fatal(err)
	}
	if notified(300 * time.Millisecond) {
		t.Fatal("an enqueue notified although no worker sleeps")
	}

	cfg := testConfig(nil)
	cfg.PollInterval = time.Minute // only a notification can wake it in time
	w := runtime.NewWorker(pool, cfg)
	ran := make(chan int, 2)
	if err := runtime.Handle(w, jt, func(_ context.Context, _ *runtime.Job, p emailPayload) error {
		ran <- p.N
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	if n := <-ran; n != 1 {
		t.Fatalf("ran job %d", n)
	}
	waitFor(t, "the worker to sleep", 5*time.Second, func() bool {
		return countRows(t, pool, `SELECT count(*) FROM jobc_sleepers WHERE queue = $1`, queue) == 1
	})
	start := time.Now()
	if _, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 2, Email: "b@example.com"}); err != nil {
		t.Fatal(err)
	}
	if !notified(2 * time.Second) {
		t.Error("an enqueue did not notify the sleeping worker")
	}
	select {
	case <-ran:
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("the sleeping worker took %s to pick the job up", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the sleeping worker was not woken")
	}
	waitFor(t, "the worker to sleep again", 5*time.Second, func() bool {
		return countRows(t, pool, `SELECT count(*) FROM jobc_sleepers WHERE queue = $1`, queue) == 1
	})
}
