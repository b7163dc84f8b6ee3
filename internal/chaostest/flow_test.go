//go:build unix

package chaostest

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/cmd/testworker/chaosjob"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// The flow control tests run chaos_job with fleet-wide limits (chaosjob.Limits) in
// several worker processes, kill one of them or restart PostgreSQL mid-run, and then
// check the limits against what the handlers recorded (the handled tables) and what
// the claims recorded (attempted_at): what runtime/flow_test.go checks in one
// process, here across processes, a SIGKILL and a crash recovery.

// TestFlowConcurrencyByKeyUnderKill: four worker processes of 50 slots each run 2,000
// jobs over 20 keys with a concurrency of 2 per key; one process is killed mid-run.
// No key ever has more than 2 executions under way at one instant, every job
// completes, and keys run side by side.
//
// Like TestTenProcessesTwoThousandJobs it loads the machine, so it does not run in
// parallel with the others.
func TestFlowConcurrencyByKeyUnderKill(t *testing.T) {
	const (
		processes, slots  = 4, 50
		jobs, keys, limit = 2000, 20, 2
		jobTime           = 20 * time.Millisecond
	)
	limits := chaosjob.Limits{Concurrency: limit}
	pool, connString := newDB(t)
	workers := startLimited(t, pool, processes, workerOpts{id: "cc", connString: connString, concurrency: slots,
		limits: limits, lease: 2 * time.Second, rescueInterval: 500 * time.Millisecond})
	ids := enqueueLimited(t, pool, limits, keyedPayloads(jobs, keys, jobTime))
	o := workers[0].opts
	// A key at its limit is admitted again at a later claim: a worker whose claim came
	// back short claims again at its next poll at the latest. So each round of limit
	// jobs of a key takes a job's time and a poll interval at most.
	rounds := time.Duration(jobs / keys / limit)
	victim, killedAt := killMidRun(t, pool, workers, jobs/3, 5, within(processStart, rounds*(jobTime+o.poll)/3))
	waitAllCompleted(t, pool, ids, within(0, o.lease, o.rescueInterval, rounds*(jobTime+o.poll)))

	execs := readExecutions(t, pool, unended{worker: victim.id, by: killedAt})
	checkPeaks(t, pool, execs, "key", byKey, limit)
	if all := peaks(execs, wholeQueue)[""]; all.n <= limit {
		t.Errorf("at most %d executions at once over all keys: keys did not run side by side", all.n)
	}
	logDistribution(t, pool)
}

// TestFlowQueueConcurrencyUnderKill: a queue capped at 5 running jobs, whatever their
// keys, holds the cap over three worker processes of 10 slots each, one of them
// killed mid-run, and completes every job.
func TestFlowQueueConcurrencyUnderKill(t *testing.T) {
	t.Parallel()
	const (
		processes, slots     = 3, 10
		jobs, keys, queueCap = 300, 10, 5
		jobTime              = 20 * time.Millisecond
	)
	limits := chaosjob.Limits{QueueConcurrency: queueCap}
	pool, connString := newDB(t)
	workers := startLimited(t, pool, processes, workerOpts{id: "qc", connString: connString, concurrency: slots,
		limits: limits, lease: 2 * time.Second, rescueInterval: 500 * time.Millisecond})
	ids := enqueueLimited(t, pool, limits, keyedPayloads(jobs, keys, jobTime))
	o := workers[0].opts
	rounds := time.Duration(jobs / queueCap) // as in TestFlowConcurrencyByKeyUnderKill, for the queue
	// The victim holds at least 2 running jobs: with the queue at its cap of 5 over 3
	// workers one of them does, whereas all 5 in one worker (what this waited for
	// before) may never happen while the cap is shared; it once did not in a whole run.
	victim, killedAt := killMidRun(t, pool, workers, jobs/3, 2, within(processStart, rounds*(jobTime+o.poll)/3))
	waitAllCompleted(t, pool, ids, within(0, o.lease, o.rescueInterval, rounds*(jobTime+o.poll)))

	execs := readExecutions(t, pool, unended{worker: victim.id, by: killedAt})
	checkPeaks(t, pool, execs, "queue", wholeQueue, queueCap)
	t.Logf("at most %d executions at once under the queue's cap of %d", peaks(execs, wholeQueue)[""].n, queueCap)
}

// TestFlowRateByKeyUnderKill: with a rate of 10 starts per second per key, no key
// ever has more than 10 starts in any window of a second, counting the starts of
// attempts lost with a killed worker process; and a backlog uses the rate: a key's
// places in its window are taken again within 1/0.9 of a period of their last start
// (the median over the backlog).
//
// The starts are the claims' own record: attempted_at, which the flow claim sets to
// the time the key admitted the job, the time its rate window counts. A job keeps the
// attempted_at of its last attempt only, so a trigger (flowStartsTable) records every
// one as the claim sets it, in the claim's transaction; the test checks that the
// finished jobs' attempted_at are among them.
func TestFlowRateByKeyUnderKill(t *testing.T) {
	t.Parallel()
	const (
		processes, slots = 3, 10
		keys, perKey     = 4, 80
		jobTime          = 200 * time.Millisecond // long enough that a killed worker holds jobs
	)
	rate := runtime.Rate{Limit: 10, Per: time.Second}
	limits := chaosjob.Limits{Rate: rate}
	pool, connString := newDB(t)
	if _, err := pool.Exec(t.Context(), flowStartsTable); err != nil {
		t.Fatal(err)
	}
	workers := startLimited(t, pool, processes, workerOpts{id: "rate", connString: connString, concurrency: slots,
		limits: limits, lease: 2 * time.Second, rescueInterval: 500 * time.Millisecond})
	ids := enqueueLimited(t, pool, limits, keyedPayloads(keys*perKey, keys, jobTime))
	o := workers[0].opts
	// The backlog takes perKey/limit periods; the kill comes early enough that the
	// killed attempts are retried (a lease, a rescue pass, a backoff) while it lasts,
	// so that the retries do not stretch a key's starts beyond it.
	backlog := time.Duration(perKey/rate.Limit) * rate.Per
	killMidRun(t, pool, workers, keys*perKey/4, 3, within(processStart, backlog/4))
	waitAllCompleted(t, pool, ids, within(0, backlog, o.lease, o.rescueInterval, chaosjob.Backoff+o.schedulerInterval))

	starts := readStarts(t, pool)
	if missing := queryIDs(t, pool, `SELECT f.id FROM jobc_jobs_finished f WHERE NOT EXISTS (
		SELECT 1 FROM flow_starts s WHERE s.job_id = f.id AND s.attempt = f.attempt AND s.attempted_at = f.attempted_at)
		ORDER BY 1`); len(missing) > 0 {
		t.Errorf("%d finished jobs' attempted_at were never recorded as a start, e.g. %v", len(missing), missing[:min(len(missing), 10)])
	}
	rescued := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs_finished f, jsonb_array_elements(f.errors) e WHERE e->>'class' = 'lease_expired'`)
	if rescued == 0 {
		t.Errorf("no attempt was lost with the killed worker: the kill tested nothing")
	}
	var used []string
	for key, ts := range starts {
		for i := rate.Limit; i < len(ts); i++ {
			if d := ts[i].Sub(ts[i-rate.Limit]); d < rate.Per {
				t.Errorf("key %s: starts %d and %d are %s apart: %d starts within %s, limit %d; its starts:\n%s",
					key, i-rate.Limit, i, d, rate.Limit+1, rate.Per, rate.Limit, describeStarts(ts))
				break
			}
		}
		// A window of the rate frees a place one period after the start that took it,
		// so at the limit start i comes one period after start i-limit, and a backlog
		// uses the rate as far as those gaps stay a period long. The gaps are measured
		// rather than the whole span, whose first window's spread (the workers' first
		// claims) carries over to every later window without costing any start its
		// place; and their median, which says whether places are taken again at once as
		// a rule: one window held up (the kill, a stalled process on a loaded machine)
		// lengthens ten gaps of some eighty.
		gaps := make([]time.Duration, 0, len(ts))
		for i := rate.Limit; i < len(ts); i++ {
			gaps = append(gaps, ts[i].Sub(ts[i-rate.Limit]))
		}
		if len(gaps) == 0 {
			t.Errorf("key %s: %d starts, fewer than a window's %d: the backlog never filled the rate", key, len(ts), rate.Limit)
			continue
		}
		slices.Sort(gaps)
		median := gaps[len(gaps)/2]
		fraction := float64(rate.Per) / float64(median)
		used = append(used, fmt.Sprintf("%s %.1f%% (%d starts, a place taken again %s after its start, median; longest %s)",
			key, 100*fraction, len(ts), median.Round(time.Millisecond), gaps[len(gaps)-1].Round(time.Millisecond)))
		if fraction < 0.9 {
			t.Errorf("key %s: a place of the rate was taken again %s after its start (median), the rate allows %s: %.1f%% of the limit used, want 90%% at least; its starts:\n%s",
				key, median.Round(time.Millisecond), rate.Per, 100*fraction, describeStarts(ts))
		}
	}
	slices.Sort(used)
	t.Logf("rate %s per key used over the backlog: %s; %d attempts lost with the killed worker", rate.String(), strings.Join(used, ", "), rescued)
}

// TestFlowSequenceUnderKill: jobs in sequences (one per key) run one at a time per
// key, in enqueue order, while a worker process is killed mid-run; see checkSequences
// for what order means when attempts are lost.
func TestFlowSequenceUnderKill(t *testing.T) {
	t.Parallel()
	const (
		processes, slots = 3, 10
		keys, perKey     = 10, 20
		jobTime          = 50 * time.Millisecond
	)
	limits := chaosjob.Limits{Sequence: true}
	pool, connString := newDB(t)
	workers := startLimited(t, pool, processes, workerOpts{id: "seq", connString: connString, concurrency: slots,
		limits: limits, lease: 2 * time.Second, rescueInterval: 500 * time.Millisecond})
	ids := enqueueLimited(t, pool, limits, sequencePayloads(keys, perKey, jobTime))
	o := workers[0].opts
	chain := sequenceTime(perKey, jobTime, o)
	victim, killedAt := killMidRun(t, pool, workers, keys*perKey/3, 3, within(processStart, chain/3))
	waitAllCompleted(t, pool, ids, within(0, o.lease, o.rescueInterval, chaosjob.Backoff+o.schedulerInterval, chain))
	checkSequences(t, pool, readExecutions(t, pool, unended{worker: victim.id, by: killedAt}))
}

// TestFlowSequenceAcrossPostgresRestart: sequences keep their order and run one job
// per key at a time while the server restarts (immediate shutdown, crash recovery)
// mid-run: claims, outcomes and the handlers' records are cut off and redone.
func TestFlowSequenceAcrossPostgresRestart(t *testing.T) {
	t.Parallel()
	const (
		processes, slots = 3, 10
		keys, perKey     = 10, 20
		jobTime          = 50 * time.Millisecond
	)
	limits := chaosjob.Limits{Sequence: true}
	cluster, pool, connString := newCluster(t)
	workers := startLimited(t, pool, processes, workerOpts{id: "seqpg", connString: connString, concurrency: slots,
		limits: limits, lease: 2 * time.Second, rescueInterval: 500 * time.Millisecond})
	ids := enqueueLimited(t, pool, limits, sequencePayloads(keys, perKey, jobTime))
	o := workers[0].opts
	chain := sequenceTime(perKey, jobTime, o)
	restartedAt := restartMidRun(t, cluster, pool, keys*perKey/3, within(processStart, chain/3))
	waitAllCompleted(t, pool, ids, within(0, o.lease, o.rescueInterval, chaosjob.Backoff+o.schedulerInterval, o.statementTimeout, chain))
	checkSequences(t, pool, readExecutions(t, pool, unended{by: restartedAt}))
	checkSurvived(t, workers)
}

// TestFlowConcurrencyByKeyAcrossPostgresRestart: the concurrency of 2 per key holds
// while the server restarts mid-run, and every job completes.
func TestFlowConcurrencyByKeyAcrossPostgresRestart(t *testing.T) {
	t.Parallel()
	const (
		processes, slots  = 3, 20
		jobs, keys, limit = 600, 10, 2
		jobTime           = 20 * time.Millisecond
	)
	limits := chaosjob.Limits{Concurrency: limit}
	cluster, pool, connString := newCluster(t)
	workers := startLimited(t, pool, processes, workerOpts{id: "ccpg", connString: connString, concurrency: slots,
		limits: limits, lease: 2 * time.Second, rescueInterval: 500 * time.Millisecond})
	ids := enqueueLimited(t, pool, limits, keyedPayloads(jobs, keys, jobTime))
	o := workers[0].opts
	rounds := time.Duration(jobs / keys / limit) // as in TestFlowConcurrencyByKeyUnderKill
	restartedAt := restartMidRun(t, cluster, pool, jobs/3, within(processStart, rounds*(jobTime+o.poll)/3))
	waitAllCompleted(t, pool, ids, within(0, o.lease, o.rescueInterval, chaosjob.Backoff+o.schedulerInterval, o.statementTimeout, rounds*(jobTime+o.poll)))
	execs := readExecutions(t, pool, unended{by: restartedAt})
	checkPeaks(t, pool, execs, "key", byKey, limit)
	checkSurvived(t, workers)
}

// keyedPayloads returns jobs payloads spread over keys round-robin (job i has key
// i%keys, so each key's jobs are in enqueue order by n), each sleeping jobTime.
func keyedPayloads(jobs, keys int, jobTime time.Duration) []chaosjob.Payload {
	payloads := make([]chaosjob.Payload, jobs)
	for i := range payloads {
		payloads[i] = chaosjob.Payload{N: int64(i), SleepMS: jobTime.Milliseconds(), Key: fmt.Sprintf("k%02d", i%keys)}
	}
	return payloads
}

// sequencePayloads returns keyedPayloads in which some jobs fail their first attempt
// (every failEvery-th) or snooze once (every snoozeEvery-th): a key's first job is
// then scheduled for its retry, or due again at once, and must hold the key all the
// same.
func sequencePayloads(keys, perKey int, jobTime time.Duration) []chaosjob.Payload {
	payloads := keyedPayloads(keys*perKey, keys, jobTime)
	for i := range payloads {
		switch {
		case i%sequenceFailEvery == sequenceFailEvery-1:
			payloads[i].FailAttempts = 1
		case i%sequenceSnoozeEvery == sequenceSnoozeEvery-1:
			payloads[i].SnoozeTimes = 1
		}
	}
	return payloads
}

const sequenceFailEvery, sequenceSnoozeEvery = 7, 11

// sequenceTime bounds how long one key's perKey jobs of sequencePayloads take: the
// key runs one execution at a time, and the next is admitted at a claim after it
// ended, a poll interval later at most; a failed attempt's retry waits for its backoff
// and a scheduler pass as well.
func sequenceTime(perKey int, jobTime time.Duration, o workerOpts) time.Duration {
	executions := perKey + perKey/sequenceFailEvery + perKey/sequenceSnoozeEvery + 2
	return time.Duration(executions)*(jobTime+o.poll) + time.Duration(perKey/sequenceFailEvery+1)*(chaosjob.Backoff+o.schedulerInterval)
}

// startLimited starts n worker processes with the options o (ids o.id-A, o.id-B, ...)
// and waits until every one has registered, so that all compete from the first job.
func startLimited(t *testing.T, pool *pgxpool.Pool, n int, o workerOpts) []*workerProc {
	t.Helper()
	workers := make([]*workerProc, n)
	prefix := o.id
	for i := range workers {
		o.id = fmt.Sprintf("%s-%c", prefix, 'A'+i)
		workers[i] = startWorker(t, o)
	}
	waitFor(t, "all workers to register", within(processStart), func() (bool, string) {
		got := queryInt(t, pool, `SELECT count(*) FROM jobc_workers`)
		return got == n, fmt.Sprintf("%d of %d registered", got, n)
	})
	return workers
}

// killMidRun waits until done jobs have completed and a worker holds held running
// jobs at least, then kills that worker (SIGKILL). It returns the worker and the time
// of the kill by the database's clock, read once the process is dead.
func killMidRun(t *testing.T, pool *pgxpool.Pool, workers []*workerProc, done, held int, timeout time.Duration) (*workerProc, time.Time) {
	t.Helper()
	var owner string
	waitFor(t, fmt.Sprintf("%d jobs completed and a worker holding %d running jobs", done, held), timeout, func() (bool, string) {
		n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE state = 'completed'`)
		owners := queryStrings(t, pool, `SELECT lease_owner FROM jobc_jobs WHERE state = 'running'
			GROUP BY lease_owner HAVING count(*) >= $1 ORDER BY count(*) DESC, 1 LIMIT 1`, held)
		owner = ""
		if len(owners) > 0 {
			owner = owners[0]
		}
		return n >= done && owner != "", stateCounts(t, pool)
	})
	i := slices.IndexFunc(workers, func(w *workerProc) bool { return w.id == owner })
	if i < 0 {
		t.Fatalf("running jobs are leased to %q, none of the test's workers", owner)
	}
	victim := workers[i]
	victim.kill(t)
	var killedAt time.Time
	if err := pool.QueryRow(t.Context(), `SELECT clock_timestamp()`).Scan(&killedAt); err != nil {
		t.Fatal(err)
	}
	leased := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs WHERE state = 'running' AND lease_owner = $1`, victim.id)
	cut := queryInt(t, pool, `SELECT count(*) FROM handled WHERE worker = $1 AND ended_at IS NULL`, victim.id)
	t.Logf("killed worker %s, leaving %d jobs leased to it and %d executions cut off; %s", victim.id, leased, cut, stateCounts(t, pool))
	return victim, killedAt
}

// restartMidRun waits until done jobs have completed, then restarts the server
// (immediate shutdown, crash recovery). It returns when the restart ended, by this
// machine's clock, the server's too.
func restartMidRun(t *testing.T, cluster *pgtest.Cluster, pool *pgxpool.Pool, done int, timeout time.Duration) time.Time {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d jobs completed", done), timeout, func() (bool, string) {
		n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE state = 'completed'`)
		running := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs WHERE state = 'running'`)
		return n >= done && running > 0, stateCounts(t, pool)
	})
	began := time.Now()
	if err := cluster.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}
	ended := time.Now()
	t.Logf("restart took %s", ended.Sub(began).Round(time.Millisecond))
	pool.Reset() // drop the test's own connections, which the restart cut
	return ended
}

// waitAllCompleted waits until every job of ids has completed, then checks that
// none is left unfinished and each recorded a successful execution.
func waitAllCompleted(t *testing.T, pool *pgxpool.Pool, ids []int64, timeout time.Duration) {
	t.Helper()
	began := time.Now()
	waitFor(t, fmt.Sprintf("all %d jobs to complete", len(ids)), timeout, func() (bool, string) {
		n, err := countCompleted(t.Context(), pool, ids)
		if err != nil {
			return false, err.Error() // the test's own pool reconnects after a restart
		}
		return n == len(ids), stateCounts(t, pool) + describeLimits(t, pool)
	})
	t.Logf("the rest of the jobs completed in %s", time.Since(began).Round(time.Millisecond))
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs`); n != 0 {
		t.Errorf("%d jobs left unfinished: %s", n, stateCounts(t, pool))
	}
	if lost := queryIDs(t, pool, `SELECT id FROM unnest($1::bigint[]) id
		WHERE NOT EXISTS (SELECT 1 FROM handled_done d WHERE d.job_id = id) ORDER BY 1`, ids); len(lost) > 0 {
		t.Errorf("%d completed jobs never recorded a successful execution, e.g.%s", len(lost), describeJobs(t, pool, lost[:min(len(lost), 5)]))
	}
}

// checkSurvived checks that the workers ran through a restart and stop cleanly.
func checkSurvived(t *testing.T, workers []*workerProc) {
	t.Helper()
	for _, w := range workers {
		if w.hasExited() {
			t.Errorf("worker %s %s during the restart", w.id, w.exitDescription())
			continue
		}
		if _, err := w.stop(w.opts.stopSlack()); err != nil {
			t.Error(err)
		}
	}
}

// execution is one run of a handler, as it recorded itself in handled, with its
// job's flow key.
type execution struct {
	run, job        int64
	key, worker     string
	attempt         int
	start, end      time.Time
	endKnown, bound bool // end recorded; end bounded by unended
}

// never is the end of an execution that has none: it overlaps everything after it.
var never = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// unended says when executions that recorded no end ended at the latest: an execution
// of a killed worker (worker) at the kill, whenever it began (one may have committed
// its start record after the kill was read: it then ends where it began); or, with no
// worker named, any that began before by, at by (at a restart, an end record or a
// start record's reply may be cut off). Any other execution without an end never
// ended.
type unended struct {
	worker string
	by     time.Time
}

func (u unended) endOf(e execution) (time.Time, bool) {
	switch {
	case u.worker != "" && e.worker == u.worker:
		return maxTime(e.start, u.by), true
	case u.worker == "" && !u.by.IsZero() && !e.start.After(u.by):
		return u.by, true
	}
	return never, false
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// readExecutions returns every execution the handlers recorded, in run order.
func readExecutions(t *testing.T, pool *pgxpool.Pool, u unended) []execution {
	t.Helper()
	rows, err := pool.Query(t.Context(), `SELECT h.run, h.job_id, coalesce(a.payload->>'key', ''), h.worker, h.attempt,
		h.at, h.ended_at FROM handled h LEFT JOIN jobc_jobs_all a ON a.id = h.job_id ORDER BY h.run`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []execution
	for rows.Next() {
		var e execution
		var end *time.Time
		if err := rows.Scan(&e.run, &e.job, &e.key, &e.worker, &e.attempt, &e.start, &end); err != nil {
			t.Fatal(err)
		}
		if end != nil {
			e.end, e.endKnown = *end, true
		} else {
			e.end, e.bound = u.endOf(e)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	bounded, endless := 0, 0
	for _, e := range out {
		switch {
		case e.bound:
			bounded++
		case !e.endKnown:
			endless++
		}
	}
	t.Logf("%d executions recorded; %d without an end recorded, bounded by the kill or restart; %d without one otherwise (they never end)",
		len(out), bounded, endless)
	return out
}

func (e execution) String() string {
	end := e.end.Format("15:04:05.000000")
	switch {
	case e.bound:
		end += " (no end recorded: bounded)"
	case !e.endKnown:
		end = "never (no end recorded)"
	}
	return fmt.Sprintf("run %d: job %d key %q on %s, attempt %d, %s to %s", e.run, e.job, e.key, e.worker, e.attempt,
		e.start.Format("15:04:05.000000"), end)
}

func byKey(e execution) string      { return e.key }
func wholeQueue(e execution) string { return "" }

// peak is the most executions of a group that were under way at one instant, and
// which they were.
type peak struct {
	n     int
	at    time.Time
	execs []execution
}

// peaks returns the peak of each group of execs. An execution that ends at the
// instant another starts does not overlap it.
func peaks(execs []execution, group func(execution) string) map[string]peak {
	type edge struct {
		at    time.Time
		start bool
		e     execution
	}
	edges := map[string][]edge{}
	for _, e := range execs {
		if !e.end.After(e.start) {
			continue // no time under way
		}
		g := group(e)
		edges[g] = append(edges[g], edge{e.start, true, e}, edge{e.end, false, e})
	}
	out := map[string]peak{}
	for g, es := range edges {
		slices.SortFunc(es, func(a, b edge) int {
			if c := a.at.Compare(b.at); c != 0 {
				return c
			}
			switch {
			case a.start == b.start:
				return 0
			case a.start:
				return 1 // ends first
			}
			return -1
		})
		active := map[int64]execution{}
		var best peak
		for _, ed := range es {
			if !ed.start {
				delete(active, ed.e.run)
				continue
			}
			active[ed.e.run] = ed.e
			if len(active) > best.n {
				best = peak{n: len(active), at: ed.at, execs: slices.Collect(func(yield func(execution) bool) {
					for _, e := range active {
						if !yield(e) {
							return
						}
					}
				})}
			}
		}
		slices.SortFunc(best.execs, func(a, b execution) int { return cmp.Compare(a.run, b.run) })
		out[g] = best
	}
	return out
}

// checkPeaks checks that no group (a key, the queue: what) of execs ever had more
// than limit executions under way at one instant, and fails with the executions of
// every group that did.
func checkPeaks(t *testing.T, pool *pgxpool.Pool, execs []execution, what string, group func(execution) string, limit int) {
	t.Helper()
	var over []string
	for g, p := range peaks(execs, group) {
		if p.n > limit {
			over = append(over, fmt.Sprintf("%s %q: %d executions under way at %s:\n\t%s", what, g, p.n,
				p.at.Format("15:04:05.000000"), joinExecs(p.execs)))
		}
	}
	if len(over) > 0 {
		slices.Sort(over)
		t.Errorf("concurrency limit %d exceeded (%d executions recorded; %s; limits:%s):\n%s", limit, len(execs),
			stateCounts(t, pool), describeLimits(t, pool), strings.Join(over, "\n"))
	}
}

func joinExecs(execs []execution) string {
	s := make([]string, len(execs))
	for i, e := range execs {
		s[i] = e.String()
	}
	return strings.Join(s, "\n\t")
}

// checkSequences checks that each key's jobs ran in sequence. Order by enqueue is
// order by id (keyedPayloads enqueues each key's jobs in order), and a job may run
// more than once: an attempt lost with a killed worker, or whose outcome a restart
// cut off, runs again once its lease has expired. So: order the executions of a key
// by (job id, run). The key ran in sequence iff each execution began no earlier than
// every execution before it in that order had ended. That says at once that the key
// ran one execution at a time; that no job of the key began before every earlier job
// of the key had ended its last execution; and that no job ran again once a later job
// of the key had begun. Executions whose end was not recorded end as unended says (the
// kill, the end of the restart). Every job completed (waitAllCompleted), so each key
// ran all its jobs.
func checkSequences(t *testing.T, pool *pgxpool.Pool, execs []execution) {
	t.Helper()
	keys := map[string][]execution{}
	for _, e := range execs {
		keys[e.key] = append(keys[e.key], e)
	}
	again := 0
	for key, es := range keys {
		slices.SortFunc(es, func(a, b execution) int {
			return cmp.Or(cmp.Compare(a.job, b.job), cmp.Compare(a.run, b.run))
		})
		var last execution // the execution, earlier in the order, that ended last
		for i, e := range es {
			if i > 0 && es[i-1].job == e.job {
				again++
			}
			if i > 0 && e.start.Before(last.end) {
				from := max(0, slices.IndexFunc(es, func(x execution) bool { return x.run == last.run }))
				t.Errorf("key %q out of sequence (%s; limits:%s): %s began before %s ended; the key's executions from there in (job, run) order:\n\t%s",
					key, stateCounts(t, pool), describeLimits(t, pool), e, last, joinExecs(es[from:min(len(es), i+3)]))
				break
			}
			if i == 0 || e.end.After(last.end) {
				last = e
			}
		}
	}
	t.Logf("%d keys, %d executions; %d of them ran a job again (planned failures and snoozes, lost attempts)", len(keys), len(execs), again)
}

// flowStartsTable records every start a claim makes (a job's attempted_at as the claim
// sets it), in the claim's transaction: a job itself keeps its last only.
const flowStartsTable = `
CREATE TABLE flow_starts (job_id bigint, attempt int, flow_key text, owner text, attempted_at timestamptz,
    updated_at timestamptz DEFAULT clock_timestamp(), xid xid8 DEFAULT pg_current_xact_id());
CREATE FUNCTION record_flow_start() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO flow_starts (job_id, attempt, flow_key, owner, attempted_at)
    VALUES (NEW.id, NEW.attempt, NEW.flow_key, NEW.lease_owner, NEW.attempted_at);
    RETURN NULL;
END
$$;
CREATE TRIGGER record_flow_start AFTER UPDATE OF attempted_at ON jobc_jobs FOR EACH ROW
    WHEN (NEW.state = 'running' AND NEW.attempted_at IS DISTINCT FROM OLD.attempted_at)
    EXECUTE FUNCTION record_flow_start();
`

// readStarts returns the recorded starts of each flow key, in order.
func readStarts(t *testing.T, pool *pgxpool.Pool) map[string][]time.Time {
	t.Helper()
	rows, err := pool.Query(t.Context(), `SELECT flow_key, attempted_at FROM flow_starts ORDER BY flow_key, attempted_at`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]time.Time{}
	for rows.Next() {
		var key string
		var at time.Time
		if err := rows.Scan(&key, &at); err != nil {
			t.Fatal(err)
		}
		out[key] = append(out[key], at)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// describeStarts lists starts, one line per second of them, as offsets from the first.
func describeStarts(ts []time.Time) string {
	var b strings.Builder
	for i, at := range ts {
		if i > 0 && at.Sub(ts[0])/time.Second != ts[i-1].Sub(ts[0])/time.Second {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, " +%s", at.Sub(ts[0]).Round(time.Millisecond))
	}
	return "\t" + strings.ReplaceAll(b.String(), "\n", "\n\t")
}

// describeLimits describes the limits in force, for messages.
func describeLimits(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	ls, err := runtime.ListLimits(t.Context(), pool)
	if err != nil {
		return " " + err.Error()
	}
	s := ""
	for _, l := range ls {
		rate := "none"
		if !l.Effective.Rate.IsZero() {
			rate = l.Effective.Rate.String()
		}
		s += fmt.Sprintf(" %s %s by %v: concurrency %d, rate %s, sequence %v, %d running, %d waiting;",
			l.Scope, l.Name, l.By, l.Effective.Concurrency, rate, l.Sequence, l.Running, l.Waiting)
	}
	return s
}

// queryStrings runs a query that returns strings.
func queryStrings(t *testing.T, pool *pgxpool.Pool, query string, args ...any) []string {
	t.Helper()
	rows, err := pool.Query(t.Context(), query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return out
}
