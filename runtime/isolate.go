package runtime

import (
	"context"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
	"github.com/jobc-dev/jobc/runtime/internal/poison"
)

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
		case dberr.RowFault(err):
			poison.Job(ctx, w.log, qs, id, nil, 0, "claiming queue "+q.name, err)
		default:
			return got, err
		}
	}
	return got, nil
}
