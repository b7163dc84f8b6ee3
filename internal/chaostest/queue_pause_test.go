//go:build unix

package chaostest

import (
	"fmt"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/internal/cmd/testworker/chaosjob"
	"github.com/jobc-dev/jobc/runtime"
)

// TestPauseQueueAcrossWorkerProcesses: with three worker processes serving a queue,
// no claim that starts after PauseQueue returns takes a job of the queue — a job
// already running finishes — and the pause holds across a worker's restart;
// ResumeQueue gets the waiting jobs worked at once.
func TestPauseQueueAcrossWorkerProcesses(t *testing.T) {
	t.Parallel()
	pool, connString := newDB(t)
	ctx := t.Context()
	ids := []string{"qpause-A", "qpause-B", "qpause-C"}
	workers := make([]*workerProc, len(ids))
	for i, id := range ids {
		workers[i] = startWorker(t, workerOpts{id: id, connString: connString})
	}
	poll := workers[0].opts.poll
	// Every worker claims: enough slow jobs that all three get some.
	warm := make([]chaosjob.Payload, 12)
	for i := range warm {
		warm[i] = chaosjob.Payload{N: int64(i), SleepMS: 300}
	}
	warmIDs := enqueue(t, pool, warm)
	waitFor(t, "every worker to run a job", within(processStart, poll), func() (bool, string) {
		n := queryInt(t, pool, `SELECT count(DISTINCT worker) FROM handled`)
		return n == 3, fmt.Sprintf("%d workers ran jobs; %s", n, stateCounts(t, pool))
	})

	// A long job starts before the pause and must finish during it.
	long := enqueue(t, pool, []chaosjob.Payload{{N: 100, SleepMS: (4 * poll).Milliseconds()}})[0]
	waitFor(t, "the long job to start", within(0, poll), func() (bool, string) {
		n := queryInt(t, pool, `SELECT count(*) FROM handled WHERE job_id = $1`, long)
		return n == 1, describeJobs(t, pool, []int64{long})
	})
	if err := runtime.PauseQueue(ctx, pool, chaosjob.DefaultQueue); err != nil {
		t.Fatal(err)
	}
	paused := time.Now() // the server's clock too: it runs on this machine
	held := make([]chaosjob.Payload, 20)
	for i := range held {
		held[i] = chaosjob.Payload{N: int64(200 + i)}
	}
	heldIDs := enqueue(t, pool, held)
	// claimedLate counts claims that started after PauseQueue returned: every claim
	// statement reads the pause, whatever its worker has heard of it.
	claimedLate := func() (int, string) {
		n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs_all WHERE attempted_at > $1`, paused)
		return n, fmt.Sprintf("%d claims started after PauseQueue returned; %s", n, stateCounts(t, pool))
	}
	waitFor(t, "the long job to finish while the queue is paused", within(0, 4*poll, poll), func() (bool, string) {
		n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE id = $1 AND state = 'completed'`, long)
		return n == 1, describeJobs(t, pool, []int64{long})
	})
	// Several poll intervals: a worker that missed the notification and the poll would
	// have claimed by now.
	time.Sleep(within(0, poll))
	if n, status := claimedLate(); n != 0 {
		t.Fatalf("paused queue: %s", status)
	}

	// Restart worker A: its first claim must already see the pause.
	if _, err := workers[0].stop(workers[0].opts.stopSlack()); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	workers[0] = startWorker(t, workerOpts{id: ids[0], connString: connString})
	waitFor(t, "the restarted worker to register", within(processStart, poll), func() (bool, string) {
		n := queryInt(t, pool, `SELECT count(*) FROM jobc_workers WHERE id = $1 AND started_at > $2`, ids[0], restarted.Add(-time.Second))
		return n == 1, fmt.Sprintf("%d registrations of %s since the restart", n, ids[0])
	})
	time.Sleep(within(0, poll))
	if n, status := claimedLate(); n != 0 {
		t.Fatalf("paused queue after a worker restart: %s", status)
	}
	// Every job enqueued during the pause waits untouched.
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs WHERE id = ANY($1) AND state = 'available' AND attempt = 0`, heldIDs); n != len(heldIDs) {
		t.Fatalf("%d of %d jobs enqueued during the pause are waiting untouched; %s", n, len(heldIDs), stateCounts(t, pool))
	}

	if err := runtime.ResumeQueue(ctx, pool, chaosjob.DefaultQueue); err != nil {
		t.Fatal(err)
	}
	resumed := time.Now()
	// At once: the notification wakes every worker, so the jobs take about their own
	// run time, not a poll; the bound allows the poll the notification replaces.
	waitFor(t, "the jobs enqueued during the pause to complete", within(0, poll), func() (bool, string) {
		n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE id = ANY($1) AND state = 'completed'`, heldIDs)
		return n == len(heldIDs), fmt.Sprintf("%d of %d completed; %s", n, len(heldIDs), stateCounts(t, pool))
	})
	t.Logf("%d jobs completed %s after ResumeQueue (poll interval %s)", len(heldIDs), time.Since(resumed), poll)
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE id = ANY($1) AND state = 'completed'`, warmIDs); n != len(warmIDs) {
		t.Errorf("%d of %d jobs from before the pause completed; %s", n, len(warmIDs), stateCounts(t, pool))
	}
	for _, w := range workers {
		if _, err := w.stop(w.opts.stopSlack()); err != nil {
			t.Error(err)
		}
	}
}
