package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// prunerConfig tunes the pruner.
type prunerConfig struct {
	Interval  time.Duration // how often it runs
	Retention Retention     // how long each finished state is kept; negative: forever
	BatchSize int           // rows per statement; default maintenanceBatch
}

// pruner deletes finished jobs older than their state's retention, with the unique
// keys they still held, and handlers' old idempotency keys.
type pruner struct {
	cfg prunerConfig
	q   *db.Queries
	now func() time.Time
}

// prunerResult is what one run of the pruner deleted.
type prunerResult struct {
	Completed, Failed, Cancelled int64 // finished jobs, by state
	IdempotencyKeys              int64
}

func newPruner(q *db.Queries, cfg prunerConfig) *pruner {
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = maintenanceBatch
	}
	return &pruner{cfg: cfg, q: q, now: time.Now}
}

func (p *pruner) service() service {
	return service{"pruner", p.cfg.Interval, withResult(p.runOnce)}
}

// runOnce deletes everything past its retention, a batch per statement.
func (p *pruner) runOnce(ctx context.Context) (prunerResult, error) {
	var res prunerResult
	r := p.cfg.Retention
	now := p.now()
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
