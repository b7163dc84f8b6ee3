package relay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// PrunerConfig tunes a Pruner.
type PrunerConfig struct {
	// Retention is how long a published event is kept; required.
	Retention time.Duration
	// BatchSize is the most rows one statement deletes; default 1000.
	BatchSize int
	// StatementTimeout bounds each statement; default 5s.
	StatementTimeout time.Duration
}

// Pruner deletes published events older than a retention. A Relay with
// Config.Retention runs one; RunOnce can also be called from a job or a cron.
type Pruner struct {
	cfg PrunerConfig
	q   *db.Queries
	now func() time.Time
}

// NewPruner returns a pruner of the outbox in dbtx.
func NewPruner(dbtx runtime.DBTX, cfg PrunerConfig) *Pruner {
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 1000
	}
	if cfg.StatementTimeout <= 0 {
		cfg.StatementTimeout = 5 * time.Second
	}
	return &Pruner{cfg: cfg, q: db.New(dbtx), now: time.Now}
}

// RunOnce deletes every event published more than Retention ago, a batch per
// statement, and returns how many it deleted.
func (p *Pruner) RunOnce(ctx context.Context) (int64, error) {
	if p.cfg.Retention <= 0 {
		return 0, errors.New("relay: pruner: Retention must be positive")
	}
	before := p.now().Add(-p.cfg.Retention)
	var total int64
	for {
		sctx, cancel := context.WithTimeout(ctx, p.cfg.StatementTimeout)
		n, err := p.q.PruneEvents(sctx, db.PruneEventsParams{Before: before, Max: int32(p.cfg.BatchSize)})
		cancel()
		if err != nil {
			return total, fmt.Errorf("relay: prune events published before %s: %w", before.Format(time.RFC3339), err)
		}
		total += n
		if n < int64(p.cfg.BatchSize) {
			return total, nil
		}
	}
}
