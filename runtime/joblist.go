package runtime

import (
	"context"
	"fmt"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// JobFilter selects jobs for ListJobs: a JobSelection (empty: every job) and a page.
type JobFilter struct {
	JobSelection
	// After continues a listing: only jobs with ids below it (the last id of the
	// previous page). 0: from the newest job.
	After int64
}

// JobPage is one page of ListJobs, newest first.
type JobPage struct {
	Jobs []*JobInfo
	More bool // more jobs match beyond this page: ask again with After = the last id
}

// ListJobs page limits.
const (
	defaultListLimit = 100
	maxListLimit     = 10000
)

// ListJobs returns the newest jobs that match f, unfinished and finished, at most
// f.Limit of them (default 100, at most 10,000), and whether more match.
func ListJobs(ctx context.Context, dbtx DBTX, f JobFilter) (JobPage, error) {
	args, limit, err := f.listParams()
	if err != nil {
		return JobPage{}, err
	}
	rows, err := db.New(dbtx).ListJobs(ctx, args)
	if err != nil {
		return JobPage{}, fmt.Errorf("jobc: list jobs: %w", dberr.Describe(err))
	}
	page := JobPage{More: len(rows) > limit}
	rows = rows[:min(len(rows), limit)]
	page.Jobs = make([]*JobInfo, len(rows))
	for i, r := range rows {
		if page.Jobs[i], err = jobInfo(db.JobcJobsAll(r)); err != nil {
			return JobPage{}, fmt.Errorf("jobc: list jobs: %w", err)
		}
	}
	return page, nil
}

// listParams checks f as a page of a listing and returns the statement's parameters,
// which ask for one job more than the page holds (are there more?), and the page's
// size: f.Limit, by default defaultListLimit, at most maxListLimit.
func (f JobFilter) listParams() (db.ListJobsParams, int, error) {
	p, err := f.params()
	if err != nil {
		return db.ListJobsParams{}, 0, fmt.Errorf("jobc: list jobs: %w", err)
	}
	limit := f.Limit
	switch {
	case limit == 0:
		limit = defaultListLimit
	case limit > maxListLimit:
		return db.ListJobsParams{}, 0, fmt.Errorf("jobc: list jobs: limit %d is above the maximum of %d: page with After instead", limit, maxListLimit)
	}
	if f.After < 0 {
		return db.ListJobsParams{}, 0, fmt.Errorf("jobc: list jobs: after %d is negative", f.After)
	}
	args := db.ListJobsParams{IDs: p.IDs, Kinds: p.Kinds, Queues: p.Queues, States: p.States,
		ErrorClass: p.ErrorClass, Since: p.Since, Max: int32(limit + 1)}
	if f.After > 0 {
		args.After = &f.After
	}
	return args, limit, nil
}
