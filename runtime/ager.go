package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// agerConfig tunes starvation protection.
type agerConfig struct {
	Interval time.Duration // how often waiting jobs are looked at
	Queues   []string      // the queues this worker serves
	Bound    time.Duration // how long an available job may wait behind more urgent ones
}

// starvationAger moves available jobs that waited longer than the bound to priority 0,
// ahead of every declared priority, so that a stream of urgent jobs cannot hold a
// low-priority job back indefinitely.
type starvationAger struct {
	cfg agerConfig
	q   *db.Queries
}

// agerResult is what one run of the ager did.
type agerResult struct {
	Aged int64 // jobs moved to priority 0
}

func newStarvationAger(q *db.Queries, cfg agerConfig) *starvationAger {
	return &starvationAger{cfg: cfg, q: q}
}

func (a *starvationAger) service() service {
	return service{"starvation ager", a.cfg.Interval, withResult(a.runOnce)}
}

// runOnce ages at most 1,000 jobs per queue, kind, payload version and priority (AgeWaitingJobs); whatever
// is left waits for the next run, which comes sooner than the bound.
func (a *starvationAger) runOnce(ctx context.Context) (agerResult, error) {
	n, err := a.q.AgeWaitingJobs(ctx, db.AgeWaitingJobsParams{Queues: a.cfg.Queues, BoundSeconds: a.cfg.Bound.Seconds()})
	if err != nil {
		return agerResult{}, fmt.Errorf("age waiting jobs: %w", err)
	}
	return agerResult{Aged: n}, nil
}
