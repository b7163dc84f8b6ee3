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
	jt := emailType(t, nil)
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
		_, err := listener.WaitForNotification(wctx)
		return err == nil
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
		return countRows(t, pool, `SELECT count(*) FROM jobc_sleepers WHERE queue = 'email'`) == 1
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
		return countRows(t, pool, `SELECT count(*) FROM jobc_sleepers WHERE queue = 'email'`) == 1
	})
}
