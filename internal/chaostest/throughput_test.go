//go:build unix

package chaostest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/internal/cmd/testworker/chaosjob"
)

// TestTenProcessesTwoThousandJobs: ten worker processes compete for 2,000 jobs; every
// job is completed exactly once, no attempt runs twice, and every process then shuts
// down cleanly. One job in a hundred fails its first two attempts, so retries travel
// between processes too.
//
// It is the one test that loads the machine, so it does not run in parallel with the
// others: on a small machine it would starve their workers of CPU for seconds, longer
// than the short leases those tests use on purpose.
func TestTenProcessesTwoThousandJobs(t *testing.T) {
	const (
		jobs      = 2000
		processes = 10
		failEvery = 100 // every failEvery-th job fails twice before it succeeds
		failures  = 2
	)
	pool, connString := newDB(t)

	workers := make([]*workerProc, processes)
	for i := range workers {
		workers[i] = startWorker(t, workerOpts{
			id:          fmt.Sprintf("tp-%02d", i),
			connString:  connString,
			concurrency: 3,
			lease:       10 * time.Second, // longer than the multi-second stalls of a loaded small machine
			grace:       5 * time.Second,
		})
	}
	// Enqueue once every process is ready, so that all of them compete.
	waitFor(t, "all workers to register", within(processStart), func() (bool, string) {
		n := queryInt(t, pool, `SELECT count(*) FROM jobc_workers`)
		return n == processes, fmt.Sprintf("%d of %d registered", n, processes)
	})

	payloads := make([]chaosjob.Payload, jobs)
	for i := range payloads {
		payloads[i] = chaosjob.Payload{N: int64(i), SleepMS: int64(i % 4)}
		if i%failEvery == 0 {
			payloads[i].FailAttempts = failures
		}
	}
	var ids []int64
	for chunk := range 4 { // several notifications, while workers are busy
		ids = append(ids, enqueue(t, pool, payloads[chunk*jobs/4:(chunk+1)*jobs/4])...)
	}

	// The jobs' work spread over every handler, each planned failure's retry (a backoff
	// and a scheduler pass), and one lease: the workers tolerate a stall shorter than
	// that (see lease above), so the wait must too.
	o := workers[0].opts
	work := time.Duration(jobs) * 1500 * time.Microsecond / time.Duration(processes*o.concurrency) // SleepMS i%4: 1.5ms on average
	waitFor(t, "every job to complete", within(0, work, failures*(chaosjob.Backoff+o.schedulerInterval), o.lease), func() (bool, string) {
		n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE state = 'completed'`)
		return n == jobs, stateCounts(t, pool)
	})

	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs`); n != 0 {
		t.Errorf("%d jobs left in jobc_jobs, want none", n)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE id = ANY($1) AND state = 'completed'
		AND attempt = 1 + coalesce((payload->>'fail_attempts')::int, 0)
		AND jsonb_array_length(errors) = coalesce((payload->>'fail_attempts')::int, 0)`, ids); n != jobs {
		t.Errorf("%d of %d enqueued jobs completed on the attempt after their planned failures, with one error per failure", n, jobs)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs_finished`); n != jobs {
		t.Errorf("%d rows in jobc_jobs_finished, want %d", n, jobs)
	}
	// An attempt that failed for another reason than its plan runs its job again, which
	// the checks below count as an execution too many: say why it failed.
	const unplanned = `FROM jobc_jobs_finished f, jsonb_array_elements(f.errors) e WHERE e->>'error' NOT LIKE '%planned failure%'`
	if n := queryInt(t, pool, `SELECT count(*) `+unplanned); n > 0 {
		var sample string
		if err := pool.QueryRow(t.Context(), `SELECT string_agg(x, '; ') FROM (SELECT format('job %s attempt %s: %s', f.id, e->>'attempt', e->>'error') AS x `+
			unplanned+` ORDER BY f.id LIMIT 3) s`).Scan(&sample); err != nil {
			t.Fatal(err)
		}
		t.Errorf("%d attempts failed without a planned failure, e.g. %s", n, sample)
	}
	if twice := queryIDs(t, pool, `SELECT DISTINCT job_id FROM handled GROUP BY job_id, attempt HAVING count(*) > 1 ORDER BY 1`); len(twice) > 0 {
		t.Errorf("%d jobs had an attempt executed more than once, e.g. %v", len(twice), twice[:min(len(twice), 10)])
	}
	if twice := queryIDs(t, pool, `SELECT h.job_id FROM handled h JOIN jobc_jobs_finished f ON f.id = h.job_id
		WHERE f.payload->'fail_attempts' IS NULL GROUP BY h.job_id HAVING count(*) > 1 ORDER BY 1`); len(twice) > 0 {
		t.Errorf("%d jobs that never fail were executed more than once, e.g. %v", len(twice), twice[:min(len(twice), 10)])
	}
	if n, want := queryInt(t, pool, `SELECT count(*) FROM handled`), jobs+failures*jobs/failEvery; n != want {
		t.Errorf("%d executions, want %d (one per job and one per planned failure)", n, want)
	}
	if n := queryInt(t, pool, `SELECT count(DISTINCT job_id) FROM handled_done WHERE job_id = ANY($1)`, ids); n != jobs {
		t.Errorf("%d of %d jobs recorded as done", n, jobs)
	}
	if bad := queryIDs(t, pool, `SELECT job_id FROM handled_done GROUP BY job_id HAVING count(*) <> 1 ORDER BY 1`); len(bad) > 0 {
		t.Errorf("%d jobs completed more than once, e.g. %v", len(bad), bad[:min(len(bad), 10)])
	}
	if n := queryInt(t, pool, `SELECT count(DISTINCT n) FROM handled_done WHERE n BETWEEN 0 AND $1`, jobs-1); n != jobs {
		t.Errorf("%d of %d payloads (n) handled", n, jobs)
	}
	if n := queryInt(t, pool, `SELECT count(DISTINCT worker) FROM handled_done`); n < 2 {
		t.Errorf("only %d of %d workers handled jobs", n, processes)
	}
	logDistribution(t, pool)

	// Idle workers stop well within their grace period.
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Go(func() {
			if _, err := w.stop(0); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_workers`); n != 0 {
		t.Errorf("%d workers still registered after shutdown", n)
	}
}
