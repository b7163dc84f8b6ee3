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
}

// Pruner deletes finished jobs older than their state's retention, with the unique
// keys they still held, ended workflows as old, and handlers' old idempotency keys.
type Pruner struct {
	cfg PrunerConfig
	q   *db.Queries
}

// PrunerResult is what one run of the pruner deleted.
type PrunerResult struct {
	Completed, Failed, Cancelled int64 // finished jobs, by state
	IdempotencyKeys              int64
	Workflows                    int64 // ended workflows, with their steps
}

// NewPruner returns a pruner that works through q.
func NewPruner(q *db.Queries, cfg PrunerConfig) *Pruner {
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = Batch
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Pruner{cfg: cfg, q: q}
}

// RunOnce deletes everything past its retention, a batch per statement.
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
		if s.keep < 0 {
			continue // kept forever
		}
		for {
			n, err := p.q.PruneFinished(ctx, db.PruneFinishedParams{State: s.state, Before: now.Add(-s.keep), Max: int32(p.cfg.BatchSize)})
			if err != nil {
				return res, fmt.Errorf("prune %s jobs: %w", s.state, err)
			}
			*s.n += n
			if n < int64(p.cfg.BatchSize) {
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
