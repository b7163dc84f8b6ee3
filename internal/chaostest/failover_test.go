//go:build unix

package chaostest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/cmd/testworker/chaosjob"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// TestFailoverFollowsThePrimary: two workers connect with a multi-host connection
// string (primary, standby; target_session_attrs=read-write). Mid-run the streaming
// standby is promoted, and the old primary is either demoted to read-only with every
// connection still open — the case in which every statement fails with SQLSTATE 25006
// and nothing ever breaks the connections — or stopped (its sessions end with 57P01,
// new connections are refused). The workers drop their connections, find the new
// primary and finish every job there: none lost, none run more than twice. Their
// listeners follow too: with a one-minute poll interval, jobs enqueued after the
// failover are picked up at once, by notification.
func TestFailoverFollowsThePrimary(t *testing.T) {
	t.Parallel()
	for _, stop := range []bool{false, true} {
		name := "read-only"
		if stop {
			name = "stopped"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testFailover(t, stop)
		})
	}
}

func testFailover(t *testing.T, stopOld bool) {
	ctx := t.Context()
	primary, primaryPool, _ := newCluster(t)
	standby, err := primary.StartStandby(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := standby.Destroy(dctx); err != nil {
			t.Error(err)
		}
	})

	// Every job is enqueued, and replicated, before the failover: then the new primary
	// must end with all of them completed, and the test's own record of executions
	// (in memory, which no failover rolls back) tells how often each ran.
	const jobs, jobTime = 300, 30 * time.Millisecond
	payloads := make([]chaosjob.Payload, jobs)
	for i := range payloads {
		payloads[i] = chaosjob.Payload{N: int64(i), SleepMS: jobTime.Milliseconds()}
	}
	ids := enqueue(t, primaryPool, payloads)
	waitReplayed(t, primary, standby)

	const workers, slots = 2, 4
	cfg := runtime.Config{
		Queues:         map[string]runtime.QueueConfig{chaosjob.DefaultQueue: {MaxWorkers: slots}},
		LeaseDuration:  2 * time.Second,
		RescueInterval: 250 * time.Millisecond,
		PollInterval:   time.Minute, // only notifications can make pickup fast
		ShutdownGrace:  2 * time.Second,
	}
	follow := pgtest.FollowConnString(primary, standby)
	runs := newExecutions()
	var ws []*inprocWorker
	for i := range workers {
		ws = append(ws, startInproc(t, inprocOpts{id: fmt.Sprintf("failover-%c", 'A'+i), connString: follow, cfg: cfg, runs: runs}))
	}
	waitFor(t, "a third of the jobs to run on the old primary", within(workerStart, jobs/3*jobTime), func() (bool, string) {
		n := runs.total()
		return n >= jobs/3, fmt.Sprintf("%d executions; %s", n, stateCounts(t, primaryPool))
	})

	if stopOld {
		// A fast shutdown sends the standby all WAL, up to its shutdown checkpoint,
		// before it ends: no committed write is lost.
		primaryPool.Close()
		if err := primary.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	} else {
		// Demote: new transactions on the old primary are read-only, in the sessions
		// that are open too. Once no session holds a transaction that may still write,
		// and the standby has replayed everything, promote it: no committed write is
		// lost.
		if _, err := primaryPool.Exec(ctx, "ALTER SYSTEM SET default_transaction_read_only = on"); err != nil {
			t.Fatal(err)
		}
		if _, err := primaryPool.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "writing transactions on the old primary to end", within(0, cfg.LeaseDuration), func() (bool, string) {
			n := queryInt(t, primaryPool, `SELECT count(*) FROM pg_stat_activity WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid()`)
			return n == 0, fmt.Sprintf("%d sessions hold a transaction id", n)
		})
		waitReplayed(t, primary, standby)
	}
	ranBefore := runs.total()
	if err := standby.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("failover after %d executions", ranBefore)

	newPool, err := pgxpool.New(ctx, standby.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(newPool.Close)
	// Recovery takes a failed statement, a reconnect that may find no primary yet
	// (the listener retries within 5s and wakes every queue when it is back) and, for
	// jobs whose outcome was lost, a lease expiry and a rescue.
	waitFor(t, "every job to complete on the new primary", within(0, listenerBackoffMax, 2*cfg.LeaseDuration, cfg.RescueInterval, jobs*jobTime/slots), func() (bool, string) {
		n := queryInt(t, newPool, `SELECT count(*) FROM jobc_jobs_finished WHERE id = ANY($1) AND state = 'completed'`, ids)
		return n == jobs, fmt.Sprintf("%d of %d completed; %s", n, jobs, stateCounts(t, newPool))
	})
	for _, w := range ws {
		if w.log.count("reconnecting all of the worker's connections") == 0 {
			t.Errorf("worker %s never logged that it dropped its connections", w.id)
		}
	}
	if !stopOld {
		// No connection of the workers stays on the old primary: not their own pools',
		// not their listeners', not their application pools' (FollowPrimary).
		waitFor(t, "the workers to leave the old primary", within(0, cfg.LeaseDuration), func() (bool, string) {
			n := queryInt(t, primaryPool, `SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'failover-%'`)
			return n == 0, fmt.Sprintf("%d connections of the workers on the old primary", n)
		})
	}

	// The listeners follow: once both workers sleep on the new primary, each job
	// enqueued there must be picked up long before the next poll.
	waitFor(t, "both workers to wait for notifications on the new primary", within(0, listenerBackoffMax, cfg.LeaseDuration), func() (bool, string) {
		n := queryInt(t, newPool, `SELECT count(*) FROM jobc_sleepers WHERE queue = $1`, chaosjob.DefaultQueue)
		return n == workers, fmt.Sprintf("%d sleeping workers", n)
	})
	var late []int64
	for i := range 5 {
		began := time.Now()
		id := enqueue(t, newPool, []chaosjob.Payload{{N: int64(jobs + i)}})[0]
		waitFor(t, fmt.Sprintf("job %d, enqueued after the failover, to complete before the poll interval", id), cfg.PollInterval/2, func() (bool, string) {
			n := queryInt(t, newPool, `SELECT count(*) FROM jobc_jobs_finished WHERE id = $1 AND state = 'completed'`, id)
			return n == 1, describeLeases(t, newPool, []int64{id})
		})
		t.Logf("job %d enqueued after the failover completed in %s", id, time.Since(began).Round(time.Millisecond))
		late = append(late, id)
	}

	if n := queryInt(t, newPool, `SELECT count(*) FROM jobc_jobs`); n != 0 {
		t.Errorf("%d jobs left unfinished on the new primary", n)
	}
	// At least once: a job ran twice only if its first attempt's outcome was lost in
	// the failover, so only jobs a worker held then, at most one per handler slot.
	dups := checkExecutions(t, runs, append(ids, late...), 2)
	if len(dups) > workers*slots {
		t.Errorf("%d jobs ran twice, more than the %d the workers could hold at the failover: %v", len(dups), workers*slots, dups)
	}
	t.Logf("%d jobs, %d ran twice: %v", jobs+len(late), len(dups), dups)
}

// Allowances of the in-process tests for what no configured interval governs.
const (
	workerStart = 5 * time.Second  // check the schema, open the pools, register: an in-process Run
	replication = 30 * time.Second // a standby replays what its primary wrote, on a loaded machine
	// listenerBackoffMax is the longest a worker's listener waits between reconnects
	// (runtime/listener.go); after one, it wakes every queue.
	listenerBackoffMax = 5 * time.Second
)

// waitReplayed waits until the standby has replayed everything the primary wrote.
func waitReplayed(t *testing.T, primary, standby *pgtest.Cluster) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), replication)
	defer cancel()
	if err := pgtest.WaitReplayed(ctx, primary, standby); err != nil {
		t.Fatal(err)
	}
}
