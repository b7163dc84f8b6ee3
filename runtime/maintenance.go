package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
	"github.com/jobc-dev/jobc/runtime/internal/maintenance"
)

// service is one maintenance task a worker runs periodically (package
// internal/maintenance holds the services themselves): its name in logs and events, how
// often it runs, and its RunOnce, whose result goes to the worker's hooks.
type service struct {
	name     string
	interval time.Duration
	run      func(ctx context.Context) (any, error)
}

// runEvery runs s at once and then every interval until ctx is done. A failure is
// logged, and the next tick tries again.
func (w *Worker) runEvery(ctx context.Context, s service) {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		began := time.Now()
		res, err := s.run(ctx)
		if err != nil && ctx.Err() == nil {
			w.log.ErrorContext(ctx, "jobc worker: maintenance failed", slog.String("service", s.name), slog.Any("err", dberr.Describe(err)))
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

// maintenance returns the services this worker runs, each with the exported result
// type a hook sees (hooks.go); those that need a connection of their own (the
// vacuumer) take it from own.
func (w *Worker) maintenance(queues []*queue, own *pgxpool.Pool) ([]service, error) {
	c := w.cfg
	names := queueNames(queues)
	scheduler := maintenance.NewScheduler(w.q, maintenance.SchedulerConfig{})
	rescuer := maintenance.NewRescuer(w.q, w.log, maintenance.RescuerConfig{})
	pruner := maintenance.NewPruner(w.q, maintenance.PrunerConfig{Retention: maintenance.Retention(c.Retention), Every: c.PruneInterval})
	registry := maintenance.NewRegistryPruner(w.q)
	unhandled := maintenance.NewUnhandledReporter(w.q, w.log, maintenance.UnhandledConfig{Queues: names, Kinds: w.kindNames()})
	services := []service{
		{"scheduler", c.SchedulerInterval, func(ctx context.Context) (any, error) {
			r, err := scheduler.RunOnce(ctx)
			return SchedulerResult(r), err
		}},
		{"rescuer", c.RescueInterval, func(ctx context.Context) (any, error) {
			r, err := rescuer.RunOnce(ctx)
			return RescuerResult(r), err
		}},
		{"pruner", c.PruneInterval, func(ctx context.Context) (any, error) {
			r, err := pruner.RunOnce(ctx)
			return PrunerResult(r), err
		}},
		{"registry pruner", c.PruneInterval, func(ctx context.Context) (any, error) {
			r, err := registry.RunOnce(ctx)
			return RegistryPrunerResult(r), err
		}},
		{"unhandled jobs reporter", maintenance.UnhandledInterval, func(ctx context.Context) (any, error) {
			r, err := unhandled.RunOnce(ctx)
			return unhandledResult(r), err
		}},
	}
	if keyer := newFlowKeyer(w.q, w.log, queues, w.kinds); len(keyer.kinds) > 0 {
		services = append(services, service{"flow keyer", c.SchedulerInterval, func(ctx context.Context) (any, error) {
			r, err := keyer.RunOnce(ctx)
			return r, err
		}})
	}
	if c.VacuumDeadRows >= 0 {
		vacuumer := maintenance.NewVacuumer(own, maintenance.VacuumerConfig{DeadRows: c.VacuumDeadRows})
		logged := false
		services = append(services, service{"vacuumer", maintenance.VacuumInterval, func(ctx context.Context) (any, error) {
			r, err := vacuumer.RunOnce(ctx)
			if r.NotPermitted && !logged {
				logged = true
				w.log.InfoContext(ctx, "jobc worker: this role may not vacuum jobc_jobs, so autovacuum alone removes its dead row versions; see docs/operations.md, \"Vacuum\"")
			}
			return VacuumerResult(r), err
		}})
	}
	if c.StarvationBound > 0 {
		ager := maintenance.NewStarvationAger(w.q, maintenance.AgerConfig{Queues: names, Bound: c.StarvationBound})
		services = append(services, service{"starvation ager", c.SchedulerInterval, func(ctx context.Context) (any, error) {
			r, err := ager.RunOnce(ctx)
			return AgerResult(r), err
		}})
	}
	for _, jt := range w.jobTypes() {
		if c.UpgradePayloads && len(jt.Versions) > 1 {
			u := newUpgrader(w.pool, w.log, jt, 0)
			services = append(services, service{"upgrader " + jt.Kind, c.SchedulerInterval, func(ctx context.Context) (any, error) {
				r, err := u.RunOnce(ctx)
				return UpgraderResult(r), err
			}})
		}
		if jt.Schedule != nil {
			p, err := newPeriodicEnqueuer(w.q, jt, nil)
			if err != nil {
				return nil, err
			}
			services = append(services, service{"periodic " + jt.Kind, c.SchedulerInterval, func(ctx context.Context) (any, error) {
				r, err := p.RunOnce(ctx)
				return PeriodicResult(r), err
			}})
		}
	}
	return services, nil
}

// newUpgrader returns jt's payload upgrader; batch 0 is the upgrader's default.
func newUpgrader(pool *pgxpool.Pool, log *slog.Logger, jt *JobType, batch int) *maintenance.Upgrader {
	return maintenance.NewUpgrader(pool, log, maintenance.UpgraderConfig{
		Kind:       jt.Kind,
		Kinds:      append([]string{jt.Kind}, jt.Aliases...),
		MinVersion: jt.minVersion(),
		MaxVersion: jt.maxVersion(),
		Upcast:     jt.upcastTo,
		LiveKinds: func(ctx context.Context) ([]map[string][2]int, error) {
			workers, err := ListWorkers(ctx, pool, 0)
			kinds := make([]map[string][2]int, len(workers))
			for i, wk := range workers {
				kinds[i] = wk.Kinds
			}
			return kinds, err
		},
		BatchSize: batch,
	})
}

// newPeriodicEnqueuer returns the enqueuer of jt's occurrences, reading the time from
// now (nil: time.Now). A periodic job's payload is {} with the write version's defaults
// filled in.
func newPeriodicEnqueuer(q *db.Queries, jt *JobType, now func() time.Time) (*maintenance.PeriodicEnqueuer, error) {
	sched, err := maintenance.Schedule(jt.Schedule.Cron, jt.Schedule.Timezone)
	if err != nil {
		return nil, fmt.Errorf("jobc: job type %s: %w", jt.Kind, err)
	}
	payload, err := withDefaults([]byte("{}"), jt.schemas[jt.WriteVersion])
	if err != nil {
		return nil, err
	}
	if err := jt.Validate(jt.WriteVersion, payload); err != nil {
		return nil, fmt.Errorf("jobc: job type %s: a scheduled job's payload is {} plus defaults: %w", jt.Kind, err)
	}
	enqueue := func(ctx context.Context, o maintenance.Occurrence) (int64, bool, error) {
		e, err := jt.insert(ctx, q, payload, enqueueOptions{
			priority: jt.Priority,
			version:  jt.WriteVersion,
			runAt:    &o.At,
			meta:     o.Meta,
			dedupKey: &o.Key,
			finished: []string{string(StateCompleted), string(StateFailed), string(StateCancelled)},
		})
		return e.ID, e.Duplicate, err
	}
	return maintenance.NewPeriodicEnqueuer(maintenance.PeriodicConfig{Kind: jt.Kind, Schedule: sched, Enqueue: enqueue, Now: now}), nil
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
