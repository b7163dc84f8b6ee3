package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// History is how a finished state's history is kept (see Retention): the dated
// partitions the workers' pruners add ahead and drop past retention, and the rows of
// the state's DEFAULT partition, which holds what no partition covered.
type History struct {
	State State
	// Partitions is how many dated partitions there are; From is the start of the
	// oldest and Until the end of the newest (zero when there is none). A finished job
	// goes to the partition its finish time falls in, so Until in the past means that
	// finishes go to the DEFAULT partition: no worker's pruner has run for two
	// partitions' time.
	Partitions  int
	From, Until time.Time
	// DefaultRows is about how many rows the DEFAULT partition holds: PostgreSQL's
	// estimate as of its last ANALYZE (0 before the first). The pruner deletes them
	// row by row once they pass retention.
	DefaultRows int64
}

// Covers reports whether a dated partition takes the jobs that finish at t.
func (h History) Covers(t time.Time) bool {
	return h.Partitions > 0 && !t.Before(h.From) && t.Before(h.Until)
}

// ListHistory returns how history is kept for each finished state (completed, failed,
// cancelled), from the catalog only: it reads no row of history.
func ListHistory(ctx context.Context, dbtx DBTX) ([]History, error) {
	rows, err := db.New(dbtx).HistoryPartitions(ctx)
	if err != nil {
		return nil, fmt.Errorf("jobc: history partitions: %w", dberr.Describe(err))
	}
	out := make([]History, len(rows))
	for i, r := range rows {
		out[i] = History{State: State(r.State), Partitions: int(r.Partitions), DefaultRows: r.DefaultRows}
		if r.Partitions > 0 {
			out[i].From, out[i].Until = r.Oldest, r.Newest
		}
	}
	return out, nil
}
