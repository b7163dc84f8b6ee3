package runtime_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

// TestEnqueueManyInsertsAll: a thousand jobs in one statement, and one more than
// runtime.UnnestMaxBatch with COPY, with their ids, all workable.
func TestEnqueueManyInsertsAll(t *testing.T) {
	t.Parallel()
	for _, size := range []int{1000, runtime.UnnestMaxBatch + 1} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			t.Parallel()
			pool := newDB(t)
			ctx := context.Background()
			jt := emailType(t, nil)
			ps := make([]emailPayload, size)
			for i := range ps {
				ps[i] = emailPayload{N: i, Email: "bulk@example.com"}
			}
			got, err := runtime.EnqueueMany(ctx, pool, jt, ps, runtime.WithPriority(2), runtime.WithMetadata(map[string]any{"batch": "b1"}))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(ps) {
				t.Fatalf("%d results for %d payloads", len(got), len(ps))
			}
			if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs WHERE state = 'available' AND priority = 2 AND metadata->>'batch' = 'b1'`); n != len(ps) {
				t.Errorf("%d available jobs with the options applied, want %d", n, len(ps))
			}
			// Each returned id is the row of the matching payload.
			for _, i := range []int{0, 1, size / 2, size - 2, size - 1} {
				info, err := runtime.GetJob(ctx, pool, got[i].ID)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(info.Payload), `"n": `+strconv.Itoa(i)+",") {
					t.Errorf("job %d has payload %s, want n=%d", got[i].ID, info.Payload, i)
				}
			}
			// A later single enqueue gets a fresh id: the batch used the sequence.
			e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "one@example.com"})
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range got {
				if g.ID == e.ID {
					t.Fatalf("id %d reused", e.ID)
				}
			}
		})
	}
}

// TestEnqueueManyRejectsAllOnOneInvalid: one bad payload inserts nothing and is named.
func TestEnqueueManyRejectsAllOnOneInvalid(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	jt := emailType(t, nil)
	ps := []emailPayload{{N: 1, Email: "ok@example.com"}, {N: 2, Email: "no"}, {N: 3, Email: "ok@example.com"}}
	_, err := runtime.EnqueueMany(context.Background(), pool, jt, ps)
	var pe *runtime.PayloadError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "payload 1") || !strings.Contains(err.Error(), "/email") {
		t.Fatalf("err = %v; want a PayloadError naming payload 1 and /email", err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs`); n != 0 {
		t.Errorf("%d jobs inserted", n)
	}
}

// TestEnqueueManyScheduled: run-at in the future makes the copied jobs scheduled, and
// the worker runs them once due.
func TestEnqueueManyScheduled(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := emailType(t, nil)
	runAt := time.Now().Add(time.Second)
	if _, err := runtime.EnqueueMany(ctx, pool, jt, []emailPayload{{N: 1, Email: "a@example.com"}, {N: 2, Email: "b@example.com"}}, runtime.RunAt(runAt)); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs WHERE state = 'scheduled'`); n != 2 {
		t.Fatalf("%d scheduled jobs, want 2", n)
	}
	w := runtime.NewWorker(pool, testConfig(nil))
	ran := make(chan time.Time, 2)
	if err := runtime.Handle(w, jt, func(context.Context, *runtime.Job, emailPayload) error {
		ran <- time.Now()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	for range 2 {
		select {
		case at := <-ran:
			// The server runs the jobs by its wall clock, so compare wall clocks: Go
			// compares two readings by the monotonic clock, and when the system clock
			// is stepped forward between them (seen in CI: 0.88 s) a job the server
			// rightly found due looks early by that much.
			if at.Round(0).Before(runAt.Round(0)) {
				t.Errorf("ran at %s, before its run time %s", at, runAt)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("scheduled jobs did not run")
		}
	}
}

// TestHeartbeat: a running job can extend its lease; once the job is finished the lease
// is gone and Heartbeat says so.
func TestHeartbeat(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := emailType(t, nil)
	if _, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "a@example.com"}); err != nil {
		t.Fatal(err)
	}
	w := runtime.NewWorker(pool, testConfig(nil))
	jobs := make(chan *runtime.Job, 1)
	results := make(chan error, 1)
	if err := runtime.Handle(w, jt, func(ctx context.Context, job *runtime.Job, _ emailPayload) error {
		var before, after time.Time
		if err := pool.QueryRow(ctx, `SELECT lease_expires_at FROM jobc_jobs WHERE id = $1`, job.ID).Scan(&before); err != nil {
			return err
		}
		time.Sleep(20 * time.Millisecond)
		err := job.Heartbeat(ctx)
		if err == nil {
			if err := pool.QueryRow(ctx, `SELECT lease_expires_at FROM jobc_jobs WHERE id = $1`, job.ID).Scan(&after); err != nil {
				return err
			}
			if !after.After(before) {
				err = errors.New("lease not extended")
			}
		}
		results <- err
		jobs <- job
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	if err := <-results; err != nil {
		t.Fatalf("heartbeat while running: %v", err)
	}
	job := <-jobs
	waitFor(t, "the job to complete", 10*time.Second, func() bool {
		info, err := runtime.GetJob(ctx, pool, job.ID)
		return err == nil && info.State == runtime.StateCompleted
	})
	if err := job.Heartbeat(ctx); !errors.Is(err, runtime.ErrLeaseLost) {
		t.Errorf("heartbeat after completion: %v, want ErrLeaseLost", err)
	}
}
