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

// TestEnqueueWakesOnlyForAvailableJobs: with a worker of the queue asleep, one job or a
// batch (one notification for the whole batch), a unique job or a workflow's first job
// wakes it when the jobs are available, and none does when they are scheduled for
// later or nobody sleeps. Notifications
// arrive in commit order, so an enqueue that must not notify is followed by one of a
// marker queue, whose notification must be the next one heard.
func TestEnqueueWakesOnlyForAvailableJobs(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	const queue, marker = "wake_available", "wake_marker"
	jt := emailType(t, func(jt *runtime.JobType) { jt.Queue = queue })
	mt := emailType(t, func(jt *runtime.JobType) { jt.Kind, jt.Queue = "marker", marker })
	listener, err := pgx.Connect(ctx, pgtest.SchemaConnString(t, pgtest.SchemaOf(pool)))
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close(ctx)
	if _, err := listener.Exec(ctx, "LISTEN jobc"); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_sleepers (queue, worker) VALUES ($1, 'w1'), ($2, 'w1')`, queue, marker); err != nil {
		t.Fatal(err)
	}
	var heard []string // every notification of the two queues, for failure messages
	next := func() string {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second) // a guard, not a limit: one arrives at commit
		defer cancel()
		for {
			n, err := listener.WaitForNotification(wctx)
			if err != nil {
				t.Fatalf("no notification (heard so far %q): %v", heard, err)
			}
			if n.Payload == queue || n.Payload == marker {
				heard = append(heard, n.Payload)
				return n.Payload
			}
		}
	}
	batch := []emailPayload{{N: 1, Email: "a@example.com"}, {N: 2, Email: "b@example.com"}, {N: 3, Email: "c@example.com"}}
	expectQuiet := func(what string) {
		t.Helper()
		if _, err := runtime.Enqueue(ctx, pool, mt, emailPayload{N: 0, Email: "m@example.com"}); err != nil {
			t.Fatal(err)
		}
		if got := next(); got != marker {
			t.Errorf("%s notified its queue (heard %q)", what, heard)
			next() // the marker's
		}
	}

	if _, err := runtime.Enqueue(ctx, pool, jt, batch[0], runtime.RunAfter(time.Hour)); err != nil {
		t.Fatal(err)
	}
	expectQuiet("a scheduled job")
	if _, err := runtime.EnqueueMany(ctx, pool, jt, batch, runtime.RunAfter(time.Hour)); err != nil {
		t.Fatal(err)
	}
	expectQuiet("a scheduled batch")

	if _, err := runtime.Enqueue(ctx, pool, jt, batch[0]); err != nil {
		t.Fatal(err)
	}
	if got := next(); got != queue {
		t.Errorf("an available job did not notify its sleeping worker (heard %q)", heard)
	}
	if _, err := runtime.EnqueueMany(ctx, pool, jt, batch); err != nil {
		t.Fatal(err)
	}
	if got := next(); got != queue {
		t.Errorf("an available batch did not notify its sleeping worker (heard %q)", heard)
	}
	expectQuiet("a batch's second notification") // one per batch: the next is the marker's
	// The gates that insert jobs themselves ask the same: a unique job's, a
	// workflow's start (its first step's job).
	unique := func(key string) {
		t.Helper()
		if _, err := pool.Exec(ctx, `SELECT * FROM jobc_enqueue_unique('email', $1, 5, 3, 1, '{"n": 1}', '{}', NULL, $2, NULL)`, queue, key); err != nil {
			t.Fatal(err)
		}
	}
	start := func() {
		t.Helper()
		def := `{"steps":[{"name":"a","after":[],"kind":"email","queue":"` + queue + `","priority":5,"max_attempts":1,"payload_version":1}]}`
		if _, err := pool.Exec(ctx, `SELECT jobc_workflow_start('w', $1, 1, '{"n": 1}')`, def); err != nil {
			t.Fatal(err)
		}
	}
	unique("k1")
	if got := next(); got != queue {
		t.Errorf("an available unique job did not notify its sleeping worker (heard %q)", heard)
	}
	start()
	if got := next(); got != queue {
		t.Errorf("a workflow's first job did not notify its sleeping worker (heard %q)", heard)
	}

	if _, err := pool.Exec(ctx, `DELETE FROM jobc_sleepers WHERE queue = $1`, queue); err != nil {
		t.Fatal(err)
	}
	if _, err := runtime.Enqueue(ctx, pool, jt, batch[0]); err != nil {
		t.Fatal(err)
	}
	expectQuiet("a job with no worker asleep")
	if _, err := runtime.EnqueueMany(ctx, pool, jt, batch); err != nil {
		t.Fatal(err)
	}
	expectQuiet("a batch with no worker asleep")
	unique("k2")
	expectQuiet("a unique job with no worker asleep")
	start()
	expectQuiet("a workflow's start with no worker asleep")
}
