// Package poison ends a job that makes a statement fail, alone.
//
// A job that makes a statement fail fails alone. The worker's statements work on
// batches (a claim of 100, an outcome batch of 1,000, a rescue); when one fails because
// of what one row holds, retrying the batch fails again, and every other job of the
// batch waits with it, for ever. So on such an error the worker falls back to one
// statement per job, and ends a job whose own statement still fails with Job (PoisonJob):
// failed, with the error as the reason, visible to operators, and the log names it once.
// Errors of the connection, timeouts and conflicts between transactions are not a
// row's fault (dberr.RowFault) and are retried as before.
package poison

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// Job ends job id, whose own statement failed with cause while the worker was doing
// what: failed, with the reason (jobc_poison). owner is nil for a job that waits, or
// the worker's id for an attempt it leases. It logs the job once to log, and
// reports whether the job was ended (false: it was no longer there to take, or ending
// it failed too, which is logged).
func Job(ctx context.Context, log *slog.Logger, q *db.Queries, id int64, owner *string, attempt int32, what string, cause error) bool {
	reason := fmt.Sprintf("jobc: %s failed on this job alone, so it was failed to let the others proceed: %s", what, cause)
	finished, err := q.PoisonJob(ctx, db.PoisonJobParams{ID: id, Owner: owner, Attempt: attempt, Reason: reason})
	if err != nil {
		log.ErrorContext(ctx, "jobc worker: a job makes "+what+" fail, and failing it failed too",
			"job_id", id, "err", dberr.Describe(cause), "fail_err", dberr.Describe(err))
		return false
	}
	if finished == 0 {
		return false
	}
	args := []any{"job_id", id, "err", dberr.Describe(cause)}
	if finished != id {
		args = append(args, "finished_id", finished)
	}
	log.ErrorContext(ctx, "jobc worker: a job made "+what+" fail; it is failed alone, with the error, and the others proceed", args...)
	return true
}
