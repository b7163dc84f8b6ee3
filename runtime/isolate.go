package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// A job that makes a statement fail fails alone. The worker's statements work on
// batches (a claim of 100, an outcome batch of 1,000, a rescue); when one fails because
// of what one row holds, retrying the batch fails again, and every other job of the
// batch waits with it, for ever. So on such an error the worker falls back to one
// statement per job, and ends a job whose own statement still fails with PoisonJob:
// failed, with the error as the reason, visible to operators, and the log names it once.
// Errors of the connection, timeouts and conflicts between transactions are not a
// row's fault and are retried as before.

// rowFault reports whether err is an error a row's values can cause, so that running
// the statement again over the same rows fails again: a data exception (class 22: an
// infinite timestamp in arithmetic, an integer out of range), an integrity constraint
// violation (class 23: a duplicate id), or an exception raised by a function or
// trigger (P0001).
func rowFault(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || len(pgErr.Code) != 5 {
		return false
	}
	switch pgErr.Code[:2] {
	case "22", "23":
		return true
	}
	return pgErr.Code == "P0001"
}

// poison ends job id, whose own statement failed with cause while the worker was
// doing what: failed, with the reason (jobc_poison). owner is nil for a job that
// waits, or the worker's id for an attempt it leases. It logs the job once, and
// reports whether the job was ended (false: it was no longer there to take, or ending
// it failed too, which is logged).
func (w *Worker) poison(ctx context.Context, q *db.Queries, id int64, owner *string, attempt int32, what string, cause error) bool {
	reason := fmt.Sprintf("jobc: %s failed on this job alone, so it was failed to let the others proceed: %s", what, cause)
	finished, err := q.PoisonJob(ctx, db.PoisonJobParams{ID: id, Owner: owner, Attempt: attempt, Reason: reason})
	if err != nil {
		w.log.ErrorContext(ctx, "jobc worker: a job makes "+what+" fail, and failing it failed too",
			"job_id", id, "err", describeDBError(cause), "fail_err", describeDBError(err))
		return false
	}
	if finished == 0 {
		return false
	}
	args := []any{"job_id", id, "err", describeDBError(cause)}
	if finished != id {
		args = append(args, "finished_id", finished)
	}
	w.log.ErrorContext(ctx, "jobc worker: a job made "+what+" fail; it is failed alone, with the error, and the others proceed", args...)
	return true
}

// claimAlone claims up to asked jobs of q one statement each, after a claim of the
// batch failed with a row's fault: ClaimCandidates reads the jobs the claim would take
// without computing anything from them, and ClaimJobByID takes each. A job whose claim
// fails with a row's fault is poisoned. It returns the jobs claimed before any other
// error.
func (w *Worker) claimAlone(ctx context.Context, qs *db.Queries, q *queue, base db.ClaimJobsParams, asked int) ([]db.ClaimJobsRow, error) {
	ids, err := qs.ClaimCandidates(ctx, db.ClaimCandidatesParams{
		Queue: q.name, Kinds: q.kinds, Versions: q.versions, Max: int32(asked),
	})
	if err != nil {
		return nil, err
	}
	var got []db.ClaimJobsRow
	for _, id := range ids {
		rows, err := qs.ClaimJobByID(ctx, db.ClaimJobByIDParams{ID: id, Owner: base.Owner, LeaseSeconds: base.LeaseSeconds})
		switch {
		case err == nil:
			for _, r := range rows {
				got = append(got, db.ClaimJobsRow(r))
			}
		case rowFault(err):
			w.poison(ctx, qs, id, nil, 0, "claiming queue "+q.name, err)
		default:
			return got, err
		}
	}
	return got, nil
}
