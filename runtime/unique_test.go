package runtime_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/runtime"
)

func uniqueType(t *testing.T, u runtime.Unique) *runtime.JobType {
	return emailType(t, func(jt *runtime.JobType) { jt.Unique = &u })
}

// TestUniqueUnderConcurrency: ten concurrent transactions enqueue the same key; exactly
// one job exists and every caller is told its id.
func TestUniqueUnderConcurrency(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := uniqueType(t, runtime.Unique{Fields: []string{"email"}})
	var wg sync.WaitGroup
	results := make([]runtime.Enqueued, 10)
	errs := make([]error, 10)
	start := make(chan struct{})
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
				var err error
				results[i], err = runtime.Enqueue(ctx, tx, jt, emailPayload{N: i, Email: "same@example.com"})
				time.Sleep(20 * time.Millisecond) // hold the transaction open while others try
				return err
			})
		}()
	}
	close(start)
	wg.Wait()
	inserted := 0
	for i, r := range results {
		if errs[i] != nil {
			t.Fatalf("enqueue %d: %v", i, errs[i])
		}
		if !r.Duplicate {
			inserted++
		}
		if r.ID != results[0].ID {
			t.Errorf("enqueue %d got id %d, enqueue 0 got %d: all must name the one job", i, r.ID, results[0].ID)
		}
	}
	if inserted != 1 {
		t.Errorf("%d enqueues inserted, want exactly 1", inserted)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs`); n != 1 {
		t.Errorf("%d jobs, want 1", n)
	}
	// Another key is independent.
	other, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "other@example.com"})
	if err != nil || other.Duplicate {
		t.Errorf("a different key: %+v, %v", other, err)
	}
}

// TestUniqueKeyReleasedOrHeld: by default the key is free again once the job
// completes; with completed among its states, it stays held.
func TestUniqueKeyReleasedOrHeld(t *testing.T) {
	t.Parallel()
	for _, held := range []bool{false, true} {
		t.Run(fmt.Sprintf("held_when_completed=%v", held), func(t *testing.T) {
			t.Parallel()
			pool := newDB(t)
			ctx := context.Background()
			u := runtime.Unique{Fields: []string{"email"}}
			if held {
				u.While = []runtime.State{runtime.StateAvailable, runtime.StateScheduled, runtime.StateRunning, runtime.StateCompleted}
			}
			jt := uniqueType(t, u)
			first, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "k@example.com"})
			if err != nil {
				t.Fatal(err)
			}
			w := runtime.NewWorker(pool, testConfig(nil))
			if err := runtime.Handle(w, jt, func(context.Context, *runtime.Job, emailPayload) error { return nil }); err != nil {
				t.Fatal(err)
			}
			stop := startWorker(t, w)
			waitFor(t, "completion", 10*time.Second, func() bool {
				info, err := runtime.GetJob(ctx, pool, first.ID)
				return err == nil && info.State == runtime.StateCompleted
			})
			stop()
			again, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 2, Email: "k@example.com"})
			if err != nil {
				t.Fatal(err)
			}
			if again.Duplicate != held {
				t.Errorf("enqueue after completion: duplicate=%v, want %v", again.Duplicate, held)
			}
			if held && again.ID != first.ID {
				t.Errorf("duplicate names job %d, want %d", again.ID, first.ID)
			}
		})
	}
}

// TestUniquePeriod: with a period, the key includes the period the job runs in.
func TestUniquePeriod(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := uniqueType(t, runtime.Unique{Fields: []string{"email"}, Period: time.Hour})
	base := time.Now().Truncate(time.Hour).Add(time.Hour)
	a, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "p@example.com"}, runtime.RunAt(base.Add(time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 2, Email: "p@example.com"}, runtime.RunAt(base.Add(30*time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	c, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 3, Email: "p@example.com"}, runtime.RunAt(base.Add(90*time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	if a.Duplicate || !b.Duplicate || b.ID != a.ID || c.Duplicate {
		t.Errorf("same hour: %+v then %+v; next hour: %+v", a, b, c)
	}
}

// TestDedupKeyOption: WithDedupKey makes any job type unique for one enqueue's key,
// overriding the key a unique job type computes from its payload.
func TestDedupKeyOption(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	plain := emailType(t, nil)
	a, err := runtime.Enqueue(ctx, pool, plain, emailPayload{N: 1, Email: "a@example.com"}, runtime.WithDedupKey("invoice-7"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := runtime.Enqueue(ctx, pool, plain, emailPayload{N: 2, Email: "b@example.com"}, runtime.WithDedupKey("invoice-7"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Duplicate || !b.Duplicate || b.ID != a.ID {
		t.Errorf("same dedup key: %+v then %+v; want the second to name the first", a, b)
	}
	// On a unique job type the option replaces the key computed from the payload.
	unique := uniqueType(t, runtime.Unique{Fields: []string{"email"}})
	c, err := runtime.Enqueue(ctx, pool, unique, emailPayload{N: 3, Email: "same@example.com"}, runtime.WithDedupKey("first"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := runtime.Enqueue(ctx, pool, unique, emailPayload{N: 4, Email: "same@example.com"}, runtime.WithDedupKey("second"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Duplicate || d.Duplicate {
		t.Errorf("different dedup keys on equal payloads: %+v, %+v; want two jobs", c, d)
	}
}
