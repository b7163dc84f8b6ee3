package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/runtime"
)

// TestTransactionalRollbackRetries: in transactional mode the handler's writes and the
// completion commit together; a failed attempt rolls its writes back and is retried.
func TestTransactionalRollbackRetries(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `CREATE TABLE credits (job_id bigint, attempt int)`); err != nil {
		t.Fatal(err)
	}
	jt := emailType(t, func(jt *runtime.JobType) { jt.Transactional = true })
	e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	w := runtime.NewWorker(pool, testConfig(nil))
	if err := runtime.HandleTx(w, jt, func(ctx context.Context, tx pgx.Tx, job *runtime.Job, _ emailPayload) error {
		if _, err := tx.Exec(ctx, `INSERT INTO credits VALUES ($1, $2)`, job.ID, job.Attempt); err != nil {
			return err
		}
		if job.Attempt == 1 {
			return errors.New("downstream check failed after the write")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	waitFor(t, "the job to complete", 15*time.Second, func() bool {
		info, err := runtime.GetJob(ctx, pool, e.ID)
		return err == nil && info.State == runtime.StateCompleted
	})
	var n, attempt int
	if err := pool.QueryRow(ctx, `SELECT count(*), max(attempt) FROM credits`).Scan(&n, &attempt); err != nil {
		t.Fatal(err)
	}
	if n != 1 || attempt != 2 {
		t.Errorf("%d credits (last attempt %d); want exactly the second attempt's one", n, attempt)
	}
}

// TestIdempotencyKeyOnRetry: a handler that records its side effect with Job.Once in
// the same transaction skips it when the job is retried after a later failure.
func TestIdempotencyKeyOnRetry(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `CREATE TABLE charges (job_id bigint)`); err != nil {
		t.Fatal(err)
	}
	jt := emailType(t, nil)
	e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	w := runtime.NewWorker(pool, testConfig(nil))
	firsts := make(chan bool, 3)
	if err := runtime.Handle(w, jt, func(ctx context.Context, job *runtime.Job, _ emailPayload) error {
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			first, err := job.Once(ctx, tx, "charge")
			if err != nil {
				return err
			}
			firsts <- first
			if !first {
				return nil
			}
			_, err = tx.Exec(ctx, `INSERT INTO charges VALUES ($1)`, job.ID)
			return err
		})
		if err != nil {
			return err
		}
		if job.Attempt == 1 {
			return errors.New("sending the receipt failed after the charge")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	waitFor(t, "the job to complete", 15*time.Second, func() bool {
		info, err := runtime.GetJob(ctx, pool, e.ID)
		return err == nil && info.State == runtime.StateCompleted
	})
	if a, b := <-firsts, <-firsts; !a || b {
		t.Errorf("Once returned %v then %v, want true then false", a, b)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM charges`); n != 1 {
		t.Errorf("%d charges, want 1", n)
	}
}
