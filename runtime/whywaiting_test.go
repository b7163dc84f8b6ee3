package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime"
)

// TestWhyWaiting: each reason a job waits is named, with its numbers, in the order a
// claim meets them.
func TestWhyWaiting(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	limited := flowType(t, runtime.Flow{By: []string{"email"}, Concurrency: 1})
	rated := emailType(t, func(jt *runtime.JobType) {
		jt.Kind, jt.Queue = "send_sms", "sms"
		jt.Flow = &runtime.Flow{By: []string{"email"}, Rate: runtime.Rate{Limit: 1, Per: time.Hour}}
	})
	release := make(chan struct{})
	block := func(ctx context.Context, _ *runtime.Job, _ emailPayload) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	defer close(release)
	enqueue := func(jt *runtime.JobType, n int, opts ...runtime.EnqueueOption) int64 {
		t.Helper()
		e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: n, Email: "ada@example.com"}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return e.ID
	}
	first, second := enqueue(limited, 1), enqueue(limited, 2)
	later := enqueue(limited, 3, runtime.RunAfter(time.Hour))
	started, throttled := enqueue(rated, 1), enqueue(rated, 2)

	// No worker yet: nobody decodes the jobs.
	expectWaiting(t, pool, second, runtime.WaitNoWorker, "no live worker decodes send_email v1")

	w := runtime.NewWorker(pool, testConfig(nil))
	for _, jt := range []*runtime.JobType{limited, rated} {
		if err := runtime.Handle(w, jt, block); err != nil {
			t.Fatal(err)
		}
	}
	startWorker(t, w)
	waitFor(t, "the first job of each kind to run", 10*time.Second, func() bool {
		return countRows(t, pool, `SELECT count(*) FROM jobc_jobs WHERE state = 'running' AND id IN ($1, $2)`, first, started) == 2
	})
	expectWaiting(t, pool, first, runtime.WaitRunning, "running")
	why := expectWaiting(t, pool, second, runtime.WaitKeyConcurrency, "email ada@example.com is at its limit 1/1")
	if why.Limit != 1 || why.Current != 1 || why.Key != "email ada@example.com" {
		t.Errorf("concurrency wait %+v, want limit 1, current 1, key email ada@example.com", why)
	}
	expectWaiting(t, pool, later, runtime.WaitScheduled, "scheduled to run at")
	why = expectWaiting(t, pool, throttled, runtime.WaitKeyRate, "email ada@example.com reached its rate limit 1 per 1h0m0s; next start in ")
	if why.Until == nil || time.Until(*why.Until) < 59*time.Minute {
		t.Errorf("rate wait until %v, want about an hour from now", why.Until)
	}

	if err := runtime.PauseQueue(ctx, pool, limited.Queue); err != nil {
		t.Fatal(err)
	}
	expectWaiting(t, pool, second, runtime.WaitQueuePaused, "queue email is paused")
	if err := runtime.ResumeQueue(ctx, pool, limited.Queue); err != nil {
		t.Fatal(err)
	}

	// A version the worker does not decode.
	var newer int64
	if err := pool.QueryRow(ctx, `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts, flow_key)
		VALUES ('send_email', 'email', 'available', 5, 3, '{}', 3, '["bob@example.com"]') RETURNING id`).Scan(&newer); err != nil {
		t.Fatal(err)
	}
	expectWaiting(t, pool, newer, runtime.WaitNoWorker, "no live worker decodes send_email v3")
}

// TestWhyWaitingSequence: a sequence's later job waits for the first, and behind a
// failed job, for its retry.
func TestWhyWaitingSequence(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := flowType(t, runtime.Flow{By: []string{"email"}, Sequence: true})
	jt.MaxAttempts = 1
	a, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "ledger@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 2, Email: "ledger@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	w := runtime.NewWorker(pool, testConfig(nil))
	failing := make(chan struct{})
	if err := runtime.Handle(w, jt, func(ctx context.Context, job *runtime.Job, p emailPayload) error {
		if p.N == 1 {
			<-failing
			return errors.New("ledger closed")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	waitFor(t, "the first job to run", 10*time.Second, func() bool {
		return countRows(t, pool, `SELECT count(*) FROM jobc_jobs WHERE state = 'running' AND id = $1`, a.ID) == 1
	})
	why := expectWaiting(t, pool, b.ID, runtime.WaitSequenceBehind, "sequence email ledger@example.com runs job")
	if why.HeldBy != a.ID {
		t.Errorf("held by %d, want the first job %d", why.HeldBy, a.ID)
	}
	close(failing)
	waitJob(t, pool, a.ID, runtime.StateFailed, 10*time.Second)
	why = expectWaiting(t, pool, b.ID, runtime.WaitSequenceFailed, "is held by failed job")
	if why.HeldBy != a.ID {
		t.Errorf("held by %d, want the failed job %d", why.HeldBy, a.ID)
	}
}

func expectWaiting(t *testing.T, pool *pgxpool.Pool, id int64, cause runtime.WaitCause, reason string) runtime.Waiting {
	t.Helper()
	why, err := runtime.WhyWaiting(context.Background(), pool, id)
	if err != nil {
		t.Fatalf("why is job %d waiting: %v", id, err)
	}
	if why.Cause != cause || !strings.Contains(why.Reason, reason) {
		t.Errorf("job %d waits because %s: %q; want %s: %q", id, why.Cause, why.Reason, cause, reason)
	}
	return why
}
