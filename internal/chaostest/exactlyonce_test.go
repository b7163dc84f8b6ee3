//go:build unix

package chaostest

import (
	"context"
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/cmd/testworker/chaosjob"
)

// TestExactlyOnceUnderLoad: worker processes on a machine whose every core is kept
// busy, with statement timeouts a small fraction of the lease, so that claims,
// heartbeats and outcomes time out: each timeout closes its statement's connection,
// cutting off a claim or an outcome whose work the server may have done while the
// worker saw an error, and retires all of the worker's connections when none of its
// statements answered for a statement timeout. Nothing is killed and no lease is
// cut short, so a job may run more often than its planned snoozes and failures only
// when a lease expired and the job was rescued, which its errors then record: every
// other execution is a second run of a job that was running.
//
// Like TestTenProcessesTwoThousandJobs it loads the machine, so it does not run in
// parallel with the others.
func TestExactlyOnceUnderLoad(t *testing.T) {
	const (
		jobs        = 600
		processes   = 6
		snoozeEvery = 10 // every snoozeEvery-th job snoozes on its first snoozes executions
		snoozes     = 2
		failEvery   = 10 // every failEvery-th job (offset by one) fails its first attempt
	)
	pool, connString := newDB(t)

	// Burners: one per core, for as long as the jobs run.
	burnCtx, stopBurning := context.WithCancel(t.Context())
	var burners sync.WaitGroup
	defer burners.Wait()
	defer stopBurning()
	for range goruntime.NumCPU() {
		burners.Go(func() {
			spins := 0
			for burnCtx.Err() == nil {
				spins++
			}
			_ = spins
		})
	}

	workers := make([]*workerProc, processes)
	for i := range workers {
		workers[i] = startWorker(t, workerOpts{
			id:          fmt.Sprintf("eo-%02d", i),
			connString:  connString,
			concurrency: 3,
			lease:       5 * time.Second,
			// Under the burners, statements of this bound time out now and then.
			// (At 150 ms, on a slower machine, when every timeout reset all of a
			// worker's connections, reconnecting itself timed out and the workers
			// made almost no progress in a minute; at 400 ms a run had 39 resets and
			// 14 rescues.)
			statementTimeout: 400 * time.Millisecond,
		})
	}
	waitFor(t, "all workers to register", within(processStart), func() (bool, string) {
		n := queryInt(t, pool, `SELECT count(*) FROM jobc_workers`)
		return n == processes, fmt.Sprintf("%d of %d registered", n, processes)
	})

	payloads := make([]chaosjob.Payload, jobs)
	for i := range payloads {
		payloads[i] = chaosjob.Payload{N: int64(i), SleepMS: int64(i % 4)}
		switch i % snoozeEvery {
		case 0:
			payloads[i].SnoozeTimes = snoozes
		case 1:
			payloads[i].FailAttempts = 1
		}
	}
	for chunk := range 2 { // notifications while workers are busy
		enqueue(t, pool, payloads[chunk*jobs/2:(chunk+1)*jobs/2])
	}

	// The jobs' work over every handler, a planned failure's retry (a backoff and a
	// scheduler pass), and, for jobs whose claim or outcome was cut off, a lease and a
	// rescue pass, which may happen again to the same job.
	o := workers[0].opts
	work := time.Duration(jobs) * 1500 * time.Microsecond / time.Duration(processes*o.concurrency)
	waitFor(t, "every job to complete", within(0, work, chaosjob.Backoff+o.schedulerInterval, 2*(o.lease+o.rescueInterval)), func() (bool, string) {
		n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE state = 'completed'`)
		return n == jobs, stateCounts(t, pool)
	})
	stopBurning()

	// Each job runs once, once more per planned snooze and failure, and once more per
	// rescue of an expired lease (a rescued attempt may not have run: its claim's
	// reply may have been lost).
	rows, err := pool.Query(t.Context(), `
		SELECT f.id, count(h.job_id),
		       1 + coalesce((f.payload->>'snooze_times')::int, 0) + coalesce((f.payload->>'fail_attempts')::int, 0)
		         + (SELECT count(*) FROM jsonb_array_elements(f.errors) e WHERE e->>'class' = 'lease_expired'),
		       string_agg(format('%s@%s', h.worker, h.attempt), ' ' ORDER BY h.at), f.errors::text
		FROM jobc_jobs_finished f LEFT JOIN handled h ON h.job_id = f.id
		GROUP BY f.id, f.payload, f.errors
		HAVING count(h.job_id) > 1 + coalesce((f.payload->>'snooze_times')::int, 0) + coalesce((f.payload->>'fail_attempts')::int, 0)
		         + (SELECT count(*) FROM jsonb_array_elements(f.errors) e WHERE e->>'class' = 'lease_expired')
		ORDER BY f.id`)
	if err != nil {
		t.Fatal(err)
	}
	var extra []string
	for rows.Next() {
		var id, runs, allowed int64
		var where, errs string
		if err := rows.Scan(&id, &runs, &allowed, &where, &errs); err != nil {
			t.Fatal(err)
		}
		extra = append(extra, fmt.Sprintf("job %d ran %d times, at most %d explained (worker@attempt in order: %s; errors %s)", id, runs, allowed, where, errs))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(extra) > 0 {
		t.Errorf("%d jobs ran more often than their snoozes, failures and rescues explain:\n%s", len(extra), strings.Join(extra[:min(len(extra), 10)], "\n"))
	}
	// No two executions of a job overlap, unless a lease expired meanwhile: a snooze
	// makes the job due again at once, so a snoozing job run twice at once would
	// otherwise hide in the count above.
	if overlaps := queryIDs(t, pool, `
		SELECT DISTINCT a.job_id FROM handled a JOIN handled b ON a.job_id = b.job_id AND a.run < b.run
		JOIN jobc_jobs_finished f ON f.id = a.job_id
		WHERE b.at < a.ended_at AND a.at < b.ended_at
		  AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(f.errors) e WHERE e->>'class' = 'lease_expired')
		ORDER BY 1`); len(overlaps) > 0 {
		t.Errorf("%d jobs ran twice at once with no lease expired, e.g. %v: %s", len(overlaps), overlaps[:min(len(overlaps), 10)],
			describeRuns(t, pool, overlaps[:min(len(overlaps), 3)]))
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE state = 'completed'
		AND coalesce((payload->>'snooze_times')::int, 0) > 0 AND (SELECT count(*) FROM handled h WHERE h.job_id = id) < 1 + (payload->>'snooze_times')::int`); n != 0 {
		t.Errorf("%d snoozing jobs completed before their snoozes ran", n)
	}
	resets := 0
	for _, w := range workers {
		resets += strings.Count(w.stderr.String(), "reconnecting all of the worker's connections")
	}
	t.Logf("connection resets after timeouts: %d; rescued attempts: %d; executions: %d for %d jobs", resets,
		queryInt(t, pool, `SELECT count(*) FROM jobc_jobs_finished f, jsonb_array_elements(f.errors) e WHERE e->>'class' = 'lease_expired'`),
		queryInt(t, pool, `SELECT count(*) FROM handled`), jobs)
}

// describeRuns lists the executions of the given jobs: worker, attempt, start and end.
func describeRuns(t *testing.T, pool *pgxpool.Pool, ids []int64) string {
	t.Helper()
	rows, err := pool.Query(t.Context(), `SELECT job_id, worker, attempt, to_char(at, 'HH24:MI:SS.US'),
		coalesce(to_char(ended_at, 'HH24:MI:SS.US'), '?') FROM handled WHERE job_id = ANY($1) ORDER BY job_id, run`, ids)
	if err != nil {
		return "query executions: " + err.Error()
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id int64
		var worker, at, ended string
		var attempt int
		if err := rows.Scan(&id, &worker, &attempt, &at, &ended); err != nil {
			return "query executions: " + err.Error()
		}
		fmt.Fprintf(&b, "\n\tjob %d on %s, attempt %d, %s to %s", id, worker, attempt, at, ended)
	}
	return b.String()
}
