package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// retryConflictAttempts bounds how often a retry runs again after a concurrent enqueue
// took a unique key between its snapshot and its insert; the next run sees the holder
// and skips the job.
const retryConflictAttempts = 3

// RetryJob makes a failed, cancelled or scheduled job available now. A failed or
// cancelled job keeps its error history and gains an entry of class "jobc_retried"
// saying when and how it had ended (jobc_retry_selected); if its attempts are used up, it gets
// one more (max_attempts = attempt + 1). Its
// unique key is taken again; when another job holds that key, it fails with an error
// wrapping ErrUniqueConflict that names the holder's id. A running, available or
// completed job is refused with ErrJobRunning or ErrNothingToRetry, naming its state;
// an unknown id with ErrJobNotFound. Nothing changes on an error.
func RetryJob(ctx context.Context, dbtx DBTX, id int64) (*JobInfo, error) {
	// A job that moved between the statement's snapshot and GetJob (a worker finished
	// it that moment) is retried again, a few times at most.
	var info *JobInfo
	for range retryConflictAttempts {
		res, err := retrySelected(ctx, dbtx, selectionParams{IDs: []int64{id}}, nil)
		if err != nil {
			return nil, fmt.Errorf("jobc: retry job %d: %w", id, err)
		}
		if info, err = GetJob(ctx, dbtx, id); err != nil {
			return nil, fmt.Errorf("jobc: retry job %d: %w", id, err)
		}
		if res.Changed == 1 {
			return info, nil
		}
		switch info.State {
		case StateRunning:
			return nil, fmt.Errorf("jobc: retry job %d: %w", id, ErrJobRunning)
		case StateAvailable, StateCompleted:
			return nil, fmt.Errorf("jobc: retry job %d: %w: it is %s", id, ErrNothingToRetry, info.State)
		case StateFailed, StateCancelled:
			holder, err := uniqueHolder(ctx, dbtx, info)
			if err != nil {
				return nil, fmt.Errorf("jobc: retry job %d: %w", id, err)
			}
			if holder != 0 {
				return nil, fmt.Errorf("jobc: retry job %d: %w: job %d holds key %s of kind %s", id, ErrUniqueConflict, holder, info.UniqueKey, info.Kind)
			}
		}
	}
	return nil, fmt.Errorf("jobc: retry job %d: it kept changing while being retried, and is %s now", id, info.State)
}

// uniqueHolder returns the id of the job other than info that holds info's unique
// key, or 0 when none does.
func uniqueHolder(ctx context.Context, dbtx DBTX, info *JobInfo) (int64, error) {
	if info.UniqueKey == "" {
		return 0, nil
	}
	ids, err := db.New(dbtx).UniqueKeyHolder(ctx, db.UniqueKeyHolderParams{Kind: info.Kind, UniqueKey: info.UniqueKey})
	if err != nil {
		return 0, fmt.Errorf("read the unique key's holder: %w", dberr.Describe(err))
	}
	for _, h := range ids {
		if h != info.ID {
			return h, nil
		}
	}
	return 0, nil
}

// RetryJobs does what RetryJob does for every matching job that is failed, cancelled
// or scheduled (other states in the selection are ignored), in one statement, newest
// first up to sel.Limit, and returns how many changed. A job whose unique key another
// job holds is skipped and counted in Skipped, as are matched jobs in other states.
// A selection with no filter is refused with ErrNoFilter.
func RetryJobs(ctx context.Context, dbtx DBTX, sel JobSelection) (BulkResult, error) {
	p, limit, err := sel.mutationParams()
	if err != nil {
		return BulkResult{}, fmt.Errorf("jobc: retry jobs: %w", err)
	}
	res, err := retrySelected(ctx, dbtx, p, limit)
	if err != nil && dberr.RowFault(err) {
		// One job makes the statement fail: retry the selected jobs one by one.
		res, err = retryAlone(ctx, dbtx, sel, err)
	}
	if err != nil {
		return BulkResult{}, fmt.Errorf("jobc: retry jobs: %w", err)
	}
	return res, nil
}

// retryAlone retries the jobs sel selects one statement each, after the statement for
// all of them failed with batchErr, a row's fault (dberr.RowFault): a job whose own retry
// fails too is left as it is and listed in Refused with the error, and the others are
// retried. The ids come from ListJobs, a page at a time, newest first, as
// RetrySelected takes them.
func retryAlone(ctx context.Context, dbtx DBTX, sel JobSelection, batchErr error) (BulkResult, error) {
	var res BulkResult
	f := JobFilter{JobSelection: sel}
	f.Limit = maxListLimit
	for budget := sel.Limit; ; {
		page, err := ListJobs(ctx, dbtx, f)
		if err != nil {
			return res, fmt.Errorf("list the jobs to retry one by one after %w: %w", dberr.Describe(batchErr), err)
		}
		for _, j := range page.Jobs {
			if sel.Limit > 0 && budget == 0 {
				return res, nil
			}
			switch j.State {
			case StateFailed, StateCancelled, StateScheduled:
			default:
				res.Skipped++
				continue
			}
			one, err := retrySelected(ctx, dbtx, selectionParams{IDs: []int64{j.ID}}, nil)
			switch {
			case err == nil:
				res.Changed += one.Changed
				res.Skipped += one.Skipped
				if len(res.IDs) < 1000 {
					res.IDs = append(res.IDs, one.IDs...)
				}
				budget -= one.Changed
			case dberr.RowFault(err):
				res.Skipped++
				res.Refused = append(res.Refused, Refusal{ID: j.ID, Reason: err.Error()})
			default:
				return res, err
			}
		}
		if !page.More || len(page.Jobs) == 0 {
			return res, nil
		}
		f.After = page.Jobs[len(page.Jobs)-1].ID
	}
}

// retrySelected runs RetrySelected, again if a concurrent insert took a unique key it
// meant to retake (see the statement). A run that fails changes nothing: in a
// transaction of the caller's, each run is a savepoint of its own.
func retrySelected(ctx context.Context, dbtx DBTX, p selectionParams, limit *int64) (BulkResult, error) {
	args := db.RetrySelectedParams(withMax(p, limit))
	for attempt := 1; ; attempt++ {
		row, err := inSavepoint(ctx, dbtx, func(q *db.Queries) (db.RetrySelectedRow, error) {
			return q.RetrySelected(ctx, args)
		})
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" && attempt < retryConflictAttempts {
			continue
		}
		if err != nil {
			return BulkResult{}, dberr.Describe(err)
		}
		return BulkResult{Changed: int(row.Changed), Skipped: int(row.Matched - row.Changed), IDs: row.IDs}, nil
	}
}

// inSavepoint runs f in a transaction of its own, or in a savepoint of dbtx's
// transaction, when dbtx can begin one; otherwise it runs f on dbtx directly.
func inSavepoint[T any](ctx context.Context, dbtx DBTX, f func(q *db.Queries) (T, error)) (T, error) {
	b, ok := dbtx.(Beginner)
	if !ok {
		return f(db.New(dbtx))
	}
	var zero T
	tx, err := b.Begin(ctx)
	if err != nil {
		return zero, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	v, err := f(db.New(tx))
	if err != nil {
		return zero, err
	}
	if err := tx.Commit(ctx); err != nil {
		return zero, err
	}
	return v, nil
}

// CountRetryableJobs returns how many jobs RetryJobs would change now (its dry run).
func CountRetryableJobs(ctx context.Context, dbtx DBTX, sel JobSelection) (int, error) {
	p, limit, err := sel.mutationParams()
	if err != nil {
		return 0, fmt.Errorf("jobc: count retryable jobs: %w", err)
	}
	n, err := db.New(dbtx).CountRetryable(ctx, db.CountRetryableParams(withMax(p, limit)))
	if err != nil {
		return 0, fmt.Errorf("jobc: count retryable jobs: %w", dberr.Describe(err))
	}
	return int(n), nil
}

// selectionWithMax is the parameter shape of the count and bulk statements.
type selectionWithMax struct {
	IDs        []int64
	Kinds      []string
	Queues     []string
	States     []string
	ErrorClass *string
	Since      *time.Time
	Max        *int64
}

func withMax(p selectionParams, limit *int64) selectionWithMax {
	return selectionWithMax{IDs: p.IDs, Kinds: p.Kinds, Queues: p.Queues, States: p.States,
		ErrorClass: p.ErrorClass, Since: p.Since, Max: limit}
}
