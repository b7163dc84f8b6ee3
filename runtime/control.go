package runtime

import (
	"context"
	"fmt"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// CancelJob cancels a job. A job that has not started is cancelled at once (it returns
// StateCancelled). A running job's handler gets its context cancelled — through a
// notification at once, or at the worker's next heartbeat — and the job ends cancelled
// when the handler returns (it returns StateRunning); a handler that ignores its
// context and succeeds completes the job. CancelJob returns ErrJobFinished for a finished
// job and ErrJobNotFound for an unknown id.
func CancelJob(ctx context.Context, dbtx DBTX, id int64) (State, error) {
	q := db.New(dbtx)
	n, err := q.CancelPending(ctx, id)
	if err != nil {
		return "", fmt.Errorf("jobc: cancel job %d: %w", id, dberr.Describe(err))
	}
	if n > 0 {
		return StateCancelled, nil
	}
	if n, err = q.RequestCancel(ctx, id); err != nil {
		return "", fmt.Errorf("jobc: cancel job %d: %w", id, dberr.Describe(err))
	}
	if n > 0 {
		return StateRunning, nil
	}
	info, err := GetJob(ctx, dbtx, id)
	if err != nil {
		return "", err
	}
	if info.State.Finished() {
		return info.State, fmt.Errorf("%w: job %d is %s", ErrJobFinished, id, info.State)
	}
	return info.State, nil // running, cancellation already requested
}

// Once records in tx that the step of this job happened, and reports whether this is
// the first time. Call it in the transaction that performs a side effect in the
// database: on a retry, Once returns false and the handler can skip the step. The key
// is the job's idempotency key and the step name, kept for Retention.IdempotencyKeys.
func (j *Job) Once(ctx context.Context, tx DBTX, step string) (first bool, err error) {
	n, err := db.New(tx).RecordIdempotencyKey(ctx, db.RecordIdempotencyKeyParams{Key: j.IdempotencyKey() + ":" + step, JobID: j.ID})
	if err != nil {
		return false, fmt.Errorf("jobc: record idempotency key of job %d step %q: %w", j.ID, step, dberr.Describe(err))
	}
	return n == 1, nil
}
