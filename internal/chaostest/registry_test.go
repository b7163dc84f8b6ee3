//go:build unix

package chaostest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/cmd/testworker/chaosjob"
)

// TestWorkerRegistry: a running worker process is listed in jobc_workers with its
// queues and the kinds it decodes, and removes itself when it stops.
func TestWorkerRegistry(t *testing.T) {
	t.Parallel()
	pool, connString := newDB(t)
	w := startWorker(t, workerOpts{id: "reg-A", connString: connString})

	type entry struct {
		pid    int
		queues []string
		kinds  map[string][2]int
	}
	var got entry
	waitFor(t, "the worker to register", within(processStart), func() (bool, string) {
		var kinds []byte
		err := pool.QueryRow(t.Context(), `SELECT pid, queues, kinds FROM jobc_workers WHERE id = 'reg-A'`).Scan(&got.pid, &got.queues, &kinds)
		if err != nil {
			return false, err.Error()
		}
		if err := json.Unmarshal(kinds, &got.kinds); err != nil {
			t.Fatalf("kinds %s: %v", kinds, err)
		}
		return true, ""
	})
	want := entry{pid: w.pid(), queues: []string{chaosjob.DefaultQueue}, kinds: map[string][2]int{chaosjob.Kind: {1, 1}, chaosjob.StepKind: {1, 1}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("jobc_workers entry %+v, want %+v", got, want)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_workers`); n != 1 {
		t.Errorf("%d workers registered, want 1", n)
	}

	if _, err := w.stop(w.opts.stopSlack()); err != nil {
		t.Fatal(err)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_workers`); n != 0 {
		t.Errorf("%d workers still registered after the worker exited", n)
	}
}

// TestWorkerRegistryWithMixedLeases: a healthy worker stays listed in jobc_workers
// while another worker, configured with a much shorter lease, runs its pruner.
func TestWorkerRegistryWithMixedLeases(t *testing.T) {
	t.Parallel()
	pool, connString := newDB(t)
	// A heartbeats every lease/3 = 2s. B forgets workers silent for 10 × its lease =
	// 1s, and looks for them every 200ms.
	const leaseA, leaseB = 6 * time.Second, 100 * time.Millisecond
	a := startWorker(t, workerOpts{id: "mixed-A", connString: connString, lease: leaseA})
	startWorker(t, workerOpts{id: "mixed-B", connString: connString, lease: leaseB, pruneInterval: 200 * time.Millisecond})
	waitFor(t, "both workers to register", within(processStart), func() (bool, string) {
		n := queryInt(t, pool, `SELECT count(*) FROM jobc_workers`)
		return n == 2, fmt.Sprintf("%d registered", n)
	})
	// Watch A for longer than its heartbeat interval plus B's pruning threshold.
	stayRegistered(t, pool, a, leaseA/3+10*leaseB+time.Second)
}

// TestPausedWorkerReturnsToTheRegistry: a worker that was silent long enough for
// another worker to forget it (a paused VM, a long GC pause or a network partition;
// here SIGSTOP) is listed in jobc_workers again once it resumes and heartbeats.
func TestPausedWorkerReturnsToTheRegistry(t *testing.T) {
	t.Parallel()
	pool, connString := newDB(t)
	const lease = 300 * time.Millisecond // heartbeats every 100ms; pruned after 3s of silence
	a := startWorker(t, workerOpts{id: "pause-A", connString: connString, lease: lease})
	waitFor(t, "worker A to register", within(processStart), func() (bool, string) {
		return registered(t, pool, a.id), registryState(t, pool)
	})
	if err := a.signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Its last heartbeat (every lease/3) ages past the threshold; only the checks are
	// subject to slowdown.
	waitFor(t, "worker A to look dead", within(10*lease+200*time.Millisecond, lease), func() (bool, string) {
		silent := queryInt(t, pool, `SELECT count(*) FROM jobc_workers
			WHERE id = $1 AND heartbeat_at < now() - make_interval(secs => $2)`, a.id, (10*lease + 200*time.Millisecond).Seconds())
		return silent == 1, registryState(t, pool)
	})
	// B serves another queue, so that only A can run the job below.
	b := startWorker(t, workerOpts{id: "pause-B", connString: connString, queue: "elsewhere", lease: lease,
		pruneInterval: 200 * time.Millisecond})
	waitFor(t, "worker B to forget A", within(processStart, b.opts.pruneInterval), func() (bool, string) {
		return !registered(t, pool, a.id), registryState(t, pool)
	})
	if err := a.signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	resumed := time.Now()
	// Proof of life: A runs a job.
	ids := enqueue(t, pool, []chaosjob.Payload{{N: 1}})
	// A's connections may have to be made again, each within a StatementTimeout.
	waitFor(t, "worker A, resumed, to run a job", within(0, a.opts.poll, a.opts.statementTimeout, a.opts.lease), func() (bool, string) {
		n := queryInt(t, pool, `SELECT count(*) FROM handled_done WHERE job_id = $1 AND worker = $2`, ids[0], a.id)
		return n == 1, stateCounts(t, pool)
	})
	waitFor(t, "worker A, resumed and working, to be listed again", within(0, lease/3, a.opts.statementTimeout), func() (bool, string) {
		return registered(t, pool, a.id), fmt.Sprintf("not listed %s after it resumed (it heartbeats every %s)",
			time.Since(resumed).Round(time.Millisecond), lease/3)
	})
	if _, err := a.stop(a.opts.stopSlack()); err != nil {
		t.Error(err)
	}
}

// registryState lists the registered workers and the age of each one's heartbeat, for
// waitFor.
func registryState(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	var s string
	err := pool.QueryRow(t.Context(), `SELECT coalesce(string_agg(format('%s (heartbeat %s ago)', id, now() - heartbeat_at), ', ' ORDER BY id), 'none')
		FROM jobc_workers`).Scan(&s)
	if err != nil {
		return "registry: " + err.Error()
	}
	return "registered: " + s
}

// registered reports whether worker id is listed in jobc_workers.
func registered(t *testing.T, pool *pgxpool.Pool, id string) bool {
	t.Helper()
	return queryInt(t, pool, `SELECT count(*) FROM jobc_workers WHERE id = $1`, id) == 1
}

// stayRegistered checks every 50ms for d that w, still running, is listed in
// jobc_workers, and fails the test at the first time it is not.
func stayRegistered(t *testing.T, pool *pgxpool.Pool, w *workerProc, d time.Duration) {
	t.Helper()
	began := time.Now()
	for time.Since(began) < d {
		if w.hasExited() {
			t.Fatalf("worker %s %s", w.id, w.exitDescription())
		}
		if !registered(t, pool, w.id) {
			t.Fatalf("worker %s, running, is missing from jobc_workers (%s into a %s watch)",
				w.id, time.Since(began).Round(time.Millisecond), d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
