package maintenance

import (
	"context"
	"fmt"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// AgerConfig tunes starvation protection.
type AgerConfig struct {
	Queues []string      // the queues this worker serves
	Bound  time.Duration // how long an available job may wait behind more urgent ones
}

// StarvationAger moves available jobs that waited longer than the bound to priority 0,
// ahead of every declared priority, so that a stream of urgent jobs cannot hold a
// low-priority job back indefinitely.
type StarvationAger struct {
	cfg AgerConfig
	q   *db.Queries
}

// AgerResult is what one run of the ager did.
type AgerResult struct {
	Aged int64 // jobs moved to priority 0
}

// NewStarvationAger returns an ager that works through q.
func NewStarvationAger(q *db.Queries, cfg AgerConfig) *StarvationAger {
	return &StarvationAger{cfg: cfg, q: q}
}

// RunOnce ages at most 1,000 jobs per queue, kind, payload version and priority
// (AgeWaitingJobs); whatever is left waits for the next run, which comes sooner than
// the bound.
func (a *StarvationAger) RunOnce(ctx context.Context) (AgerResult, error) {
	n, err := a.q.AgeWaitingJobs(ctx, db.AgeWaitingJobsParams{Queues: a.cfg.Queues, BoundSeconds: a.cfg.Bound.Seconds()})
	if err != nil {
		return AgerResult{}, fmt.Errorf("age waiting jobs: %w", err)
	}
	return AgerResult{Aged: n}, nil
}
