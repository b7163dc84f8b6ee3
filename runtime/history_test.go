package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/internal/maintenance"
)

// History (jobc_jobs_finished) is partitioned by state and then by finish time; the
// pruner adds partitions ahead and retires whole ones past retention
// (jobc_history_prepare, jobc_history_retire in schema/0001_baseline.sql).

// partition is one partition of a state's history by finish time.
type partition struct {
	name   string
	lo, hi time.Time
}

func partitions(t *testing.T, pool *pgxpool.Pool, state string) []partition {
	t.Helper()
	rows, err := pool.Query(t.Context(), `SELECT name, lower_bound, upper_bound FROM jobc_history_partitions($1)`, state)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ps []partition
	for rows.Next() {
		var p partition
		if err := rows.Scan(&p.name, &p.lo, &p.hi); err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ps
}

// partitionOf returns the name of the partition that holds finished job id.
func partitionOf(t *testing.T, pool *pgxpool.Pool, id int64) string {
	t.Helper()
	var name string
	if err := pool.QueryRow(t.Context(), `SELECT tableoid::regclass::text FROM jobc_jobs_finished WHERE id = $1`, id).Scan(&name); err != nil {
		t.Fatalf("the partition of job %d: %v", id, err)
	}
	return name
}

// TestHistoryRetiresByPartition: the pruner prepares each state's partitions for two
// intervals ahead (a quarter of the retention; a day for a state kept for ever), a
// finished job lands in the one of its finish time, and once that partition's end is
// past the retention the partition is dropped with the unique keys its jobs held:
// no row is deleted. A row that found no partition (older than the first) is deleted
// from the DEFAULT partition by age.
func TestHistoryRetiresByPartition(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	jt := emailType(t, func(jt *runtime.JobType) {
		jt.Unique = &runtime.Unique{Fields: []string{"n"}, While: []runtime.State{runtime.StateAvailable, runtime.StateScheduled, runtime.StateRunning, runtime.StateCompleted}}
	})
	retention := runtime.Retention{Completed: time.Hour, Failed: -1, Cancelled: time.Hour, IdempotencyKeys: -1}
	prune := func(now time.Time) maintenance.PrunerResult {
		t.Helper()
		res, err := runtime.NewPrunerForTest(pool, retention, 100, func() time.Time { return now }).RunOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	start := time.Now()
	first := prune(start)
	for state, keep := range map[string]time.Duration{"completed": retention.Completed, "failed": retention.Failed, "cancelled": retention.Cancelled} {
		interval := maintenance.PartitionInterval(keep, time.Minute)
		ps := partitions(t, pool, state)
		if len(ps) < 3 || ps[0].lo.After(start) || ps[len(ps)-1].hi.Before(start.Add(2*interval)) {
			t.Fatalf("%s: partitions %v; want them to cover %s to two intervals of %s later", state, ps, start, interval)
		}
		for i, p := range ps {
			if p.hi.Sub(p.lo) != interval || (i > 0 && !p.lo.Equal(ps[i-1].hi)) {
				t.Errorf("%s: partition %d of %v is not the %s after the one before it", state, i, ps, interval)
			}
		}
	}
	if again := prune(start); again.Added != 0 || first.Added == 0 {
		t.Errorf("prepared %d partitions, then %d more at the same time; want some, then none", first.Added, again.Added)
	}

	var ids []int64
	for n := range 3 {
		e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: n, Email: "ok@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	leaseAll(t, ctx, pool, "me")
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_finish($1, 'completed', NULL, 'me', ARRAY[1, 1, 1])`, ids); n != 3 {
		t.Fatalf("finished %d of 3 jobs", n)
	}
	held := partitionOf(t, pool, ids[0])
	if held == "jobc_jobs_finished_completed_default" {
		t.Fatalf("job %d went to the DEFAULT partition; partitions: %v", ids[0], partitions(t, pool, "completed"))
	}
	// An old row, from before every partition: in the DEFAULT partition.
	if _, err := pool.Exec(ctx, `UPDATE jobc_jobs_finished SET finished_at = now() - interval '2 hours' WHERE id = $1`, ids[2]); err != nil {
		t.Fatal(err)
	}
	if got := partitionOf(t, pool, ids[2]); got != "jobc_jobs_finished_completed_default" {
		t.Fatalf("a job finished before every partition is in %s", got)
	}

	// Now: the default's old row goes by age; the partition is not yet past retention.
	if res := prune(time.Now()); res.Completed != 1 || res.Dropped != 0 {
		t.Errorf("pruned %+v; want 1 completed row of the DEFAULT partition and no partition dropped", res)
	}
	if got := partitionOf(t, pool, ids[0]); got != held {
		t.Errorf("job %d moved from %s to %s", ids[0], held, got)
	}

	// Once the partition's end is past the retention, it goes, with the keys.
	var end time.Time
	for _, p := range partitions(t, pool, "completed") {
		if p.name == held {
			end = p.hi
		}
	}
	res := prune(end.Add(retention.Completed))
	if res.Dropped < 1 || res.Completed != 0 || res.Deferred != 0 {
		t.Errorf("pruned %+v at the partition's end plus retention; want it dropped and no row deleted", res)
	}
	for _, p := range partitions(t, pool, "completed") {
		if p.name == held {
			t.Errorf("partition %s (ending %s) kept at %s", held, end, end.Add(retention.Completed))
		}
	}
	for _, id := range ids[:2] {
		if _, err := runtime.GetJob(ctx, pool, id); !errors.Is(err, runtime.ErrJobNotFound) {
			t.Errorf("job %d of the dropped partition: %v; want it gone", id, err)
		}
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_unique_keys WHERE job_id = ANY($1)`, ids); n != 0 {
		t.Errorf("%d unique keys of dropped jobs survived", n)
	}
	if again, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 0, Email: "ok@example.com"}); err != nil || again.Duplicate {
		t.Errorf("enqueue of a dropped job's key: %+v, %v; want a new job", again, err)
	}
	// The failed history, kept for ever, keeps every partition.
	if ps := partitions(t, pool, "failed"); len(ps) < 3 {
		t.Errorf("failed history, kept for ever, has partitions %v", ps)
	}
}

// TestHistoryFutureRowHoldsNothingBack: a finished row stamped far ahead, written by
// hand into history (a role with INSERT may), lands in the DEFAULT partition. A
// partition may not begin before a DEFAULT row inside its range, but this one is
// beyond every range being prepared, so the partitions of now are still made, and
// the row stays where it is.
func TestHistoryFutureRowHoldsNothingBack(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_jobs_finished (id, kind, queue, state, priority,
		payload_version, payload, metadata, available_at, attempt, max_attempts, errors, created_at, finished_at)
		VALUES (1, 'other', 'other', 'completed', 5, 1, '{}', '{}', now(), 1, 1, '[]', now(), '2200-01-01')`); err != nil {
		t.Fatal(err)
	}
	retention := runtime.Retention{Completed: time.Hour, Failed: -1, Cancelled: time.Hour, IdempotencyKeys: -1}
	start := time.Now()
	if _, err := runtime.NewPrunerForTest(pool, retention, 100, time.Now).RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	interval := maintenance.PartitionInterval(retention.Completed, time.Minute)
	ps := partitions(t, pool, "completed")
	if len(ps) == 0 || ps[0].lo.After(start) || ps[len(ps)-1].hi.Before(start.Add(2*interval)) {
		t.Errorf("completed history's partitions %v beside a row finished in 2200; want them to cover %s to two intervals of %s later",
			ps, start, interval)
	}
	if got := partitionOf(t, pool, 1); got != "jobc_jobs_finished_completed_default" {
		t.Errorf("the row finished in 2200 is in %s, want it kept in the DEFAULT partition", got)
	}
}

// TestHistoryPrepareBesideAFinish: a finish that adds its row to the DEFAULT partition
// while the pruner prepares partitions holds the pruner off until it commits, and the
// partitions then begin after that row. The pruner used to read the DEFAULT partition
// before it had its lock, missed the row, and CREATE TABLE refused the partition whose
// range held it (SQLSTATE 23514); a stopping worker's pruner hit it in CI
// (TestStopDuringClaims).
func TestHistoryPrepareBesideAFinish(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	const lockTimeout = 100 * time.Millisecond // jobc_history_prepare's
	for try := int64(1); ; try++ {
		made, finishedAt := prepareBesideAFinish(t, pool, try)
		if made == 0 { // the pruner's lock timeout passed before the finish committed
			if try == 10 {
				t.Fatalf("in %d tries, the finish never committed within the pruner's lock timeout of %s", try, lockTimeout)
			}
			continue
		}
		if got := partitionOf(t, pool, try); got != "jobc_jobs_finished_completed_default" {
			t.Errorf("the row finished while the partitions were made is in %s, want it kept in the DEFAULT partition", got)
		}
		ps := partitions(t, pool, "completed")
		if len(ps) == 0 || !ps[0].lo.After(finishedAt) {
			t.Errorf("completed history's partitions %v; want them to begin after the DEFAULT partition's row finished at %s", ps, finishedAt)
		}
		return
	}
}

// prepareBesideAFinish finishes job id into the DEFAULT partition in a transaction it
// commits while jobc_history_prepare waits for that transaction's lock, and returns
// how many partitions the prepare made (0 when its lock timeout passed first) and
// when the job finished.
func prepareBesideAFinish(t *testing.T, pool *pgxpool.Pool, id int64) (int, time.Time) {
	t.Helper()
	ctx := t.Context()
	finish, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer finish.Rollback(ctx) //nolint:errcheck // committed below unless the test fails
	var finishedAt time.Time
	if err := finish.QueryRow(ctx, `INSERT INTO jobc_jobs_finished (id, kind, queue, state, priority,
		payload_version, payload, metadata, available_at, attempt, max_attempts, errors, created_at, finished_at)
		VALUES ($1, 'other', 'other', 'completed', 5, 1, '{}', '{}', now(), 1, 1, '[]', now(), now())
		RETURNING finished_at`, id).Scan(&finishedAt); err != nil {
		t.Fatal(err)
	}
	conn, pid := pgtest.Backend(t, pool)
	defer conn.Release()
	type prepared struct {
		made int
		err  error
	}
	done := make(chan prepared, 1)
	go func() {
		var p prepared
		p.err = conn.QueryRow(ctx, `SELECT jobc_history_prepare('completed', interval '1 minute', interval '2 minutes')`).Scan(&p.made)
		done <- p
	}()
	// Whatever happens, the prepare has returned before conn goes back to the pool.
	result := func() prepared {
		p := <-done
		if p.err != nil {
			t.Fatalf("prepare beside a finish of a row in the DEFAULT partition: %v", p.err)
		}
		return p
	}
	// The finish commits once the prepare waits for its lock, or has given up waiting
	// (its lock timeout passed before it was seen waiting: it made nothing).
	var seen string
	waiting := func() bool {
		if len(done) > 0 {
			return true
		}
		if err := pool.QueryRow(ctx, `SELECT coalesce(wait_event_type, '') || ' ' || state FROM pg_stat_activity WHERE pid = $1`, pid).Scan(&seen); err != nil {
			_ = finish.Rollback(ctx)
			result()
			t.Fatal(err)
		}
		return strings.HasPrefix(seen, "Lock ")
	}
	const patience = 10 * time.Second
	for deadline := time.Now().Add(patience); !waiting(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = finish.Rollback(ctx)
			result()
			t.Fatalf("the pruner was never seen waiting for the finish's lock within %s (last seen: %q)", patience, seen)
		}
	}
	if err := finish.Commit(ctx); err != nil {
		result()
		t.Fatal(err)
	}
	return result().made, finishedAt
}

// TestHistoryDropWaitsItsTurn: a drop needs ACCESS EXCLUSIVE on its state's table, so
// an open transaction that read history holds it off. The retire waits at most its
// lock timeout, counts the partition as deferred and leaves it, and drops it on a
// later run once the reader is done; finishes go on meanwhile.
func TestHistoryDropWaitsItsTurn(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	jt := emailType(t, nil)
	retention := runtime.Retention{Completed: time.Hour, Failed: time.Hour, Cancelled: time.Hour, IdempotencyKeys: -1}
	pruner := func(now time.Time) *maintenance.Pruner {
		return runtime.NewPrunerForTest(pool, retention, 100, func() time.Time { return now })
	}
	if _, err := pruner(time.Now()).RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	ids := idsOf(enqueueN(t, pool, jt, 2))
	leaseAll(t, ctx, pool, "me")
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_finish($1, 'completed', NULL, 'me', ARRAY[1])`, ids[:1]); n != 1 {
		t.Fatal("the first job did not finish")
	}
	held := partitionOf(t, pool, ids[0])
	later := time.Now().Add(retention.Completed + 2*maintenance.PartitionInterval(retention.Completed, time.Minute))

	// A report reading completed history, left open.
	reader, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Rollback(ctx) //nolint:errcheck // ended below
	if _, err := reader.Exec(ctx, `SELECT count(*) FROM jobc_jobs_finished WHERE state = 'completed'`); err != nil {
		t.Fatal(err)
	}
	res, err := pruner(later).RunOnce(ctx)
	if err != nil {
		t.Fatalf("retire beside an open reader: %v", err)
	}
	if res.Deferred < 1 {
		t.Errorf("retire beside an open reader: %+v; want the completed partitions deferred", res)
	}
	if got := partitionOf(t, pool, ids[0]); got != held {
		t.Errorf("job %d is in %q, want it kept in %s while the reader is open", ids[0], got, held)
	}
	// Finishes go on while the partition waits.
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_finish($1, 'completed', NULL, 'me', ARRAY[1])`, ids[1:]); n != 1 {
		t.Error("a finish beside the deferred drop did not finish")
	}
	if err := reader.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	res, err = pruner(later).RunOnce(ctx)
	if err != nil || res.Dropped < 1 || res.Deferred != 0 {
		t.Fatalf("retire after the reader ended: %+v, %v; want the partitions dropped", res, err)
	}
	for _, id := range ids {
		if _, err := runtime.GetJob(ctx, pool, id); !errors.Is(err, runtime.ErrJobNotFound) {
			t.Errorf("job %d: %v; want it dropped with its partition", id, err)
		}
	}
}

// TestHistoryWithoutALeader: pruners of several workers prepare and retire at once;
// each state's partitions stay one contiguous run, none made twice, none missing,
// and no run fails.
func TestHistoryWithoutALeader(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	retention := runtime.Retention{Completed: 4 * time.Minute, Failed: time.Hour, Cancelled: time.Hour, IdempotencyKeys: -1}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 4 {
		wg.Go(func() {
			p := runtime.NewPrunerForTest(pool, retention, 100, time.Now)
			for i := range 8 {
				if _, err := p.RunOnce(ctx); err != nil {
					errs <- fmt.Errorf("pruner %d, run %d: %w", w, i, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, state := range []string{"completed", "failed", "cancelled"} {
		ps := partitions(t, pool, state)
		interval := maintenance.PartitionInterval(map[string]time.Duration{
			"completed": retention.Completed, "failed": retention.Failed, "cancelled": retention.Cancelled}[state], time.Minute)
		if len(ps) < 3 || ps[0].lo.After(start) || ps[len(ps)-1].hi.Before(start.Add(2*interval)) {
			t.Errorf("%s: partitions %v do not cover %s to two intervals of %s later", state, ps, start, interval)
		}
		for i := 1; i < len(ps); i++ {
			if !ps[i].lo.Equal(ps[i-1].hi) {
				t.Errorf("%s: partitions %v are not contiguous at %d", state, ps, i)
			}
		}
	}
}

// TestHistoryUnderAWorker: a worker's pruner, with a retention of seconds, moves
// completed jobs into partitions and drops them, and the jobs' ids are not found
// afterwards; the wait derives from the retention and the prune interval.
func TestHistoryUnderAWorker(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	jt := emailType(t, nil)
	cfg := testConfig(map[string]runtime.QueueConfig{"email": {MaxWorkers: 5}})
	cfg.Retention = runtime.Retention{Completed: 2 * time.Second, Failed: -1, Cancelled: -1, IdempotencyKeys: -1}
	cfg.PruneInterval = 200 * time.Millisecond
	runs := &prunerRuns{}
	cfg.Hooks = []runtime.Hook{runs}
	w := runtime.NewWorker(pool, cfg)
	if err := runtime.Handle(w, jt, func(context.Context, *runtime.Job, emailPayload) error { return nil }); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	// Wait for the pruner's first partitions, so that the jobs land in them.
	interval := maintenance.PartitionInterval(cfg.Retention.Completed, cfg.PruneInterval)
	waitFor(t, "completed history's partitions", 20*cfg.PruneInterval, func() bool { return len(partitions(t, pool, "completed")) > 0 })
	ids := idsOf(enqueueN(t, pool, jt, 20))
	waitFor(t, "20 jobs completed", 10*time.Second, func() bool {
		return countRows(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE state = 'completed' AND id = ANY($1)`, ids) == 20
	})
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs_finished_completed_default WHERE id = ANY($1)`, ids); n != 0 {
		t.Errorf("%d jobs went to the DEFAULT partition, though partitions were ready", n)
	}
	patience := cfg.Retention.Completed + 2*interval + 20*cfg.PruneInterval
	waitFor(t, "the jobs' partitions dropped", patience, func() bool {
		return countRows(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE id = ANY($1)`, ids) == 0
	})
	// The run that dropped them reports it (to the hooks, after it returns).
	waitFor(t, "a pruner run that dropped a partition", 20*cfg.PruneInterval, func() bool {
		runs.mu.Lock()
		defer runs.mu.Unlock()
		return runs.dropped > 0
	})
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs_finished_completed_default`); n != 0 {
		t.Errorf("%d rows in the DEFAULT partition", n)
	}
}

// prunerRuns adds up what the pruner's runs dropped, as a hook sees them.
type prunerRuns struct {
	mu      sync.Mutex
	dropped int64
}

func (r *prunerRuns) OnEvent(_ context.Context, e runtime.Event) {
	if res, ok := e.Result.(runtime.PrunerResult); ok {
		r.mu.Lock()
		r.dropped += res.Dropped
		r.mu.Unlock()
	}
}

// idsOf returns enqueueN's ids in the order they were enqueued.
func idsOf(byN map[int]int64) []int64 {
	ids := make([]int64, len(byN))
	for n, id := range byN {
		ids[n-1] = id
	}
	return ids
}

// TestHistoryReadsAreIndexDriven: with history spread over partitions (the DEFAULT
// one, two hours old, and those of the current and next intervals, 30,000 rows,
// analyzed), the reads of history an operator makes read each partition through its
// indexes: one job by id, the newest page of jobs and of failed jobs. Every plan is logged (auto_explain) and none may read a partition
// sequentially past a handful of rows. The queues' last hour counts every row of the
// hour, so it may read the partitions within the hour whole, but not the older one.
func TestHistoryReadsAreIndexDriven(t *testing.T) {
	t.Parallel()
	log, base, pool := newPlanLog(t)
	ctx := t.Context()
	retention := runtime.Retention{Completed: time.Hour, Failed: time.Hour, Cancelled: time.Hour, IdempotencyKeys: -1}
	if _, err := runtime.NewPrunerForTest(base, retention, 100, time.Now).RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	interval := maintenance.PartitionInterval(retention.Completed, time.Minute)
	if _, err := base.Exec(ctx, `INSERT INTO jobc_jobs_finished (
		    id, kind, queue, state, priority, payload_version, payload, metadata, available_at,
		    attempt, max_attempts, errors, created_at, attempted_at, finished_at)
		SELECT i, 'send_email', CASE WHEN i % 2 = 0 THEN 'email' ELSE 'other' END,
		       (CASE WHEN i % 10 = 0 THEN 'failed' ELSE 'completed' END)::jobc_state, 5, 1,
		       jsonb_build_object('n', i), '{}', now(), 1, 1,
		       CASE WHEN i % 10 = 0 THEN '[{"error": "boom", "class": "x"}]'::jsonb ELSE '[]' END, now(), now(),
		       CASE WHEN i <= 10000 THEN now() - interval '2 hours' ELSE now() + (i / 10000 - 1) * make_interval(secs => $1) END
		FROM generate_series(1, 30000) i`, interval.Seconds()); err != nil {
		t.Fatal(err)
	}
	if _, err := base.Exec(ctx, `SELECT setval(pg_get_serial_sequence('jobc_jobs', 'id'), 30000)`); err != nil {
		t.Fatal(err)
	}
	if _, err := base.Exec(ctx, `ANALYZE jobc_jobs_finished`); err != nil {
		t.Fatal(err)
	}
	var spread int
	if err := base.QueryRow(ctx, `SELECT count(DISTINCT tableoid) FROM jobc_jobs_finished`).Scan(&spread); err != nil || spread < 4 {
		t.Fatalf("history in %d partitions (%v), want the rows spread over at least 4", spread, err)
	}

	if info, err := runtime.GetJob(ctx, pool, 15001); err != nil || info.ID != 15001 {
		t.Errorf("GetJob: %+v, %v", info, err)
	}
	page, err := runtime.ListJobs(ctx, pool, runtime.JobFilter{JobSelection: runtime.JobSelection{Limit: 20}})
	if err != nil || len(page.Jobs) == 0 || page.Jobs[0].ID != 30000 {
		t.Errorf("ListJobs, newest first: %d jobs, %v", len(page.Jobs), err)
	}
	failed, err := runtime.ListJobs(ctx, pool, runtime.JobFilter{JobSelection: runtime.JobSelection{
		States: []runtime.State{runtime.StateFailed}, Limit: 20}})
	if err != nil || len(failed.Jobs) == 0 {
		t.Errorf("ListJobs of failed jobs: %d jobs, %v", len(failed.Jobs), err)
	}
	if stats, err := runtime.ListQueueStats(ctx, pool); err != nil || len(stats) == 0 {
		t.Errorf("ListQueueStats: %v, %v", stats, err)
	}
	// An operator's repair by id: retry one failed job, delete one completed job.
	if res, err := runtime.RetryJobs(ctx, pool, runtime.JobSelection{IDs: []int64{15000}}); err != nil || res.Changed != 1 {
		t.Errorf("RetryJobs by id: %+v, %v", res, err)
	}
	if res, err := runtime.DeleteJobs(ctx, pool, runtime.JobSelection{IDs: []int64{15001}}); err != nil || res.Changed != 1 {
		t.Errorf("DeleteJobs by id: %+v, %v", res, err)
	}
	// A rescue, whose report per queue read the rescued jobs back through history.
	if _, err := base.Exec(ctx, `INSERT INTO jobc_jobs (id, kind, queue, state, priority, payload_version, payload,
		    max_attempts, attempt, lease_owner, lease_expires_at)
		VALUES (30001, 'send_email', 'email', 'running', 5, 1, '{}', 1, 1, 'gone', now() - interval '1 minute')`); err != nil {
		t.Fatal(err)
	}
	if res, err := runtime.NewRescuerForTest(pool, slog.New(slog.DiscardHandler), 10).RunOnce(ctx); err != nil || res.ByQueue["email"] != 1 {
		t.Errorf("a rescue: %+v, %v", res, err)
	}
	scans, _ := log.seqScans()
	for _, s := range scans {
		lastHour := strings.Contains(s.plan, "-- name: QueueStats") && !strings.HasSuffix(s.table, "_default")
		if strings.HasPrefix(s.table, "jobc_jobs_finished") && s.read > 100 && !lastHour {
			t.Errorf("a sequential scan of %s read %d rows:\n%s", s.table, s.read, s.plan)
		}
	}
}

// ListHistory tells an operator how each state's history is kept: no partition before
// a pruner ran (finishes go to the DEFAULT partition, whose rows it estimates), then
// partitions that cover now and two intervals ahead.
func TestListHistory(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_jobs_finished (
		    id, kind, queue, state, priority, payload_version, payload, metadata, available_at,
		    attempt, max_attempts, errors, created_at, attempted_at, finished_at)
		SELECT i, 'k', 'q', 'completed', 5, 1, '{}', '{}', now(), 1, 1, '[]', now(), now(), now()
		FROM generate_series(1, 2) i;
		ANALYZE jobc_jobs_finished`); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	before, err := runtime.ListHistory(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	want := []runtime.State{runtime.StateCompleted, runtime.StateFailed, runtime.StateCancelled}
	if len(before) != len(want) {
		t.Fatalf("ListHistory: %+v; want the three finished states", before)
	}
	for i, h := range before {
		rows := int64(0)
		if h.State == runtime.StateCompleted {
			rows = 2
		}
		if h.State != want[i] || h.Partitions != 0 || h.Covers(now) || h.DefaultRows != rows {
			t.Errorf("before any pruner: %+v; want %s with no partition and %d rows in DEFAULT", h, want[i], rows)
		}
	}

	retention := runtime.Retention{Completed: time.Hour, Failed: 24 * time.Hour, Cancelled: time.Hour, IdempotencyKeys: -1}
	pruned := time.Now()
	if _, err := runtime.NewPrunerForTest(pool, retention, 100, time.Now).RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := runtime.ListHistory(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	keep := map[runtime.State]time.Duration{runtime.StateCompleted: retention.Completed, runtime.StateFailed: retention.Failed, runtime.StateCancelled: retention.Cancelled}
	// The first completed partition starts after the DEFAULT partition's rows, which
	// it could not take over, so a little after the run.
	for _, h := range after {
		ahead := pruned.Add(2 * maintenance.PartitionInterval(keep[h.State], time.Minute))
		if at := time.Now().Add(time.Second); h.Partitions < 3 || !h.Covers(at) || h.Until.Before(ahead) {
			t.Errorf("after a pruner's run: %+v; want partitions that cover %s and reach %s", h, at, ahead)
		}
	}
}
