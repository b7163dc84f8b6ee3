//go:build unix

package chaostest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/cmd/testworker/chaosjob"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// TestKilledWorkerJobsAreRescued: the jobs of a worker killed with SIGKILL are rescued
// once its leases expire and completed by another worker; none is lost, and each
// records the lost attempt.
func TestKilledWorkerJobsAreRescued(t *testing.T) {
	t.Parallel()
	pool, connString := newDB(t)
	const held, jobs = 4, 6
	payloads := make([]chaosjob.Payload, jobs)
	for i := range payloads {
		payloads[i] = chaosjob.Payload{N: int64(i), SleepMS: 60_000}
	}
	ids := enqueue(t, pool, payloads)

	a := startWorker(t, workerOpts{id: "kill-A", connString: connString, concurrency: held, lease: 2 * time.Second})
	waitFor(t, "worker A to hold its jobs", within(processStart, a.opts.poll), func() (bool, string) {
		running := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs WHERE state = 'running' AND lease_owner = 'kill-A'`)
		started := queryInt(t, pool, `SELECT count(*) FROM handled WHERE worker = 'kill-A'`)
		return running == held && started == held, fmt.Sprintf("%d started:%s", started, describeLeases(t, pool, ids))
	})
	heldIDs := queryIDs(t, pool, `SELECT id FROM jobc_jobs WHERE state = 'running' AND lease_owner = 'kill-A' ORDER BY id`)
	a.kill(t)

	b := startWorker(t, workerOpts{id: "kill-B", connString: connString, concurrency: 4,
		rescueInterval: 200 * time.Millisecond, maxSleep: 20 * time.Millisecond})
	// A's leases run out, B's rescuer returns the jobs, B claims and finishes them.
	waitFor(t, "every job to complete", within(processStart, a.opts.lease, b.opts.rescueInterval, b.opts.poll, jobs*b.opts.maxSleep), func() (bool, string) {
		n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE id = ANY($1) AND state = 'completed'`, ids)
		return n == jobs, stateCounts(t, pool)
	})
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs`); n != 0 {
		t.Errorf("%d jobs left unfinished", n)
	}

	isHeld := map[int64]bool{}
	for _, id := range heldIDs {
		isHeld[id] = true
	}
	for _, id := range ids {
		info, err := runtime.GetJob(t.Context(), pool, id)
		if err != nil {
			t.Fatal(err)
		}
		if !isHeld[id] {
			if info.Attempt != 1 || len(info.Errors) != 0 {
				t.Errorf("job %d (never held by A): attempt %d, errors %+v; want attempt 1 without errors", id, info.Attempt, info.Errors)
			}
			continue
		}
		if info.Attempt != 2 {
			t.Errorf("rescued job %d completed on attempt %d, want 2 (the killed attempt counts)", id, info.Attempt)
		}
		if len(info.Errors) != 1 {
			t.Errorf("rescued job %d has errors %+v, want exactly the lease_expired one", id, info.Errors)
			continue
		}
		if e := info.Errors[0]; e.Class != "lease_expired" || e.Worker != "kill-A" || e.Attempt != 1 {
			t.Errorf("rescued job %d: error %+v, want class lease_expired, worker kill-A, attempt 1", id, e)
		}
		if n := queryInt(t, pool, `SELECT count(*) FROM handled_done WHERE job_id = $1 AND worker = 'kill-B' AND attempt = 2`, id); n != 1 {
			t.Errorf("rescued job %d: %d successful executions by B on attempt 2, want 1", id, n)
		}
	}
	if _, err := b.stop(b.opts.stopSlack()); err != nil {
		t.Error(err)
	}
}

// TestPostgresRestartMidRun: the server restarts (immediate shutdown, crash recovery)
// while some jobs are completed, some running and some waiting. The worker processes
// reconnect by themselves and every job completes; completed jobs do not run again,
// waiting jobs survive, and running jobs are recovered (at least once).
func TestPostgresRestartMidRun(t *testing.T) {
	t.Parallel()
	cluster, pool, connString := newCluster(t)

	const short, long, waiting = 10, 4, 10
	const shortJob, longJob, waitingJob = 20 * time.Millisecond, 4 * time.Second, 100 * time.Millisecond
	var payloads []chaosjob.Payload
	add := func(n int, sleepMS int64) {
		for range n {
			payloads = append(payloads, chaosjob.Payload{N: int64(len(payloads)), SleepMS: sleepMS})
		}
	}
	// Claims take jobs in id order: the short ones first, then the long ones fill all
	// four slots and the rest wait behind them.
	add(short, shortJob.Milliseconds())
	add(long, longJob.Milliseconds())
	add(waiting, waitingJob.Milliseconds())
	ids := enqueue(t, pool, payloads)

	var workers []*workerProc
	for _, id := range []string{"pg-A", "pg-B"} {
		workers = append(workers, startWorker(t, workerOpts{id: id, connString: connString, concurrency: 2,
			lease: 5 * time.Second, rescueInterval: 500 * time.Millisecond}))
	}
	o := workers[0].opts
	waitFor(t, "short jobs completed and long ones running", within(processStart, o.poll, short*shortJob), func() (bool, string) {
		done := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE state = 'completed'`)
		running := queryInt(t, pool, `SELECT count(*) FROM handled h JOIN jobc_jobs j ON j.id = h.job_id WHERE j.state = 'running'`)
		return done == short && running == long, stateCounts(t, pool)
	})
	completedBefore := queryIDs(t, pool, `SELECT id FROM jobc_jobs_finished ORDER BY id`)
	runningBefore := queryIDs(t, pool, `SELECT id FROM jobc_jobs WHERE state = 'running' ORDER BY id`)
	waitingBefore := queryIDs(t, pool, `SELECT id FROM jobc_jobs WHERE state = 'available' ORDER BY id`)
	t.Logf("at the restart: %d completed, %d running, %d waiting", len(completedBefore), len(runningBefore), len(waitingBefore))
	if len(runningBefore) == 0 || len(waitingBefore) == 0 {
		t.Fatalf("want running and waiting jobs at the restart; %s", stateCounts(t, pool))
	}

	restarted := time.Now()
	if err := cluster.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Logf("restart took %s", time.Since(restarted).Round(time.Millisecond))
	pool.Reset() // drop the test's own connections, which the restart cut

	// Running jobs finish (or their leases run out and they are rescued and run again),
	// then the waiting ones run; reconnecting is retried at least every poll.
	waitFor(t, "every job to complete after the restart", within(0, o.lease, o.rescueInterval, longJob, waiting*waitingJob, o.poll, o.statementTimeout), func() (bool, string) {
		n, err := countCompleted(t.Context(), pool, ids)
		if err != nil {
			return false, err.Error() // the test's own pool reconnects too
		}
		return n == len(ids), stateCounts(t, pool)
	})
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs`); n != 0 {
		t.Errorf("%d jobs left unfinished", n)
	}
	for _, id := range completedBefore {
		if n := queryInt(t, pool, `SELECT count(*) FROM handled WHERE job_id = $1`, id); n != 1 {
			t.Errorf("job %d, completed before the restart, was executed %d times", id, n)
		}
	}
	for _, id := range waitingBefore {
		if n := queryInt(t, pool, `SELECT count(*) FROM handled_done WHERE job_id = $1`, id); n < 1 {
			t.Errorf("job %d, waiting at the restart, never succeeded", id)
		}
	}
	for _, id := range runningBefore {
		runs := queryInt(t, pool, `SELECT count(*) FROM handled WHERE job_id = $1`, id)
		t.Logf("job %d, running at the restart: executed %d times;%s", id, runs, describeJobs(t, pool, []int64{id}))
	}
	for _, w := range workers {
		if w.hasExited() {
			t.Errorf("worker %s %s during the restart", w.id, w.exitDescription())
			continue
		}
		if !strings.Contains(w.stderr.String(), "lost its connection") {
			t.Errorf("worker %s did not log losing its notification connection: did the restart reach it?", w.id)
		}
		if _, err := w.stop(w.opts.stopSlack()); err != nil {
			t.Error(err)
		}
	}
}

// newCluster starts a PostgreSQL cluster of the test's own and sets up its postgres
// database for worker processes. It returns the cluster, a pool on it and the
// connection string for the processes.
func newCluster(t *testing.T) (*pgtest.Cluster, *pgxpool.Pool, string) {
	t.Helper()
	cluster, err := pgtest.StartCluster(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := cluster.Destroy(ctx); err != nil {
			t.Error(err)
		}
	})
	connString := cluster.ConnString()
	pool, err := pgxpool.New(t.Context(), connString)
	if err != nil {
		t.Fatalf("connect to the test's cluster: %v", err)
	}
	t.Cleanup(pool.Close)
	if err := setupDB(t.Context(), pool); err != nil {
		t.Fatalf("set up the test's cluster: %v", err)
	}
	return cluster, pool, connString
}

// countCompleted counts the given jobs that are completed.
func countCompleted(ctx context.Context, pool *pgxpool.Pool, ids []int64) (int, error) {
	var n int
	err := pool.QueryRow(ctx, `SELECT count(*) FROM jobc_jobs_finished WHERE id = ANY($1) AND state = 'completed'`, ids).Scan(&n)
	return n, err
}
