//go:build unix

package chaostest

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jobc-dev/jobc/internal/cmd/testworker/chaosjob"
	"github.com/jobc-dev/jobc/internal/netfault"
	"github.com/jobc-dev/jobc/runtime"
)

// TestStalledNetwork: worker A reaches PostgreSQL through a proxy that, while A holds
// four running jobs, stops delivering bytes in both directions without closing
// anything — no reset, no FIN; what A sends just never arrives — for longer than the
// lease. A notices (its statements time out, its listener's ping fails, it drops its
// connections) instead of hanging. Worker B, connected directly, rescues A's jobs
// once their leases expire and completes them. After the network heals, A's late
// outcomes for those jobs are refused (the lease check: another attempt owns them
// now), and A, without a restart, takes new jobs again — by notification, since its
// poll interval is a minute. Nothing is lost; only A's four jobs ran twice.
func TestStalledNetwork(t *testing.T) {
	t.Parallel()
	cluster, pool, _ := newCluster(t)
	direct := cluster.ConnString()
	sock, err := pgconn.ParseConfig(direct)
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := netfault.Listen("unix", filepath.Join(sock.Host, fmt.Sprintf(".s.PGSQL.%d", sock.Port)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	// Later keywords win: the same database, through the proxy, over TCP.
	proxied := fmt.Sprintf("%s host=127.0.0.1 port=%d", direct, proxy.Port())

	const held = 4
	const lease, statementTimeout = 3 * time.Second, time.Second // heartbeats every second
	var first []chaosjob.Payload
	for i := range held {
		first = append(first, chaosjob.Payload{N: int64(i)})
	}
	heldIDs := enqueue(t, pool, first)

	const pollA = time.Minute
	runs := newExecutions()
	gate := make(chan struct{}) // A's handlers hold their jobs until it closes
	a := startInproc(t, inprocOpts{id: "stall-A", connString: proxied, runs: runs, gate: gate, cfg: runtime.Config{
		Queues:           map[string]runtime.QueueConfig{chaosjob.DefaultQueue: {MaxWorkers: held}},
		LeaseDuration:    lease,
		StatementTimeout: statementTimeout,
		RescueInterval:   250 * time.Millisecond,
		PollInterval:     pollA, // after the stall, only a working listener gets A new jobs quickly
		ShutdownGrace:    time.Second,
	}})
	// A's first claim runs on a connection of its application's pool; its own
	// connections (the ones whose stall it must notice) open right after: then A has
	// four at least, its application's, the listener's, a claim's and the outcomes'.
	// They all carry A's name (startInproc).
	waitFor(t, "worker A to hold every job, with its own connections open", within(workerStart, statementTimeout), func() (bool, string) {
		n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs WHERE state = 'running' AND lease_owner = 'stall-A'`)
		own := queryInt(t, pool, `SELECT count(*) FROM pg_stat_activity WHERE application_name = 'stall-A'`)
		return n == held && runs.total() == held && own >= 4,
			fmt.Sprintf("%d executions, %d connections named after A:%s", runs.total(), own, describeLeases(t, pool, heldIDs))
	})

	proxy.Blackhole()
	stalled := time.Now()
	b := startInproc(t, inprocOpts{id: "stall-B", connString: direct, runs: runs, cfg: runtime.Config{
		LeaseDuration:  lease,
		RescueInterval: 250 * time.Millisecond,
		PollInterval:   250 * time.Millisecond,
		ShutdownGrace:  time.Second,
	}})
	waitFor(t, "worker B to rescue and complete A's jobs", within(workerStart, lease, 250*time.Millisecond, 250*time.Millisecond), func() (bool, string) {
		n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE id = ANY($1) AND state = 'completed'`, heldIDs)
		return n == held, stateCounts(t, pool) + describeLeases(t, pool, heldIDs)
	})
	// Stay cut off for two leases at least, and until A has noticed.
	waitFor(t, "worker A to notice the stall", within(2*lease, lease/3, statementTimeout), func() (bool, string) {
		dropped := a.log.count("reconnecting all of the worker's connections")
		listener := a.log.count("notification listener lost its connection")
		return time.Since(stalled) > 2*lease && dropped > 0 && listener > 0,
			fmt.Sprintf("stalled for %s; A dropped its connections %d times, its listener reconnected %d times",
				time.Since(stalled).Round(time.Millisecond), dropped, listener)
	})
	if n := a.log.count("extending leases failed"); n == 0 {
		t.Errorf("worker A's heartbeats never failed during the stall of %s", time.Since(stalled).Round(time.Millisecond))
	}
	proxy.Heal()
	t.Logf("network healed after %s; the proxy accepted %d connections", time.Since(stalled).Round(time.Millisecond), proxy.Accepted())

	// A's handlers finish now, late, on a network that works again: A writes their
	// outcomes, and the database must refuse each, since B's attempt owns the job.
	close(gate)
	// Either the database refuses each (the lease check), or A gives up first, when a
	// write fails on the healing network after its own estimate of the lease ran out;
	// both leave B's completion alone, which the checks below hold.
	waitFor(t, "worker A's late outcomes to be refused or given up", within(0, statementTimeout, listenerBackoffMax), func() (bool, string) {
		refused := a.log.count("an outcome was not recorded")
		gaveUp := a.log.jobIDsIn("stopped retrying outcomes: their leases have expired")
		return refused+len(gaveUp) == held, fmt.Sprintf("%d of %d refused, %d given up; log of A:\n%s", refused, held, len(gaveUp), a.log)
	})
	for _, id := range heldIDs {
		info, err := runtime.GetJob(t.Context(), pool, id)
		if err != nil {
			t.Fatal(err)
		}
		if info.State != runtime.StateCompleted || info.Attempt != 2 {
			t.Errorf("job %d: %s on attempt %d, want completed on attempt 2 (B's)", id, info.State, info.Attempt)
		}
		if len(info.Errors) != 1 || info.Errors[0].Class != "lease_expired" || info.Errors[0].Worker != "stall-A" {
			t.Errorf("job %d: errors %+v, want exactly A's expired lease", id, info.Errors)
		}
	}

	// A recovers without a restart: with B gone, it takes and completes new jobs,
	// woken by its listener.
	if err := b.stop(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "worker A to wait for notifications again", within(0, listenerBackoffMax, lease), func() (bool, string) {
		n := queryInt(t, pool, `SELECT count(*) FROM jobc_sleepers WHERE worker = 'stall-A'`)
		return n == 1, a.log.String()
	})
	var second []chaosjob.Payload
	for i := range 6 {
		second = append(second, chaosjob.Payload{N: int64(held + i)})
	}
	healed := time.Now()
	newIDs := enqueue(t, pool, second)
	waitFor(t, "worker A to complete new jobs after the stall, before its next poll", pollA/2, func() (bool, string) {
		n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE id = ANY($1) AND state = 'completed'`, newIDs)
		return n == len(newIDs), stateCounts(t, pool) + describeLeases(t, pool, newIDs)
	})
	t.Logf("worker A completed %d new jobs %s after they were enqueued", len(newIDs), time.Since(healed).Round(time.Millisecond))
	snap := runs.snapshot()
	for _, id := range newIDs {
		if got := snap[id]; !slices.Equal(got, []string{"stall-A"}) {
			t.Errorf("new job %d ran on %v, want once on stall-A", id, got)
		}
	}

	// Nothing lost; exactly A's held jobs ran twice, first on A, then on B.
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs`); n != 0 {
		t.Errorf("%d jobs left unfinished: %s", n, stateCounts(t, pool))
	}
	dups := checkExecutions(t, runs, append(slices.Clone(heldIDs), newIDs...), 2)
	if !slices.Equal(dups, heldIDs) {
		t.Errorf("jobs that ran twice: %v, want exactly A's held jobs %v", dups, heldIDs)
	}
	for _, id := range heldIDs {
		if got := snap[id]; !slices.Equal(got, []string{"stall-A", "stall-B"}) {
			t.Errorf("held job %d ran on %v, want on stall-A, then stall-B", id, got)
		}
	}
	t.Logf("%d jobs, %d ran twice (A's held jobs): %v", len(heldIDs)+len(newIDs), len(dups), dups)
}
