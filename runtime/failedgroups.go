package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// FailedGroup is a set of failed jobs of one kind whose last error has the same
// message: usually one bug, one bad deploy or one broken dependency.
type FailedGroup struct {
	Kind      string
	Message   string // the last error's message; "" when the job recorded none
	Class     string // the error class of the last error, "" for none
	Jobs      int64
	FirstSeen time.Time // when the first of them failed
	LastSeen  time.Time // when the last of them failed
	SampleID  int64     // the newest job of the group
}

// ListFailedGroups returns failed jobs grouped by kind and last error message, the largest
// groups first, at most limit groups (default 100, at most 10,000).
func ListFailedGroups(ctx context.Context, dbtx DBTX, limit int) ([]FailedGroup, error) {
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, maxListLimit)
	rows, err := db.New(dbtx).FailedGroups(ctx, int32(limit))
	if err != nil {
		return nil, fmt.Errorf("jobc: group failed jobs: %w", dberr.Describe(err))
	}
	out := make([]FailedGroup, len(rows))
	for i, r := range rows {
		out[i] = FailedGroup{Kind: r.Kind, Message: deref(r.Message), Class: r.Class, Jobs: r.Jobs,
			FirstSeen: r.FirstSeen, LastSeen: r.LastSeen, SampleID: r.SampleID}
	}
	return out, nil
}

// ListFailedGroupJobIDs returns the ids of the failed jobs of kind whose last error message is
// message, above after, in id order, at most limit (default 1,000, at most 10,000). Pass
// the last id returned as after to read the next batch; an empty result is the end.
// Acting on a group is RetryJobs or DeleteJobs with JobSelection.IDs set to a batch:
// those re-check every job's state, so a job retried meanwhile is left alone.
func ListFailedGroupJobIDs(ctx context.Context, dbtx DBTX, kind, message string, after int64, limit int) ([]int64, error) {
	if kind == "" {
		return nil, fmt.Errorf("jobc: failed group ids: kind is empty")
	}
	if limit <= 0 {
		limit = 1000
	}
	limit = min(limit, maxListLimit)
	ids, err := db.New(dbtx).FailedGroupIDs(ctx, db.FailedGroupIDsParams{Kind: kind, Message: message, After: after, Max: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("jobc: failed group ids of kind %s: %w", kind, dberr.Describe(err))
	}
	return ids, nil
}

// deref is the string p points to, "" for nil. (A generated column is nullable to sqlc,
// though 0004's never are.)
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
