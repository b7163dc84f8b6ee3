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

	last time.Time     // when the last run ended
	took time.Duration // and how long it took
}

// ExpensiveAging is how long a run of the ager may take before the next ones wait:
// the ager reads each range of available jobs from its oldest entry, and under a held
// snapshot that is every entry a claim left dead since (159 ms a run on average under a
// 10-minute snapshot at 2,000 jobs/s, bench/README.md). After such a run, the next
// comes AgingShare times its duration after it, not at the next tick: aging is a
// minute's bound, which a few seconds' delay does not break, and the claims do not
// share the server with it every second.
const (
	ExpensiveAging = 5 * time.Millisecond
	AgingShare     = 20
)

// AgerResult is what one run of the ager did.
type AgerResult struct {
	Aged     int64 // jobs moved to priority 0
	Deferred bool  // the run waited for its turn after an expensive one (ExpensiveAging)
}

// NewStarvationAger returns an ager that works through q.
func NewStarvationAger(q *db.Queries, cfg AgerConfig) *StarvationAger {
	return &StarvationAger{cfg: cfg, q: q}
}

// RunOnce ages at most 1,000 jobs per queue, kind, payload version and priority
// (AgeWaitingJobs); whatever is left waits for the next run, which comes sooner than
// the bound.
// A run after an expensive one (ExpensiveAging) waits its turn: until then RunOnce
// returns at once, Deferred.
func (a *StarvationAger) RunOnce(ctx context.Context) (AgerResult, error) {
	if a.took >= ExpensiveAging && time.Since(a.last) < AgingShare*a.took {
		return AgerResult{Deferred: true}, nil
	}
	began := time.Now()
	n, err := a.q.AgeWaitingJobs(ctx, db.AgeWaitingJobsParams{Queues: a.cfg.Queues, BoundSeconds: a.cfg.Bound.Seconds()})
	a.last = time.Now()
	a.took = a.last.Sub(began)
	if err != nil {
		return AgerResult{}, fmt.Errorf("age waiting jobs: %w", err)
	}
	return AgerResult{Aged: n}, nil
}
