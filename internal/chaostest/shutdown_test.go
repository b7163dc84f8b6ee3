//go:build unix

package chaostest

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/internal/cmd/testworker/chaosjob"
)

// TestGracefulShutdownReleasesLeases: a worker told to stop waits its grace period for
// running handlers, then cancels them and gives their jobs back at once, without
// counting the attempt; another worker then completes them.
func TestGracefulShutdownReleasesLeases(t *testing.T) {
	t.Parallel()
	pool, connString := newDB(t)
	const held, jobs = 3, 5
	payloads := make([]chaosjob.Payload, jobs)
	for i := range payloads {
		payloads[i] = chaosjob.Payload{N: int64(i), SleepMS: 60_000}
	}
	ids := enqueue(t, pool, payloads)

	const grace = 500 * time.Millisecond
	a := startWorker(t, workerOpts{id: "grace-A", connString: connString, concurrency: held, grace: grace})
	waitFor(t, "worker A to run its jobs", within(processStart, a.opts.poll), func() (bool, string) {
		running := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs WHERE state = 'running' AND lease_owner = 'grace-A'`)
		started := queryInt(t, pool, `SELECT count(*) FROM handled WHERE worker = 'grace-A'`)
		return running == held && started == held, fmt.Sprintf("%d running with lease_owner grace-A, %d started", running, started)
	})
	heldIDs := queryIDs(t, pool, `SELECT id FROM jobc_jobs WHERE state = 'running' AND lease_owner = 'grace-A' ORDER BY id`)

	took, err := a.stop(a.opts.stopSlack())
	if err != nil {
		t.Fatal(err)
	}
	if took < grace {
		t.Errorf("worker A exited %s after SIGTERM, before its grace period of %s was over", took, grace)
	}
	t.Logf("worker A exited %s after SIGTERM (grace %s)", took.Round(time.Millisecond), grace)

	// At once, with no worker running: every job is available again, as if never tried.
	released := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs WHERE id = ANY($1) AND state = 'available'
		AND attempt = 0 AND errors = '[]' AND lease_owner IS NULL AND lease_expires_at IS NULL`, ids)
	if released != jobs {
		t.Fatalf("%d of %d jobs (%d of them run by A) are available with attempt 0 and no error:%s", released, jobs, held, describeJobs(t, pool, ids))
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM handled_done WHERE worker = 'grace-A'`); n != 0 {
		t.Errorf("worker A completed %d jobs of 60s within its grace period of %s", n, grace)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_workers WHERE id = 'grace-A'`); n != 0 {
		t.Errorf("worker A still registered after it exited")
	}

	b := startWorker(t, workerOpts{id: "grace-B", connString: connString, concurrency: 4, maxSleep: 20 * time.Millisecond})
	waitFor(t, "worker B to complete every job", within(processStart, b.opts.poll, jobs*b.opts.maxSleep), func() (bool, string) {
		n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE id = ANY($1) AND state = 'completed'`, ids)
		return n == jobs, stateCounts(t, pool)
	})
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE id = ANY($1) AND attempt = 1 AND errors = '[]'`, ids); n != jobs {
		t.Errorf("%d of %d jobs completed on attempt 1 without errors; %s", n, jobs, describeJobs(t, pool, ids))
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM handled_done WHERE job_id = ANY($1) AND worker = 'grace-B' AND attempt = 1`, heldIDs); n != held {
		t.Errorf("B completed %d of the %d released jobs on attempt 1", n, held)
	}
	if _, err := b.stop(b.opts.stopSlack()); err != nil {
		t.Error(err)
	}
}

// TestGracefulShutdownKeepsLeasesDuringGrace: handlers that finish within the grace
// period complete their jobs, even when the grace period is longer than the lease: the
// worker is alive and must keep extending the leases of the jobs it still runs, or
// another worker rescues them and runs them a second time meanwhile.
func TestGracefulShutdownKeepsLeasesDuringGrace(t *testing.T) {
	t.Parallel()
	pool, connString := newDB(t)
	const jobs = 2
	const lease, grace, jobTime = 1500 * time.Millisecond, 8 * time.Second, 4 * time.Second
	payloads := make([]chaosjob.Payload, jobs)
	for i := range payloads {
		payloads[i] = chaosjob.Payload{N: int64(i), SleepMS: jobTime.Milliseconds()}
	}
	ids := enqueue(t, pool, payloads)

	a := startWorker(t, workerOpts{id: "keep-A", connString: connString, concurrency: jobs, lease: lease, grace: grace})
	waitFor(t, "worker A to run its jobs", within(processStart, a.opts.poll), func() (bool, string) {
		n := queryInt(t, pool, `SELECT count(*) FROM handled WHERE worker = 'keep-A'`)
		return n == jobs, fmt.Sprintf("%d of %d started", n, jobs)
	})
	// B is there to rescue leases that expire; it has no free jobs to take.
	b := startWorker(t, workerOpts{id: "keep-B", connString: connString, concurrency: jobs, lease: lease,
		rescueInterval: 100 * time.Millisecond, maxSleep: 20 * time.Millisecond})
	waitFor(t, "worker B to start", within(processStart), func() (bool, string) {
		return queryInt(t, pool, `SELECT count(*) FROM jobc_workers WHERE id = 'keep-B'`) == 1, registryState(t, pool)
	})

	took, err := a.stop(a.opts.stopSlack())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("worker A exited %s after SIGTERM (lease %s, grace %s)", took.Round(time.Millisecond), lease, grace)
	// A finished them in its grace period; should it not have, B rescues and runs them.
	waitFor(t, "every job to complete", within(0, lease, b.opts.rescueInterval, b.opts.poll, b.opts.maxSleep), func() (bool, string) {
		n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE id = ANY($1) AND state = 'completed'`, ids)
		return n == jobs, stateCounts(t, pool)
	})
	if n := queryInt(t, pool, `SELECT count(*) FROM handled_done WHERE job_id = ANY($1) AND worker = 'keep-A' AND attempt = 1`, ids); n != jobs {
		t.Errorf("worker A finished %d of its %d jobs within its grace period, want all", n, jobs)
	}
	if twice := queryIDs(t, pool, `SELECT job_id FROM handled GROUP BY job_id HAVING count(*) > 1 ORDER BY 1`); len(twice) > 0 {
		t.Errorf("jobs %v ran again while worker A was still running them in its grace period:%s", twice, describeJobs(t, pool, twice))
	}
	if _, err := b.stop(b.opts.stopSlack()); err != nil {
		t.Error(err)
	}
}

// TestShutdownDuringBlockedClaim: a worker stopped while its claim waits for a lock on
// jobc_jobs (as during a migration that alters the table, a common moment for a
// rolling deploy to stop workers) leaves no job claimed in its name after it has
// exited. Such jobs would sit in running until their leases expire and then be retried
// with a lease_expired error: an attempt burnt by a graceful shutdown. (The claim's
// context is cancelled at shutdown; pgx then sends a cancel request for the statement,
// which is what keeps it from committing once the lock is granted.)
func TestShutdownDuringBlockedClaim(t *testing.T) {
	t.Parallel()
	pool, connString := newDB(t)
	const jobs = 3
	payloads := make([]chaosjob.Payload, jobs)
	for i := range payloads {
		payloads[i] = chaosjob.Payload{N: int64(i), SleepMS: 10}
	}
	ids := enqueue(t, pool, payloads)

	// Hold a lock that lets readers in but makes every UPDATE of jobc_jobs wait.
	tx, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(t.Context())) }()
	var lockerPID int
	if err := tx.QueryRow(t.Context(), `SELECT pg_backend_pid()`).Scan(&lockerPID); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(t.Context(), `LOCK TABLE jobc_jobs IN SHARE MODE`); err != nil {
		t.Fatal(err)
	}

	const grace = time.Second
	a := startWorker(t, workerOpts{id: "block-A", connString: connString, grace: grace, lease: 30 * time.Second})
	var claimPIDs []int64
	waitFor(t, "worker A's claim to wait for the lock", within(processStart, a.opts.poll), func() (bool, string) {
		claimPIDs = queryIDs(t, pool, `SELECT pid FROM pg_stat_activity
			WHERE $1 = ANY(pg_blocking_pids(pid)) AND query LIKE '%attempt = j.attempt + 1%'`, lockerPID)
		return len(claimPIDs) > 0, "no claim blocked by the lock"
	})

	if err := a.signal(syscall.SIGTERM); err != nil {
		t.Fatalf("signal worker A: %v", err)
	}
	// A worker may give up its claim at once or wait for it (and then release what it
	// got); either is fine, as long as nothing stays claimed in its name.
	if _, exited := a.wait(grace + a.opts.stopSlack()); exited {
		t.Logf("worker A exited while its claim still waited for the lock")
	}
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if exitErr, exited := a.wait(grace + a.opts.stopSlack()); !exited || exitErr != nil {
		t.Fatalf("worker A after SIGTERM: exited %v, %v; want exit status 0", exited, exitErr)
	}
	waitFor(t, "worker A's claim statements to end", within(0, a.opts.statementTimeout), func() (bool, string) {
		n := queryInt(t, pool, `SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1)`, claimPIDs)
		return n == 0, fmt.Sprintf("%d of the backends %v still there", n, claimPIDs)
	})

	if orphans := queryIDs(t, pool, `SELECT id FROM jobc_jobs WHERE id = ANY($1) AND state = 'running' ORDER BY id`, ids); len(orphans) > 0 {
		t.Errorf("worker A has exited, yet %d jobs are running in its name until their leases expire:%s",
			len(orphans), describeLeases(t, pool, orphans))
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs WHERE id = ANY($1) AND state = 'available' AND attempt = 0`, ids); n != jobs {
		t.Errorf("%d of %d jobs available with attempt 0 after the shutdown; %s", n, jobs, stateCounts(t, pool))
	}
}
