//go:build unix

package chaostest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/cmd/testworker/chaosjob"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// handledTables are where testworker's handler records executions: handled at the
// start of every execution (run numbers it; ended_at is set when its handler returns,
// unless the process died first), handled_done when one succeeds.
const handledTables = `
CREATE TABLE handled (job_id bigint, n int, worker text, attempt int, at timestamptz DEFAULT now(),
    run bigserial, ended_at timestamptz);
CREATE TABLE handled_done (job_id bigint, n int, worker text, attempt int, at timestamptz DEFAULT now());
`

// setupDB applies jobc's migrations and creates the handled tables.
func setupDB(ctx context.Context, pool *pgxpool.Pool) error {
	if _, err := runtime.Migrate(ctx, pool); err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, handledTables); err != nil {
		return fmt.Errorf("create the handled tables: %w", err)
	}
	return nil
}

// newDB gives the test its own schema, set up for worker processes, and the
// connection string that the processes use to reach it.
func newDB(t *testing.T) (*pgxpool.Pool, string) {
	t.Helper()
	pool := pgtest.NewSchema(t, setupDB)
	return pool, pgtest.SchemaConnString(t, pgtest.SchemaOf(pool))
}

// chaosJob returns the job type the worker processes serve, with the flow control
// limits they run with (workerOpts.limits).
func chaosJob(t *testing.T, limits chaosjob.Limits) *runtime.JobType {
	t.Helper()
	jt, err := chaosjob.NewJobType(chaosjob.DefaultQueue, limits)
	if err != nil {
		t.Fatal(err)
	}
	return jt
}

// enqueue inserts one chaos_job per payload, for workers without flow control, and
// returns their ids, in order.
func enqueue(t *testing.T, pool *pgxpool.Pool, payloads []chaosjob.Payload) []int64 {
	t.Helper()
	return enqueueLimited(t, pool, chaosjob.Limits{}, payloads)
}

// enqueueLimited inserts one chaos_job per payload, for workers that run with the
// flow control limits (the producer computes each job's flow key), and returns their
// ids, in order.
func enqueueLimited(t *testing.T, pool *pgxpool.Pool, limits chaosjob.Limits, payloads []chaosjob.Payload) []int64 {
	t.Helper()
	out, err := runtime.EnqueueMany(t.Context(), pool, chaosJob(t, limits), payloads)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, len(out))
	for i, e := range out {
		ids[i] = e.ID
	}
	return ids
}

// queryInt runs a query that returns one integer.
func queryInt(t *testing.T, pool *pgxpool.Pool, query string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(t.Context(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// queryIDs runs a query that returns job ids.
func queryIDs(t *testing.T, pool *pgxpool.Pool, query string, args ...any) []int64 {
	t.Helper()
	rows, err := pool.Query(t.Context(), query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return ids
}

// waitFor polls cond every 50ms until it holds, and fails the test with cond's last
// status when timeout passes first. The message also gives the slowest call of cond:
// a slow database explains many a timeout.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() (done bool, status string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var slowest time.Duration
	for {
		began := time.Now()
		done, status := cond()
		slowest = max(slowest, time.Since(began))
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s (slowest check %s); last seen: %s",
				timeout, what, slowest.Round(time.Millisecond), status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stateCounts describes how many of the jobs are in each state, for waitFor.
func stateCounts(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	rows, err := pool.Query(t.Context(), `
		SELECT state::text, count(*) FROM jobc_jobs GROUP BY state
		UNION ALL
		SELECT state::text, count(*) FROM jobc_jobs_finished GROUP BY state
		ORDER BY 1`)
	if err != nil {
		return "query states: " + err.Error()
	}
	defer rows.Close()
	s := ""
	for rows.Next() {
		var state string
		var n int
		if err := rows.Scan(&state, &n); err != nil {
			return "query states: " + err.Error()
		}
		s += fmt.Sprintf("%s=%d ", state, n)
	}
	if err := rows.Err(); err != nil {
		return "query states: " + err.Error()
	}
	return "jobs " + s
}

// logDistribution logs how many jobs each worker completed.
func logDistribution(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	rows, err := pool.Query(t.Context(), `SELECT worker, count(*) FROM handled_done GROUP BY worker ORDER BY worker`)
	if err != nil {
		t.Errorf("query the distribution of jobs: %v", err)
		return
	}
	defer rows.Close()
	s := ""
	for rows.Next() {
		var worker string
		var n int
		if err := rows.Scan(&worker, &n); err != nil {
			t.Errorf("query the distribution of jobs: %v", err)
			return
		}
		s += fmt.Sprintf(" %s=%d", worker, n)
	}
	if err := rows.Err(); err != nil {
		t.Errorf("query the distribution of jobs: %v", err)
	}
	t.Logf("jobs completed per worker:%s", s)
}

// describeJobs describes the given jobs' states, attempts and errors, for messages.
func describeJobs(t *testing.T, pool *pgxpool.Pool, ids []int64) string {
	t.Helper()
	s := ""
	for _, id := range ids {
		info, err := runtime.GetJob(t.Context(), pool, id)
		if err != nil {
			s += fmt.Sprintf("\n\tjob %d: %v", id, err)
			continue
		}
		b, err := json.Marshal(info.Errors)
		if err != nil {
			b = []byte(err.Error())
		}
		s += fmt.Sprintf("\n\tjob %d: %s, attempt %d, errors %s", id, info.State, info.Attempt, b)
	}
	return s
}

// describeLeases describes the given unfinished jobs' leases, for messages.
func describeLeases(t *testing.T, pool *pgxpool.Pool, ids []int64) string {
	t.Helper()
	rows, err := pool.Query(t.Context(), `SELECT id, state::text, attempt, coalesce(lease_owner, ''),
		coalesce(to_char(lease_expires_at - now(), 'SS.MS"s"'), '-'), errors::text
		FROM jobc_jobs WHERE id = ANY($1) ORDER BY id`, ids)
	if err != nil {
		return "query leases: " + err.Error()
	}
	defer rows.Close()
	s := ""
	for rows.Next() {
		var id int64
		var state, owner, left, errs string
		var attempt int
		if err := rows.Scan(&id, &state, &attempt, &owner, &left, &errs); err != nil {
			return "query leases: " + err.Error()
		}
		s += fmt.Sprintf("\n\tjob %d: %s, attempt %d, lease_owner %q, lease expires in %s, errors %s", id, state, attempt, owner, left, errs)
	}
	if err := rows.Err(); err != nil {
		return "query leases: " + err.Error()
	}
	return s
}
