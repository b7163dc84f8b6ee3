package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// JobsTable is what jobc_jobs, the table of unfinished jobs, weighs and what keeps it
// small (docs/operations.md, "Vacuum"): every job leaves two dead row versions in it,
// which the workers' vacuumer (Config.VacuumDeadRows) and autovacuum remove.
type JobsTable struct {
	Bytes int64 // the table with its indexes
	// LiveRows and DeadRows are its row versions as PostgreSQL's statistics count
	// them. Dead ones that stay while VACUUMs run are kept by an open snapshot.
	LiveRows, DeadRows int64
	// LastVacuum is when a VACUUM (the workers', or an operator's) last ended on it,
	// LastAutovacuum when autovacuum's did; zero if none did since the statistics
	// began.
	LastVacuum, LastAutovacuum time.Time
}

// ReadJobsTable returns jobc_jobs' size and row versions, from the catalog and the
// statistics only.
func ReadJobsTable(ctx context.Context, dbtx DBTX) (JobsTable, error) {
	r, err := db.New(dbtx).JobsTableStats(ctx)
	if err != nil {
		return JobsTable{}, fmt.Errorf("jobc: jobc_jobs statistics: %w", dberr.Describe(err))
	}
	t := JobsTable{Bytes: r.Bytes, LiveRows: r.LiveRows, DeadRows: r.DeadRows}
	if r.LastVacuum.Unix() > 0 {
		t.LastVacuum = r.LastVacuum
	}
	if r.LastAutovacuum.Unix() > 0 {
		t.LastAutovacuum = r.LastAutovacuum
	}
	return t, nil
}
