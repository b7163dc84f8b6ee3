package runtime

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// Hooks for the external tests (package runtime_test). The maintenance services are
// internal types; their tests build one against a test database and call its runOnce
// directly, as River's tests do, instead of waiting on a whole worker.

func NewSchedulerForTest(dbtx DBTX, batch int) *scheduler {
	return newScheduler(db.New(dbtx), schedulerConfig{BatchSize: batch})
}

func (s *scheduler) RunOnce(ctx context.Context) (schedulerResult, error) { return s.runOnce(ctx) }

func NewRescuerForTest(dbtx DBTX, log *slog.Logger, batch int) *rescuer {
	return newRescuer(db.New(dbtx), log, rescuerConfig{BatchSize: batch})
}

func (r *rescuer) RunOnce(ctx context.Context) (rescuerResult, error) { return r.runOnce(ctx) }

func NewPrunerForTest(dbtx DBTX, retention Retention, batch int, now func() time.Time) *pruner {
	p := newPruner(db.New(dbtx), prunerConfig{Retention: retention, BatchSize: batch})
	p.now = now
	return p
}

func (p *pruner) RunOnce(ctx context.Context) (prunerResult, error) { return p.runOnce(ctx) }

func NewRegistryPrunerForTest(dbtx DBTX) *registryPruner {
	return newRegistryPruner(db.New(dbtx), registryPrunerConfig{})
}

func (p *registryPruner) RunOnce(ctx context.Context) (registryPrunerResult, error) {
	return p.runOnce(ctx)
}

func NewStarvationAgerForTest(dbtx DBTX, queues []string, bound time.Duration) *starvationAger {
	return newStarvationAger(db.New(dbtx), agerConfig{Queues: queues, Bound: bound})
}

func (a *starvationAger) RunOnce(ctx context.Context) (agerResult, error) { return a.runOnce(ctx) }

func NewUpgraderForTest(pool *pgxpool.Pool, log *slog.Logger, jt *JobType, batch int) *upgrader {
	return newUpgrader(pool, log, jt, upgraderConfig{BatchSize: batch})
}

func (u *upgrader) RunOnce(ctx context.Context) (upgraderResult, error) { return u.runOnce(ctx) }

// NewPeriodicEnqueuerForTest reads the time from now, which the test controls.
func NewPeriodicEnqueuerForTest(dbtx DBTX, jt *JobType, now func() time.Time) (*periodicEnqueuer, error) {
	p, err := newPeriodicEnqueuer(db.New(dbtx), jt, periodicConfig{})
	if err != nil {
		return nil, err
	}
	p.now = now
	p.since = now().Add(-periodicLookback)
	return p, nil
}

func (p *periodicEnqueuer) RunOnce(ctx context.Context) (periodicResult, error) {
	return p.runOnce(ctx)
}

func NewUnhandledReporterForTest(dbtx DBTX, log *slog.Logger, queues, kinds []string, repeat time.Duration, now func() time.Time) *unhandledReporter {
	u := newUnhandledReporter(db.New(dbtx), log, unhandledConfig{Queues: queues, Kinds: kinds, Repeat: repeat})
	u.now = now
	return u
}

func (u *unhandledReporter) RunOnce(ctx context.Context) (unhandledResult, error) {
	return u.runOnce(ctx)
}

// MaintenanceServicesForTest names the services w's Run would start, in order.
func MaintenanceServicesForTest(w *Worker) ([]string, error) {
	queues, err := w.buildQueues()
	if err != nil {
		return nil, err
	}
	services, err := w.maintenance(queues)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(services))
	for i, s := range services {
		names[i] = s.name
	}
	return names, nil
}

// ClaimForTest runs the worker's claim statement once for one queue and the given
// decodable kinds, each with its versions minVersion..maxVersion, as a worker's queue
// builds them, and returns the ids it leased in claim order.
func ClaimForTest(ctx context.Context, dbtx DBTX, queueName string, max int, kinds map[string][2]int) ([]int64, error) {
	q := testQueue(queueName, max, kinds)
	rows, err := q.claimJobs(ctx, db.New(dbtx), db.ClaimJobsParams{Owner: "claim-test", LeaseSeconds: 30}, max)
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids, err
}

// InsertRawForTest inserts already encoded payloads the way EnqueueMany does for
// jobs that are neither unique nor deduplicated.
func InsertRawForTest(ctx context.Context, dbtx DBTX, jt *JobType, raws [][]byte) ([]int64, error) {
	o, err := jt.options(nil)
	if err != nil {
		return nil, err
	}
	out, err := jt.insertMany(ctx, db.New(dbtx), raws, nil, o)
	ids := make([]int64, len(out))
	for i, e := range out {
		ids[i] = e.ID
	}
	return ids, err
}

// UnnestMaxBatch is the largest batch EnqueueMany inserts with one statement.
const UnnestMaxBatch = unnestMaxBatch

// OwnConnectionsReady is closed once a running worker's own first connection is open
// and its claims no longer borrow the application's pool (warm.go).
func OwnConnectionsReady(w *Worker) <-chan struct{} { return w.ownReady }

// ClaimQueueForTest is one queue's claims, with the hints they keep between them
// (claimranges.go).
type ClaimQueueForTest struct{ q *queue }

func NewClaimQueueForTest(queueName string, kinds map[string][2]int) *ClaimQueueForTest {
	return &ClaimQueueForTest{q: testQueue(queueName, 1, kinds)}
}

// Claim claims up to max jobs as the fetch loop does, and says whether the claim
// started from hints.
func (c *ClaimQueueForTest) Claim(ctx context.Context, dbtx DBTX, max int) (ids []int64, hinted bool, err error) {
	hinted = c.q.claims.hinted(time.Now())
	rows, err := c.q.claimJobs(ctx, db.New(dbtx), db.ClaimJobsParams{Owner: "claim-test", LeaseSeconds: 30}, max)
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	return ids, hinted, err
}

// Fresh makes the queue's hints as good as new: the next claims start from them (if
// the queue is busy) however slow the machine running the test is.
func (c *ClaimQueueForTest) Fresh() { c.q.claims.fullAt = time.Now() }

// testQueue is a queue of the given kinds, each with its versions min..max, as a
// worker that registered them builds it.
func testQueue(name string, max int, kinds map[string][2]int) *queue {
	q := newQueue(name, max, max)
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		q.addKind(k, kinds[k][0], kinds[k][1])
	}
	return q
}

// UniqueKeyHolderForTest runs UniqueKeyHolder, which only RetryJob of a job whose key
// another job holds reaches, so that the grants test runs it as the worker role.
func UniqueKeyHolderForTest(ctx context.Context, dbtx DBTX, kind, key string) ([]int64, error) {
	return db.New(dbtx).UniqueKeyHolder(ctx, db.UniqueKeyHolderParams{Kind: kind, UniqueKey: key})
}
