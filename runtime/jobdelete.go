package runtime

import (
	"context"
	"fmt"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// DeleteJob removes a finished, available or scheduled job and its unique key. A
// running job is refused with ErrJobRunning (cancel it first), an unknown id with
// ErrJobNotFound; nothing changes then.
func DeleteJob(ctx context.Context, dbtx DBTX, id int64) error {
	// A job that moved between the tables while the statement ran (a worker finished
	// it that moment) is deleted again, a few times at most.
	var info *JobInfo
	for range retryConflictAttempts {
		row, err := db.New(dbtx).DeleteSelected(ctx, db.DeleteSelectedParams{IDs: []int64{id}})
		if err != nil {
			return fmt.Errorf("jobc: delete job %d: %w", id, dberr.Describe(err))
		}
		if row.Changed == 1 {
			return nil
		}
		if info, err = GetJob(ctx, dbtx, id); err != nil {
			return fmt.Errorf("jobc: delete job %d: %w", id, err)
		}
		if info.State == StateRunning {
			return fmt.Errorf("jobc: delete job %d: %w", id, ErrJobRunning)
		}
	}
	return fmt.Errorf("jobc: delete job %d: it kept changing while being deleted, and is %s now", id, info.State)
}

// DeleteJobs removes every matching finished, available or scheduled job and its
// unique key, in one statement, newest first up to sel.Limit, and returns how many it
// removed. Matching running jobs are skipped and counted in Skipped, and so are the
// unfinished jobs of workflows' steps (cancel those: CancelJob). A selection with no
// filter is refused with ErrNoFilter.
func DeleteJobs(ctx context.Context, dbtx DBTX, sel JobSelection) (BulkResult, error) {
	p, limit, err := sel.mutationParams()
	if err != nil {
		return BulkResult{}, fmt.Errorf("jobc: delete jobs: %w", err)
	}
	row, err := db.New(dbtx).DeleteSelected(ctx, db.DeleteSelectedParams(withMax(p, limit)))
	if err != nil {
		return BulkResult{}, fmt.Errorf("jobc: delete jobs: %w", dberr.Describe(err))
	}
	return BulkResult{Changed: int(row.Changed), Skipped: int(row.Matched - row.Changed), IDs: row.IDs}, nil
}

// CountDeletableJobs returns how many jobs DeleteJobs would remove now (its dry run).
func CountDeletableJobs(ctx context.Context, dbtx DBTX, sel JobSelection) (int, error) {
	p, limit, err := sel.mutationParams()
	if err != nil {
		return 0, fmt.Errorf("jobc: count deletable jobs: %w", err)
	}
	n, err := db.New(dbtx).CountDeletable(ctx, db.CountDeletableParams(withMax(p, limit)))
	if err != nil {
		return 0, fmt.Errorf("jobc: count deletable jobs: %w", dberr.Describe(err))
	}
	return int(n), nil
}
