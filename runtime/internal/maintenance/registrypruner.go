package maintenance

import (
	"context"
	"fmt"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// RegistryPruner forgets workers that stopped heartbeating (thirty missed heartbeats,
// ten of their own leases) and the sleeper rows of workers that left the registry, so
// that enqueues stop notifying the dead, and the state rows of flow keys that no job
// needs any more (PruneFlowKeys), up to flowKeysPerRun a run.
type RegistryPruner struct {
	q *db.Queries
}

// RegistryPrunerResult is what one run of the registry pruner deleted.
type RegistryPrunerResult struct {
	Workers  int64
	Sleepers int64
	FlowKeys int64
}

// flowKeysPerRun bounds one run's delete of flow key rows.
const flowKeysPerRun = 1000

// NewRegistryPruner returns a registry pruner that works through q.
func NewRegistryPruner(q *db.Queries) *RegistryPruner {
	return &RegistryPruner{q: q}
}

// RunOnce prunes the worker registry, then the sleepers it no longer knows, then
// flow keys.
func (p *RegistryPruner) RunOnce(ctx context.Context) (RegistryPrunerResult, error) {
	var res RegistryPrunerResult
	var err error
	if res.Workers, err = p.q.PruneWorkers(ctx); err != nil {
		return res, fmt.Errorf("prune the worker registry: %w", err)
	}
	if res.Sleepers, err = p.q.PruneSleepers(ctx); err != nil {
		return res, fmt.Errorf("prune sleeping workers: %w", err)
	}
	if res.FlowKeys, err = p.q.PruneFlowKeys(ctx, flowKeysPerRun); err != nil {
		return res, fmt.Errorf("prune flow keys: %w", err)
	}
	return res, nil
}
