//go:build unix

package chaostest

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/internal/cmd/testworker/chaosjob"
)

// TestPausedWorkerReclaimsItsJob: a worker paused for longer than its lease (a VM
// pause, a long GC pause, a network partition; here SIGSTOP) loses its job to the
// rescuer, and on resuming claims it again while its first attempt is still
// running. That costs one attempt and one extra execution, nothing more: the new
// attempt's lease is extended like any other, and the job completes.
func TestPausedWorkerReclaimsItsJob(t *testing.T) {
	t.Parallel()
	pool, connString := newDB(t)
	const jobTime = 5 * time.Second
	ids := enqueue(t, pool, []chaosjob.Payload{{N: 1, SleepMS: jobTime.Milliseconds()}})
	id := ids[0]

	const lease = 1500 * time.Millisecond // heartbeats every 500ms
	a := startWorker(t, workerOpts{id: "paused-A", connString: connString, concurrency: 2, lease: lease,
		rescueInterval: 200 * time.Millisecond})
	// C serves another queue: it only rescues the expired lease while A is paused, so
	// that A, not another worker, takes the job back.
	c := startWorker(t, workerOpts{id: "paused-C", connString: connString, queue: "elsewhere", lease: lease,
		rescueInterval: 100 * time.Millisecond})
	waitFor(t, "worker A to run the job", within(processStart, a.opts.poll), func() (bool, string) {
		n := queryInt(t, pool, `SELECT count(*) FROM handled WHERE worker = 'paused-A'`)
		return n == 1, fmt.Sprintf("%d executions by A;%s", n, describeLeases(t, pool, ids))
	})
	if err := a.signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the job's lease to expire and be rescued", within(0, lease, c.opts.rescueInterval), func() (bool, string) {
		n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs WHERE id = $1 AND state = 'available'`, id)
		return n == 1, describeLeases(t, pool, ids)
	})
	if err := a.signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}

	// Stop waiting as soon as a second lease is lost: A is no longer paused.
	// A claims the job again at its next poll and runs it to the end, or loses a
	// second lease.
	waitFor(t, "the job to finish", within(0, a.opts.poll, jobTime, lease, c.opts.rescueInterval), func() (bool, string) {
		finished := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE id = $1`, id)
		lost := queryInt(t, pool, `SELECT coalesce(max(jsonb_array_length(errors)), 0) FROM (
			SELECT errors FROM jobc_jobs WHERE id = $1 UNION ALL SELECT errors FROM jobc_jobs_finished WHERE id = $1) e`, id)
		return finished == 1 || lost > 1, fmt.Sprintf("%s %s", stateCounts(t, pool), describeLeases(t, pool, ids))
	})
	info := describeJobs(t, pool, ids)
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE id = $1 AND state = 'completed'`, id); n != 1 {
		t.Errorf("the job did not complete:%s", info)
	}
	if n := queryInt(t, pool, `SELECT coalesce(max(jsonb_array_length(errors)), 0) FROM (
		SELECT errors FROM jobc_jobs WHERE id = $1 UNION ALL SELECT errors FROM jobc_jobs_finished WHERE id = $1) e`, id); n != 1 {
		t.Errorf("the job lost its lease %d times, want once (during the pause):%s", n, info)
	}
}
