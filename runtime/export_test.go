package runtime

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime/internal/claim"
	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/maintenance"
)

// Hooks for the external tests (package runtime_test). The maintenance services are
// internal types; their tests build one against a test database and call its runOnce
// directly, as River's tests do, instead of waiting on a whole worker.

func NewSchedulerForTest(dbtx DBTX, batch int) *maintenance.Scheduler {
	return maintenance.NewScheduler(db.New(dbtx), maintenance.SchedulerConfig{BatchSize: batch})
}

func NewRescuerForTest(dbtx DBTX, log *slog.Logger, batch int) *maintenance.Rescuer {
	return maintenance.NewRescuer(db.New(dbtx), log, maintenance.RescuerConfig{BatchSize: batch})
}

func NewPrunerForTest(dbtx DBTX, retention Retention, batch int, now func() time.Time) *maintenance.Pruner {
	return maintenance.NewPruner(db.New(dbtx), maintenance.PrunerConfig{Retention: maintenance.Retention(retention), BatchSize: batch, Now: now})
}

func NewRegistryPrunerForTest(dbtx DBTX) *maintenance.RegistryPruner {
	return maintenance.NewRegistryPruner(db.New(dbtx))
}

func NewStarvationAgerForTest(dbtx DBTX, queues []string, bound time.Duration) *maintenance.StarvationAger {
	return maintenance.NewStarvationAger(db.New(dbtx), maintenance.AgerConfig{Queues: queues, Bound: bound})
}

func NewUpgraderForTest(pool *pgxpool.Pool, log *slog.Logger, jt *JobType, batch int) *maintenance.Upgrader {
	return newUpgrader(pool, log, jt, batch)
}

// NewPeriodicEnqueuerForTest reads the time from now, which the test controls.
func NewPeriodicEnqueuerForTest(dbtx DBTX, jt *JobType, now func() time.Time) (*maintenance.PeriodicEnqueuer, error) {
	return newPeriodicEnqueuer(db.New(dbtx), jt, now)
}

func NewUnhandledReporterForTest(dbtx DBTX, log *slog.Logger, queues, kinds []string, repeat time.Duration, now func() time.Time) *maintenance.UnhandledReporter {
	return maintenance.NewUnhandledReporter(db.New(dbtx), log, maintenance.UnhandledConfig{Queues: queues, Kinds: kinds, Repeat: repeat, Now: now})
}

// MaintenanceServicesForTest names the services w's Run would start, in order.
func MaintenanceServicesForTest(w *Worker) ([]string, error) {
	queues, err := w.buildQueues()
	if err != nil {
		return nil, err
	}
	services, err := w.maintenance(queues, nil)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(services))
	for i, s := range services {
		names[i] = s.name
	}
	return names, nil
}

// UnnestMaxBatch is the largest batch EnqueueMany inserts with one statement.
const UnnestMaxBatch = unnestMaxBatch

// OwnConnectionsReady is closed once a running worker's own first connection is open
// and its claims no longer borrow the application's pool (warm.go).
func OwnConnectionsReady(w *Worker) <-chan struct{} { return w.ownReady }

// ClaimQueueForTest is one queue's claims (internal/claim), for the grants test, which
// runs the claim that starts from hints as the worker role.
type ClaimQueueForTest struct{ q *claim.Queue }

func NewClaimQueueForTest(queueName string, kinds map[string][2]int) *ClaimQueueForTest {
	q := claim.NewQueue(queueName)
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		q.AddKind(k, kinds[k][0], kinds[k][1])
	}
	return &ClaimQueueForTest{q: q}
}

// Claim claims up to max jobs as the fetch loop does, and says whether the claim
// started from hints.
func (c *ClaimQueueForTest) Claim(ctx context.Context, dbtx DBTX, max int) (ids []int64, hinted bool, err error) {
	hinted = c.q.Hinted(time.Now())
	rows, err := c.q.Claim(ctx, db.New(dbtx), slog.New(slog.DiscardHandler), "claim-test", 30*time.Second, max)
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	return ids, hinted, err
}

// Fresh makes the queue's hints as good as new (claim.Queue.Fresh).
func (c *ClaimQueueForTest) Fresh() { c.q.Fresh() }

// UniqueKeyHolderForTest runs UniqueKeyHolder, which only RetryJob of a job whose key
// another job holds reaches, so that the grants test runs it as the worker role.
func UniqueKeyHolderForTest(ctx context.Context, dbtx DBTX, kind, key string) ([]int64, error) {
	return db.New(dbtx).UniqueKeyHolder(ctx, db.UniqueKeyHolderParams{Kind: kind, UniqueKey: key})
}

// FirstPayloads is StartWorkflow's mapping of input to its first job steps' payloads
// (jobc_workflow_start's p_payloads), for the test that holds it to the database's.
func FirstPayloads(wt *WorkflowType, input []byte) []byte { return wt.firstPayloads(input) }

// NewVacuumerForTest returns the vacuumer a worker runs (Config.VacuumDeadRows), on
// pool, vacuuming past deadRows dead row versions.
func NewVacuumerForTest(pool *pgxpool.Pool, deadRows int64) *maintenance.Vacuumer {
	return maintenance.NewVacuumer(pool, maintenance.VacuumerConfig{DeadRows: deadRows})
}
