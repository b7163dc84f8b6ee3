package maintenance

import (
	"context"
	"fmt"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// Retention is how long the pruner keeps each finished state and handlers' idempotency
// keys; a negative duration keeps them forever. It has the fields of runtime.Retention,
// which converts to it.
type Retention struct {
	Completed       time.Duration
	Failed          time.Duration
	Cancelled       time.Duration
	IdempotencyKeys time.Duration
}

// PrunerConfig tunes the pruner.
type PrunerConfig struct {
	Retention Retention        // how long each finished state is kept
	BatchSize int              // rows per statement; default Batch
	Now       func() time.Time // the clock retention is measured on; default time.Now
	// Every is how often the pruner runs (Config.PruneInterval), the shortest
	// partition of history it makes; default a minute.
	Every time.Duration
}

// Pruner retires finished jobs older than their state's retention, with the unique
// keys they still held, a partition at a time, and prepares the partitions ahead that
// new history goes to; it deletes ended workflows as old, and handlers' old
// idempotency keys.
type Pruner struct {
	cfg PrunerConfig
	q   *db.Queries
}

// PrunerResult is what one run of the pruner did.
type PrunerResult struct {
	// Finished jobs deleted from the states' DEFAULT partitions (the rows that
	// found no partition of their time), by state.
	Completed, Failed, Cancelled int64
	// Partitions of history dropped whole, added ahead, and past retention but left
	// for a later run (their drop waited too long for its lock).
	Dropped, Added, Deferred int64
	IdempotencyKeys          int64
	Workflows                int64 // ended workflows, with their steps
}

// NewPruner returns a pruner that works through q.
func NewPruner(q *db.Queries, cfg PrunerConfig) *Pruner {
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = Batch
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Every <= 0 {
		cfg.Every = time.Minute
	}
	return &Pruner{cfg: cfg, q: q}
}

// PartitionInterval is the span of finish times one partition of a state's history
// holds when the state is kept for keep (negative: for ever) and the pruner runs
// every every: a quarter of the retention, so a job is kept at least its retention
// and at most a quarter more, and about five partitions hold a state; at least the
// pruner's interval (a partition per run at most) and a second, at most a day.
func PartitionInterval(keep, every time.Duration) time.Duration {
	if keep < 0 {
		return 24 * time.Hour
	}
	return min(max(keep/4, every, time.Second), 24*time.Hour).Truncate(time.Second)
}

// RunOnce retires everything past its retention, a partition or a batch of rows per
// statement, and prepares partitions for the next two intervals of each state.
func (p *Pruner) RunOnce(ctx context.Context) (PrunerResult, error) {
	var res PrunerResult
	r := p.cfg.Retention
	now := p.cfg.Now()
	for _, s := range []struct {
		state db.JobcState
		keep  time.Duration
		n     *int64
	}{
		{db.JobcStateCompleted, r.Completed, &res.Completed},
		{db.JobcStateFailed, r.Failed, &res.Failed},
		{db.JobcStateCancelled, r.Cancelled, &res.Cancelled},
	} {
		interval := PartitionInterval(s.keep, p.cfg.Every)
		added, err := p.q.PrepareHistory(ctx, db.PrepareHistoryParams{
			State: s.state, IntervalSeconds: interval.Seconds(), AheadSeconds: 2 * interval.Seconds()})
		if err != nil {
			return res, fmt.Errorf("prepare %s history's partitions: %w", s.state, err)
		}
		res.Added += int64(added)
		if s.keep < 0 {
			continue // kept forever
		}
		for {
			got, err := p.q.RetireHistory(ctx, db.RetireHistoryParams{State: s.state, Before: now.Add(-s.keep), Max: int32(p.cfg.BatchSize)})
			if err != nil {
				return res, fmt.Errorf("retire %s jobs: %w", s.state, err)
			}
			res.Dropped += int64(got.Dropped)
			res.Deferred += int64(got.Deferred)
			*s.n += got.Deleted
			if got.Deleted < int64(p.cfg.BatchSize) {
				break
			}
		}
	}
	// A workflow is kept as long as jobs that end in its state are.
	for _, s := range []struct {
		state db.JobcWorkflowState
		keep  time.Duration
	}{
		{db.JobcWorkflowStateCompleted, r.Completed},
		{db.JobcWorkflowStateFailed, r.Failed},
		{db.JobcWorkflowStateCancelled, r.Cancelled},
	} {
		if s.keep < 0 {
			continue
		}
		for {
			n, err := p.q.PruneWorkflows(ctx, db.PruneWorkflowsParams{State: s.state, Before: now.Add(-s.keep), Max: int32(p.cfg.BatchSize)})
			if err != nil {
				return res, fmt.Errorf("prune %s workflows: %w", s.state, err)
			}
			res.Workflows += n
			if n < int64(p.cfg.BatchSize) {
				break
			}
		}
	}
	if r.IdempotencyKeys >= 0 {
		for {
			n, err := p.q.PruneIdempotencyKeys(ctx, db.PruneIdempotencyKeysParams{Before: now.Add(-r.IdempotencyKeys), Max: int32(p.cfg.BatchSize)})
			if err != nil {
				return res, fmt.Errorf("prune idempotency keys: %w", err)
			}
			res.IdempotencyKeys += n
			if n < int64(p.cfg.BatchSize) {
				break
			}
		}
	}
	return res, nil
}
