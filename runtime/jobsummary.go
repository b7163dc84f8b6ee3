package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// JobSummary is a job as a list shows it: everything of JobInfo but the payload, the
// metadata, the unique key and the errors before the last. Listing summaries reads
// none of those from the database, so a list costs the same whatever the jobs carry.
type JobSummary struct {
	ID             int64
	Kind           string
	Queue          string
	State          State
	Priority       int
	Aged           bool
	PayloadVersion int
	AvailableAt    time.Time
	Attempt        int
	MaxAttempts    int
	// LastError is the last failed attempt, nil when none failed. An error record
	// that does not decode shows as its raw JSON in Error, so one bad row does not
	// fail a list.
	LastError   *AttemptError
	CreatedAt   time.Time
	AttemptedAt *time.Time
	FinishedAt  *time.Time
}

// JobSummaryPage is one page of ListJobSummaries, newest first.
type JobSummaryPage struct {
	Jobs []JobSummary
	More bool // more jobs match beyond this page: ask again with After = the last id
}

// ListJobSummaries is ListJobs without the payloads: the same filter, order and limits.
func ListJobSummaries(ctx context.Context, dbtx DBTX, f JobFilter) (JobSummaryPage, error) {
	args, limit, err := f.listParams()
	if err != nil {
		return JobSummaryPage{}, err
	}
	rows, err := db.New(dbtx).ListJobSummaries(ctx, db.ListJobSummariesParams(args))
	if err != nil {
		return JobSummaryPage{}, fmt.Errorf("jobc: list jobs: %w", dberr.Describe(err))
	}
	page := JobSummaryPage{More: len(rows) > limit}
	rows = rows[:min(len(rows), limit)]
	page.Jobs = make([]JobSummary, len(rows))
	for i, r := range rows {
		page.Jobs[i] = jobSummary(r)
	}
	return page, nil
}

// ListJobSummariesByError is ListJobsByError without the payloads.
func ListJobSummariesByError(ctx context.Context, dbtx DBTX, text string, f JobFilter) (JobSummaryPage, error) {
	p, limit, err := f.errorSearchParams(text)
	if err != nil {
		return JobSummaryPage{}, err
	}
	rows, err := db.New(dbtx).ListJobSummariesByError(ctx, db.ListJobSummariesByErrorParams(p))
	if err != nil {
		return JobSummaryPage{}, fmt.Errorf("jobc: list jobs by error: %w", dberr.Describe(err))
	}
	page := JobSummaryPage{More: len(rows) > limit}
	rows = rows[:min(len(rows), limit)]
	page.Jobs = make([]JobSummary, len(rows))
	for i, r := range rows {
		page.Jobs[i] = jobSummary(db.ListJobSummariesRow(r))
	}
	return page, nil
}

func jobSummary(r db.ListJobSummariesRow) JobSummary {
	s := JobSummary{ID: r.ID, Kind: r.Kind, Queue: r.Queue, State: State(r.State), Priority: int(r.Priority),
		Aged: r.Aged, PayloadVersion: int(r.PayloadVersion), AvailableAt: r.AvailableAt, Attempt: int(r.Attempt),
		MaxAttempts: int(r.MaxAttempts), CreatedAt: r.CreatedAt, AttemptedAt: r.AttemptedAt, FinishedAt: r.FinishedAt}
	if len(r.LastError) > 0 && string(r.LastError) != "null" {
		var e AttemptError
		if err := json.Unmarshal(r.LastError, &e); err != nil {
			e = AttemptError{Error: "unreadable error record: " + string(r.LastError)}
		}
		s.LastError = &e
	}
	return s
}
