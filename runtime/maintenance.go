package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// service is one maintenance task a worker runs periodically. Each is a short,
// idempotent statement (or a few) guarded by FOR UPDATE SKIP LOCKED or a unique key,
// so every node may run every service at once.
type service struct {
	name     string
	interval time.Duration
	run      func(ctx context.Context) error
}

// runEvery runs s at once and then every interval until ctx is done. A failure is
// logged, and the next tick tries again.
func (w *Worker) runEvery(ctx context.Context, s service) {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		if err := s.run(ctx); err != nil && ctx.Err() == nil {
			w.log.Error("jobc worker: maintenance failed", "service", s.name, "err", describeDBError(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// maintenance returns the services this worker runs.
func (w *Worker) maintenance(queues []*queue) ([]service, error) {
	c := w.cfg
	services := []service{
		{"promoter", c.SchedulerInterval, w.promoteDue},
		{"rescuer", c.RescueInterval, w.rescueExpired},
		{"pruner", c.PruneInterval, w.prune},
	}
	if c.StarvationBound > 0 {
		names := queueNames(queues)
		services = append(services, service{"ager", c.SchedulerInterval, func(ctx context.Context) error {
			_, err := w.q.AgeWaitingJobs(ctx, db.AgeWaitingJobsParams{Queues: names, BoundSeconds: c.StarvationBound.Seconds()})
			return err
		}})
	}
	if c.UpgradePayloads {
		for _, jt := range w.jobTypes() {
			if len(jt.Versions) > 1 {
				services = append(services, w.upgradeService(jt))
			}
		}
	}
	periodic, err := w.periodicServices()
	if err != nil {
		return nil, err
	}
	return append(services, periodic...), nil
}

const maintenanceBatch = 1000

// promoteDue makes due scheduled jobs (delayed jobs and retries) available.
func (w *Worker) promoteDue(ctx context.Context) error {
	for {
		rows, err := w.q.PromoteScheduled(ctx, maintenanceBatch)
		if err != nil {
			return fmt.Errorf("promote scheduled jobs: %w", err)
		}
		var n int64
		for _, r := range rows {
			n += r.Jobs
		}
		if n < maintenanceBatch {
			return nil
		}
	}
}

// rescueExpired returns jobs whose lease expired to their queue, or fails them.
func (w *Worker) rescueExpired(ctx context.Context) error {
	for {
		rows, err := w.q.RescueExpired(ctx, maintenanceBatch)
		if err != nil {
			return fmt.Errorf("rescue expired leases: %w", err)
		}
		if len(rows) > 0 {
			counts := map[db.JobcState]int{}
			for _, r := range rows {
				counts[r.State]++
			}
			w.log.Warn("jobc worker: rescued jobs whose lease expired", "retried", counts[db.JobcStateAvailable],
				"failed", counts[db.JobcStateFailed], "cancelled", counts[db.JobcStateCancelled])
		}
		if len(rows) < maintenanceBatch {
			return nil
		}
	}
}

// prune deletes finished jobs older than their state's retention, in batches, and
// old idempotency keys and registry entries.
func (w *Worker) prune(ctx context.Context) error {
	r := w.cfg.Retention
	now := time.Now()
	for _, p := range []struct {
		state db.JobcState
		keep  time.Duration
	}{{db.JobcStateCompleted, r.Completed}, {db.JobcStateFailed, r.Failed}, {db.JobcStateCancelled, r.Cancelled}} {
		if p.keep < 0 {
			continue // kept forever
		}
		for {
			n, err := w.q.PruneFinished(ctx, db.PruneFinishedParams{State: p.state, Before: now.Add(-p.keep), Max: maintenanceBatch})
			if err != nil {
				return fmt.Errorf("prune %s jobs: %w", p.state, err)
			}
			if n < maintenanceBatch {
				break
			}
		}
	}
	if r.IdempotencyKeys >= 0 {
		for {
			n, err := w.q.PruneIdempotencyKeys(ctx, db.PruneIdempotencyKeysParams{Before: now.Add(-r.IdempotencyKeys), Max: maintenanceBatch})
			if err != nil {
				return fmt.Errorf("prune idempotency keys: %w", err)
			}
			if n < maintenanceBatch {
				break
			}
		}
	}
	if _, err := w.q.PruneWorkers(ctx); err != nil {
		return fmt.Errorf("prune the worker registry: %w", err)
	}
	if _, err := w.q.PruneSleepers(ctx); err != nil {
		return fmt.Errorf("prune sleeping workers: %w", err)
	}
	return nil
}
