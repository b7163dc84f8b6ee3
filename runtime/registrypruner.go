package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// registryPrunerConfig tunes the registry pruner.
type registryPrunerConfig struct {
	Interval time.Duration // how often it runs
}

// registryPruner forgets workers that stopped heartbeating (thirty missed heartbeats,
// ten of their own leases) and the sleeper rows of workers that left the registry, so
// that enqueues stop notifying the dead.
type registryPruner struct {
	cfg registryPrunerConfig
	q   *db.Queries
}

// registryPrunerResult is what one run of the registry pruner deleted.
type registryPrunerResult struct {
	Workers  int64
	Sleepers int64
}

func newRegistryPruner(q *db.Queries, cfg registryPrunerConfig) *registryPruner {
	return &registryPruner{cfg: cfg, q: q}
}

func (p *registryPruner) service() service {
	return service{"registry pruner", p.cfg.Interval, withResult(p.runOnce)}
}

// runOnce prunes the worker registry, then the sleepers it no longer knows.
func (p *registryPruner) runOnce(ctx context.Context) (registryPrunerResult, error) {
	var res registryPrunerResult
	var err error
	if res.Workers, err = p.q.PruneWorkers(ctx); err != nil {
		return res, fmt.Errorf("prune the worker registry: %w", err)
	}
	if res.Sleepers, err = p.q.PruneSleepers(ctx); err != nil {
		return res, fmt.Errorf("prune sleeping workers: %w", err)
	}
	return res, nil
}
