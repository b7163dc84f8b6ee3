package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// ListJobsByError returns the newest jobs whose last recorded error message contains
// text (ignoring case), narrowed by f's Kinds, Queues and States, a page at a time like
// ListJobs (f.After, f.Limit: default 100, at most 10,000). Other fields of f are
// ignored. No index serves the text: a rare text reads much of the history, so give it
// a bounded context.
func ListJobsByError(ctx context.Context, dbtx DBTX, text string, f JobFilter) (JobPage, error) {
	p, limit, err := f.errorSearchParams(text)
	if err != nil {
		return JobPage{}, err
	}
	rows, err := db.New(dbtx).ListJobsByError(ctx, p)
	if err != nil {
		return JobPage{}, fmt.Errorf("jobc: list jobs by error: %w", dberr.Describe(err))
	}
	var page JobPage
	for i, r := range rows {
		if i == limit {
			page.More = true
			break
		}
		info, err := jobInfo(db.JobcJobsAll(r))
		if err != nil {
			return JobPage{}, err
		}
		page.Jobs = append(page.Jobs, info)
	}
	return page, nil
}

// escapeLike makes text match itself literally in ILIKE (whose escape is \).
func escapeLike(text string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(text)
}

// errorSearchParams checks a search for text among the last errors of the jobs f
// selects (its Kinds, Queues and States) and returns the statement's parameters, which
// ask for one job more than the page holds, and the page's size.
func (f JobFilter) errorSearchParams(text string) (db.ListJobsByErrorParams, int, error) {
	if strings.TrimSpace(text) == "" {
		return db.ListJobsByErrorParams{}, 0, errors.New("jobc: list jobs by error: the error text is empty")
	}
	limit := f.Limit
	if limit <= 0 {
		limit = defaultListLimit
	}
	limit = min(limit, maxListLimit)
	p := db.ListJobsByErrorParams{Pattern: "%" + escapeLike(text) + "%", Kinds: f.Kinds, Queues: f.Queues,
		States: make([]string, len(f.States)), After: f.After, Max: int32(limit + 1)}
	if p.Kinds == nil {
		p.Kinds = []string{}
	}
	if p.Queues == nil {
		p.Queues = []string{}
	}
	for i, s := range f.States {
		p.States[i] = string(s)
	}
	return p, limit, nil
}
