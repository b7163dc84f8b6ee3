package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/runtime"
)

// TestHundredJobsTenWorkers is the walking skeleton's acceptance test: 100 jobs, ten
// workers competing for them, every job handled exactly once and completed.
func TestHundredJobsTenWorkers(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := emailType(t, nil)

	const jobs = 100
	for i := range jobs {
		if _, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: i, Email: fmt.Sprintf("u%d@example.com", i)}); err != nil {
			t.Fatal(err)
		}
	}

	var mu sync.Mutex
	handled := map[int]int{}
	byWorker := map[string]int{}
	for w := range 10 {
		cfg := testConfig(map[string]runtime.QueueConfig{"email": {MaxWorkers: 2}})
		cfg.ID = fmt.Sprintf("worker-%d", w)
		cfg.FetchBatch = 3
		// What this test checks is that competing claims never hand one job to two
		// workers. A lease that expires under a loaded machine (ten workers starting
		// beside the package's other tests took seconds) would hand the job out again,
		// as it should, and fail the test for the wrong reason.
		cfg.LeaseDuration = time.Minute
		worker := runtime.NewWorker(pool, cfg)
		err := runtime.Handle(worker, jt, func(ctx context.Context, job *runtime.Job, p emailPayload) error {
			time.Sleep(time.Millisecond) // let the others compete
			mu.Lock()
			handled[p.N]++
			byWorker[cfg.ID]++
			mu.Unlock()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		startWorker(t, worker)
	}
	waitFor(t, "100 completed jobs", 30*time.Second, func() bool {
		return countRows(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE state = 'completed'`) == jobs
	})
	mu.Lock()
	defer mu.Unlock()
	for i := range jobs {
		if handled[i] != 1 {
			t.Errorf("job %d handled %d times, want exactly once", i, handled[i])
		}
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs`); n != 0 {
		t.Errorf("%d jobs still unfinished", n)
	}
	if len(byWorker) < 2 {
		t.Errorf("only %d of 10 workers got jobs: %v", len(byWorker), byWorker)
	}
}

// TestEnqueueRollsBackWithTheTransaction: a job enqueued in a transaction that rolls
// back does not exist, nor does the business row written beside it.
func TestEnqueueRollsBackWithTheTransaction(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := emailType(t, nil)
	if _, err := pool.Exec(ctx, `CREATE TABLE projects (id bigint PRIMARY KEY, name text)`); err != nil {
		t.Fatal(err)
	}
	errLater := errors.New("something failed after the enqueue")
	var jobID int64
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO projects VALUES (1, 'apollo')`); err != nil {
			return err
		}
		e, err := runtime.Enqueue(ctx, tx, jt, emailPayload{N: 1, Email: "ada@example.com"})
		if err != nil {
			return err
		}
		jobID = e.ID
		return errLater
	})
	if !errors.Is(err, errLater) {
		t.Fatalf("transaction: %v", err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM projects`); n != 0 {
		t.Errorf("%d projects after rollback", n)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs`); n != 0 {
		t.Errorf("%d jobs after rollback", n)
	}
	if _, err := runtime.GetJob(ctx, pool, jobID); !errors.Is(err, runtime.ErrJobNotFound) {
		t.Errorf("GetJob(%d) after rollback: %v, want ErrJobNotFound", jobID, err)
	}

	// The same transaction committed keeps both.
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO projects VALUES (1, 'apollo')`); err != nil {
			return err
		}
		_, err := runtime.Enqueue(ctx, tx, jt, emailPayload{N: 1, Email: "ada@example.com"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs`); n != 1 {
		t.Errorf("%d jobs after commit, want 1", n)
	}
}

// TestInvalidPayloadInsertsNothing: enqueue validates against the write version's
// schema and names the offending field.
func TestInvalidPayloadInsertsNothing(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	jt := emailType(t, nil)
	_, err := runtime.Enqueue(context.Background(), pool, jt, emailPayload{N: -1, Email: "x"})
	var pe *runtime.PayloadError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a *runtime.PayloadError", err)
	}
	fields := map[string]bool{}
	for _, p := range pe.Problems {
		fields[p.Field] = true
	}
	if !fields["/n"] || !fields["/email"] {
		t.Errorf("problems %+v, want /n and /email", pe.Problems)
	}
	if !strings.Contains(err.Error(), "send_email") || !strings.Contains(err.Error(), "/email") {
		t.Errorf("message %q does not name the kind and field", err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs`); n != 0 {
		t.Errorf("%d jobs inserted for an invalid payload", n)
	}
}

// TestRetriesThenFails: a handler that keeps failing is retried until max attempts and
// then kept as failed, with the error of every attempt.
func TestRetriesThenFails(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := emailType(t, nil)
	e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 7, Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	w := runtime.NewWorker(pool, testConfig(nil))
	var calls sync.Map
	if err := runtime.Handle(w, jt, func(ctx context.Context, job *runtime.Job, p emailPayload) error {
		calls.Store(job.Attempt, true)
		return fmt.Errorf("smtp down (attempt %d)", job.Attempt)
	}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	var info *runtime.JobInfo
	waitFor(t, "the job to fail", 20*time.Second, func() bool {
		info, err = runtime.GetJob(ctx, pool, e.ID)
		return err == nil && info.State == runtime.StateFailed
	})
	if info.Attempt != 3 || len(info.Errors) != 3 {
		t.Fatalf("attempt %d with %d errors, want 3 and 3: %+v", info.Attempt, len(info.Errors), info.Errors)
	}
	for i, e := range info.Errors {
		if e.Attempt != i+1 || !strings.Contains(e.Error, fmt.Sprintf("attempt %d", i+1)) || e.Worker != w.ID() {
			t.Errorf("error %d = %+v", i, e)
		}
	}
	if info.FinishedAt == nil {
		t.Error("failed job has no finished_at")
	}
}

// TestWorkerRefusesAnUnmigratedDatabase: starting without the tables says what to do.
func TestWorkerRefusesAnUnmigratedDatabase(t *testing.T) {
	t.Parallel()
	pool := pgtestSchemaWithoutMigrations(t)
	jt := emailType(t, nil)
	w := runtime.NewWorker(pool, testConfig(nil))
	if err := runtime.Handle(w, jt, func(context.Context, *runtime.Job, emailPayload) error { return nil }); err != nil {
		t.Fatal(err)
	}
	err := w.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "jobc migrate up") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Run on an unmigrated database: %v; want one line that says to run jobc migrate up", err)
	}
	_, err = runtime.Enqueue(context.Background(), pool, jt, emailPayload{N: 1, Email: "ada@example.com"})
	if err == nil || !strings.Contains(err.Error(), "jobc migrate up") {
		t.Fatalf("Enqueue on an unmigrated database: %v; want a hint to run jobc migrate up", err)
	}
}
