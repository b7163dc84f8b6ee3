package runtime_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/internal/migrate"
	"github.com/jobc-dev/jobc/schema"
)

// A migration applied to a database with a million finished jobs while a worker
// completes jobs: what it costs the jobs that run meanwhile. testdata/migrations holds
// one change written two ways: safe.sql as schema.LongLocks asks (outside a
// transaction: a column added bare and filled in committed batches, a constraint NOT
// VALID then validated, an index built concurrently), naive.sql the short way.

// stallRun is what the jobs that ran during a migration saw.
type stallRun struct {
	migration   time.Duration // how long the migration took
	enqueued    int64         // jobs enqueued while it ran
	during      int64         // jobs that finished while it ran
	worstBefore time.Duration // the longest enqueue-to-finish of the jobs before it
	worstDuring time.Duration // ... and of the jobs enqueued while it ran
}

func (r stallRun) String() string {
	return fmt.Sprintf("migration %s; %d jobs enqueued and %d finished while it ran; the longest enqueue-to-finish %s before it, %s during it",
		r.migration.Round(time.Millisecond), r.enqueued, r.during, r.worstBefore.Round(time.Millisecond), r.worstDuring.Round(time.Millisecond))
}

// migrationUnderLoad fills history with rows finished jobs, starts a worker and a
// producer of a job every 2 ms, applies the baseline and fixture as migration 2, and
// reports what the jobs saw; every job enqueued must complete.
func migrationUnderLoad(tb testing.TB, fixture string, rows int) (*pgxpool.Pool, stallRun) {
	tb.Helper()
	pool := pgtest.NewSchema(tb, migrated)
	ctx := tb.Context()
	sql, err := os.ReadFile("testdata/migrations/" + fixture)
	if err != nil {
		tb.Fatal(err)
	}
	const chunk = 100_000
	for from := 1; from <= rows; from += chunk {
		if _, err := pool.Exec(ctx, `INSERT INTO jobc_jobs_finished (
		    id, kind, queue, state, priority, payload_version, payload, metadata, available_at,
		    attempt, max_attempts, errors, created_at, attempted_at, finished_at)
		SELECT i, 'old_report', 'reports', 'completed', 5, 1, jsonb_build_object('n', i), '{}',
		       now() - interval '1 hour', 1, 1, '[]', now() - interval '1 hour', now() - interval '1 hour', now() - interval '1 hour'
		FROM generate_series($1::bigint, $2::bigint) i`, from, min(from+chunk-1, rows)); err != nil {
			tb.Fatalf("history rows from %d: %v", from, err)
		}
	}
	if _, err := pool.Exec(ctx, `SELECT setval(pg_get_serial_sequence('jobc_jobs', 'id'), $1)`, rows); err != nil {
		tb.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE jobc_jobs_finished`); err != nil {
		tb.Fatal(err)
	}

	jt, err := runtime.NewJobType(runtime.JobType{Kind: "send_email", Queue: "email", Priority: 5, MaxAttempts: 3,
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: emailSchema}}})
	if err != nil {
		tb.Fatal(err)
	}
	w := runtime.NewWorker(pool, testConfig(map[string]runtime.QueueConfig{"email": {MaxWorkers: 10}}))
	if err := runtime.Handle(w, jt, func(context.Context, *runtime.Job, emailPayload) error { return nil }); err != nil {
		tb.Fatal(err)
	}
	wctx, stopWorker := context.WithCancel(context.Background())
	workerDone := make(chan error, 1)
	go func() { workerDone <- w.Run(wctx) }()
	defer func() {
		stopWorker()
		if err := <-workerDone; err != nil {
			tb.Errorf("worker: %v", err)
		}
	}()
	var enqueued atomic.Int64
	pctx, stopProducer := context.WithCancel(ctx)
	var produced sync.WaitGroup
	produced.Go(func() {
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for n := 0; ; n++ {
			select {
			case <-pctx.Done():
				return
			case <-tick.C:
			}
			if _, err := runtime.Enqueue(pctx, pool, jt, emailPayload{N: n, Email: "a@example.com"}); err != nil {
				if pctx.Err() == nil {
					tb.Errorf("enqueue during the migration: %v", err)
				}
				return
			}
			enqueued.Add(1)
		}
	})
	finished := func() int64 {
		var n int64
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM jobc_jobs_finished WHERE kind = 'send_email'`).Scan(&n); err != nil {
			tb.Fatal(err)
		}
		return n
	}
	poll := testConfig(nil).PollInterval
	waitFor := func(what string, cond func() bool) {
		deadline := time.Now().Add(600 * poll)
		for !cond() {
			if time.Now().After(deadline) {
				tb.Fatalf("timed out after %s waiting for %s (%d enqueued, %d finished)", 600*poll, what, enqueued.Load(), finished())
			}
			time.Sleep(poll)
		}
	}
	waitFor("jobs completing before the migration", func() bool { return finished() >= 100 })

	all := baselineAnd(tb, schema.Migration{Version: 2, Name: "fixture", SQL: string(sql)})
	var start, end time.Time
	if err := pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&start); err != nil {
		tb.Fatal(err)
	}
	enqueuedBefore := enqueued.Load()
	applied, err := migrate.Apply(ctx, pool, all)
	if err != nil || len(applied) != 1 {
		tb.Fatalf("apply %s under load: applied %v, %v", fixture, applied, err)
	}
	if err := pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&end); err != nil {
		tb.Fatal(err)
	}
	run := stallRun{migration: end.Sub(start), enqueued: enqueued.Load() - enqueuedBefore}
	stopProducer()
	produced.Wait()
	// (Counted in the database: an enqueue cut short by the producer's stop may have
	// committed.)
	waitFor("every job enqueued to complete", func() bool {
		var left int64
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM jobc_jobs WHERE kind = 'send_email'`).Scan(&left); err != nil {
			tb.Fatal(err)
		}
		return left == 0 && finished() >= enqueued.Load()
	})

	var before, during float64
	if err := pool.QueryRow(ctx, `
		SELECT coalesce(max(extract(epoch FROM finished_at - created_at)) FILTER (WHERE created_at < $1), 0),
		       coalesce(max(extract(epoch FROM finished_at - created_at)) FILTER (WHERE created_at BETWEEN $1 AND $2), 0),
		       count(*) FILTER (WHERE finished_at BETWEEN $1 AND $2)
		FROM jobc_jobs_finished WHERE kind = 'send_email'`, start, end).Scan(&before, &during, &run.during); err != nil {
		tb.Fatal(err)
	}
	run.worstBefore = time.Duration(before * float64(time.Second))
	run.worstDuring = time.Duration(during * float64(time.Second))
	var dups int64
	if err := pool.QueryRow(ctx, `SELECT count(*) - count(DISTINCT id) FROM jobc_jobs_finished WHERE kind = 'send_email'`).Scan(&dups); err != nil || dups != 0 {
		tb.Errorf("%d jobs finished twice (%v)", dups, err)
	}
	return pool, run
}

// TestMigrationDoesNotStallWorkers applies safe.sql to a database with a million
// finished jobs while a worker completes a job every 2 ms: the migration completes
// (its backfill, validation and concurrent build outside a transaction, each
// statement under the migrator's lock timeout), jobs go on finishing throughout, none
// is lost or run twice, and what it made is all there and valid. The fixtures are
// tied to the rules: LongLocks finds nothing in safe.sql and each statement of
// naive.sql.
func TestMigrationDoesNotStallWorkers(t *testing.T) {
	t.Parallel()
	for fixture, flagged := range map[string]int{"safe.sql": 0, "naive.sql": 3} {
		sql, err := os.ReadFile("testdata/migrations/" + fixture)
		if err != nil {
			t.Fatal(err)
		}
		if got := schema.LongLocks(schema.Migration{Version: 2, Name: "fixture", SQL: string(sql)}); len(got) != flagged {
			t.Errorf("%s: LongLocks found %v, want %d statements", fixture, got, flagged)
		}
	}
	pool, run := migrationUnderLoad(t, "safe.sql", 1_000_000)
	t.Log(run)
	if run.during == 0 {
		t.Errorf("no job finished during the migration: %s", run)
	}
	ctx := t.Context()
	var unfilled, valid, indexed int64
	if err := pool.QueryRow(ctx, `
		SELECT (SELECT count(*) FROM jobc_jobs_finished WHERE kind = 'old_report' AND note IS NULL),
		       (SELECT count(*) FROM pg_constraint WHERE conname = 'jobc_jobs_finished_note_short' AND convalidated
		          AND conrelid = 'jobc_jobs_finished'::regclass),
		       (SELECT count(*) FROM pg_index WHERE indexrelid = to_regclass('jobc_jobs_created_idx') AND indisvalid)`).
		Scan(&unfilled, &valid, &indexed); err != nil {
		t.Fatal(err)
	}
	if unfilled != 0 || valid != 1 || indexed != 1 {
		t.Errorf("after the migration: %d history rows without their note, constraint validated %d, index valid %d; want 0, 1, 1",
			unfilled, valid, indexed)
	}
}

// BenchmarkMigrationStall measures both fixtures on a million finished jobs: how long
// each migration took, and the longest a job enqueued meanwhile waited to finish
// (ms-worst-during), beside the longest before it (ms-worst-before). One migration per
// run, whatever b.N.
func BenchmarkMigrationStall(b *testing.B) {
	for _, fixture := range []string{"safe.sql", "naive.sql"} {
		b.Run(fixture, func(b *testing.B) {
			for b.Loop() {
				_, run := migrationUnderLoad(b, fixture, 1_000_000)
				b.ReportMetric(run.migration.Seconds(), "s-migration")
				b.ReportMetric(float64(run.worstBefore.Milliseconds()), "ms-worst-before")
				b.ReportMetric(float64(run.worstDuring.Milliseconds()), "ms-worst-during")
				b.ReportMetric(float64(run.during), "jobs-during")
				b.Log(run)
			}
		})
	}
}

// TestMigrationWaitsItsTurnForLocks: a migration whose table a long transaction holds
// waits at most migrate.LockTimeout at a time for its lock, so the statements that
// queue behind it go on after that long instead of waiting for the long transaction;
// it tries again until the transaction ends, and then applies.
func TestMigrationWaitsItsTurnForLocks(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	all := baselineAnd(t, schema.Migration{Version: 2, Name: "queue_note", SQL: "ALTER TABLE jobc_queues ADD COLUMN note text;"})
	report, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer report.Rollback(ctx) //nolint:errcheck // ended below
	if _, err := report.Exec(ctx, `SELECT count(*) FROM jobc_queues`); err != nil {
		t.Fatal(err)
	}

	// While the migration waits, readers of the table, each allowed twice the lock
	// timeout: without the timeout each would wait behind the migration until the
	// report ends.
	readers, stopReaders := context.WithCancel(ctx)
	var read sync.WaitGroup
	var reads atomic.Int64
	read.Go(func() {
		for readers.Err() == nil {
			conn, err := pool.Acquire(readers)
			if err != nil {
				return
			}
			_, err = conn.Exec(readers, fmt.Sprintf(`SET statement_timeout = %d; SELECT count(*) FROM jobc_queues`, 2*migrate.LockTimeout.Milliseconds()))
			conn.Release()
			if err != nil && readers.Err() == nil {
				t.Errorf("a reader behind the waiting migration: %v", err)
				return
			}
			reads.Add(1)
			time.Sleep(migrate.LockTimeout / 4)
		}
	})
	short, cancel := context.WithTimeout(ctx, 3*migrate.LockTimeout)
	_, err = migrate.Apply(short, pool, all)
	cancel()
	stopReaders()
	read.Wait()
	if err == nil || !strings.Contains(err.Error(), "while waiting for a lock") || !strings.Contains(err.Error(), "0002_queue_note") {
		t.Errorf("migrating beside an open transaction that holds its table, for %s: %v; want it to wait for the lock, named", 3*migrate.LockTimeout, err)
	}
	if reads.Load() < 3 {
		t.Errorf("%d reads of the table completed while the migration waited, want them to go on", reads.Load())
	}
	if err := report.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if done, err := migrate.Apply(ctx, pool, all); err != nil || len(done) != 1 {
		t.Fatalf("migrating after the transaction ended: %v, %v", done, err)
	}
}

// TestMigrationRebuildsAnInvalidIndex: a concurrent index build that failed leaves its
// index behind, invalid, and IF NOT EXISTS would keep it so for ever; the migration run
// again after the cause is mended drops it first and builds it valid.
func TestMigrationRebuildsAnInvalidIndex(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	all := baselineAnd(t, schema.Migration{Version: 2, Name: "unique_note", SQL: schema.NoTransaction + `
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS jobc_queues_note_idx ON jobc_queues (note);`})
	if _, err := pool.Exec(ctx, `ALTER TABLE jobc_queues ADD COLUMN note text;
		INSERT INTO jobc_queues (name, note) VALUES ('a', 'same'), ('b', 'same')`); err != nil {
		t.Fatal(err)
	}
	if _, err := migrate.Apply(ctx, pool, all); err == nil {
		t.Fatal("a unique index over two equal notes was built")
	}
	valid := func() string {
		var v string
		if err := pool.QueryRow(ctx, `SELECT coalesce((SELECT indisvalid::text FROM pg_index
			WHERE indexrelid = to_regclass('jobc_queues_note_idx')), 'none')`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := valid(); v != "false" {
		t.Fatalf("after the failed build the index is %s; want it left invalid", v)
	}
	if _, err := pool.Exec(ctx, `UPDATE jobc_queues SET note = name`); err != nil {
		t.Fatal(err)
	}
	if applied, err := migrate.Apply(ctx, pool, all); err != nil || len(applied) != 1 {
		t.Fatalf("the migration run again: applied %v, %v", applied, err)
	}
	if v := valid(); v != "true" {
		t.Errorf("after the migration ran again the index is %s; want it valid", v)
	}
}

// baselineAnd returns the baseline migration followed by m, the migration under test,
// numbered 2.
func baselineAnd(tb testing.TB, m schema.Migration) []schema.Migration {
	tb.Helper()
	all, err := schema.Migrations()
	if err != nil {
		tb.Fatal(err)
	}
	return append(all[:1:1], m)
}
