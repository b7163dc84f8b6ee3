package runtime

import (
	"context"
	"log/slog"
	"slices"
	"time"
)

// service is one maintenance task a worker runs periodically. Each is a small type of
// its own (scheduler.go, rescuer.go, pruner.go, ...) with its config and a runOnce
// method that returns what it did; tests call runOnce directly. Every runOnce is a few
// short, idempotent statements guarded by FOR UPDATE SKIP LOCKED or a unique key, so
// every node may run every service at once.
type service struct {
	name     string
	interval time.Duration
	run      func(ctx context.Context) (any, error) // returns the runOnce's result
}

// maintenanceBatch bounds the rows one statement of a service touches, so that no
// maintenance statement holds locks or builds WAL for long.
const maintenanceBatch = 1000

// runEvery runs s at once and then every interval until ctx is done. A failure is
// logged, and the next tick tries again.
func (w *Worker) runEvery(ctx context.Context, s service) {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		began := time.Now()
		res, err := s.run(ctx)
		if err != nil && ctx.Err() == nil {
			w.log.ErrorContext(ctx, "jobc worker: maintenance failed", slog.String("service", s.name), slog.Any("err", describeDBError(err)))
		}
		if len(w.cfg.Hooks) > 0 {
			w.emitMaintenance(ctx, s.name, time.Since(began), res, err)
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
	names := queueNames(queues)
	services := []service{
		newScheduler(w.q, schedulerConfig{Interval: c.SchedulerInterval}).service(),
		newRescuer(w.q, w.log, rescuerConfig{Interval: c.RescueInterval}).service(),
		newPruner(w.q, prunerConfig{Interval: c.PruneInterval, Retention: c.Retention}).service(),
		newRegistryPruner(w.q, registryPrunerConfig{Interval: c.PruneInterval}).service(),
		newUnhandledReporter(w.q, w.log, unhandledConfig{Queues: names, Kinds: w.kindNames()}).service(),
	}
	if c.StarvationBound > 0 {
		services = append(services, newStarvationAger(w.q, agerConfig{Interval: c.SchedulerInterval, Queues: names, Bound: c.StarvationBound}).service())
	}
	for _, jt := range w.jobTypes() {
		if c.UpgradePayloads && len(jt.Versions) > 1 {
			services = append(services, newUpgrader(w.pool, w.log, jt, upgraderConfig{Interval: c.SchedulerInterval}).service())
		}
		if jt.Schedule != nil {
			p, err := newPeriodicEnqueuer(w.q, jt, periodicConfig{Interval: c.SchedulerInterval})
			if err != nil {
				return nil, err
			}
			services = append(services, p.service())
		}
	}
	return services, nil
}

// withResult adapts a runOnce that returns a result to service.run: the services log
// what deserves a record themselves, and the result goes to the worker's hooks.
func withResult[R any](runOnce func(context.Context) (R, error)) func(context.Context) (any, error) {
	return func(ctx context.Context) (any, error) {
		return runOnce(ctx)
	}
}

// kindNames returns every kind and alias this worker handles.
func (w *Worker) kindNames() []string {
	names := make([]string, 0, len(w.kinds))
	for name := range w.kinds {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
