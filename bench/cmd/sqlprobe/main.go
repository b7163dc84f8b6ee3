// Command sqlprobe times jobc's hot statements, and candidate rewrites of them, with
// EXPLAIN (ANALYZE, BUFFERS, WAL) on a fresh database holding -jobs available jobs:
// each variant runs -reps times inside a transaction that is rolled back, so every
// repetition sees the same table, and the median execution time is printed. Execution
// times inside the server are far less noisy on a shared machine than end-to-end rates.
//
// The statements mirror queries/execution.sql and queries/enqueue.sql as of this writing.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/bench"
)

const claimSQL = `WITH picked AS (
    SELECT j.id FROM jobc_jobs j
    WHERE j.state = 'available' AND j.queue = 'default'
      AND EXISTS (
          SELECT 1
          FROM (SELECT unnest('{bench_noop}'::text[]) AS kind,
                       unnest('{1}'::int[]) AS min_version,
                       unnest('{1}'::int[]) AS max_version) k
          WHERE k.kind = j.kind AND j.payload_version BETWEEN k.min_version AND k.max_version)
    ORDER BY j.priority, j.available_at, j.id
    LIMIT $1
    FOR UPDATE SKIP LOCKED
)
UPDATE jobc_jobs j
SET state = 'running', attempt = j.attempt + 1, attempted_at = now(),
    lease_owner = 'w1', lease_expires_at = now() + make_interval(secs => 30)
FROM picked WHERE j.id = picked.id
RETURNING j.id, j.kind, j.queue, j.priority, j.payload_version, j.payload, j.metadata,
          j.attempt, j.max_attempts, j.created_at`

// claimAnySQL filters (kind, version) with plain conditions instead of EXISTS over
// unnest, as a worker with one kind and version range could.
const claimAnySQL = `WITH picked AS (
    SELECT j.id FROM jobc_jobs j
    WHERE j.state = 'available' AND j.queue = 'default'
      AND j.kind = ANY('{bench_noop}'::text[]) AND j.payload_version BETWEEN 1 AND 1
    ORDER BY j.priority, j.available_at, j.id
    LIMIT $1
    FOR UPDATE SKIP LOCKED
)
UPDATE jobc_jobs j
SET state = 'running', attempt = j.attempt + 1, attempted_at = now(),
    lease_owner = 'w1', lease_expires_at = now() + make_interval(secs => 30)
FROM picked WHERE j.id = picked.id
RETURNING j.id, j.kind, j.queue, j.priority, j.payload_version, j.payload, j.metadata,
          j.attempt, j.max_attempts, j.created_at`

// claimArraySQL updates WHERE id = ANY(ARRAY(subquery)), so even the generic plan
// reaches the picked rows through the primary key instead of hashing a scan of the table.
const claimArraySQL = `UPDATE jobc_jobs j
SET state = 'running', attempt = j.attempt + 1, attempted_at = now(),
    lease_owner = 'w1', lease_expires_at = now() + make_interval(secs => 30)
WHERE j.id = ANY(ARRAY(
    SELECT p.id FROM jobc_jobs p
    WHERE p.state = 'available' AND p.queue = 'default'
      AND EXISTS (
          SELECT 1
          FROM (SELECT unnest('{bench_noop}'::text[]) AS kind,
                       unnest('{1}'::int[]) AS min_version,
                       unnest('{1}'::int[]) AS max_version) k
          WHERE k.kind = p.kind AND p.payload_version BETWEEN k.min_version AND k.max_version)
    ORDER BY p.priority, p.available_at, p.id
    LIMIT $1
    FOR UPDATE SKIP LOCKED))
RETURNING j.id, j.kind, j.queue, j.priority, j.payload_version, j.payload, j.metadata,
          j.attempt, j.max_attempts, j.created_at`

const finishTail = `
), keys AS (
    DELETE FROM jobc_unique_keys u USING done d
    WHERE u.job_id = d.id AND d.unique_key IS NOT NULL
      AND NOT ('completed' = ANY(coalesce(d.unique_finished, '{}')))
)
INSERT INTO jobc_jobs_finished (
    id, kind, queue, state, priority, payload_version, payload, metadata, available_at,
    attempt, max_attempts, errors, unique_key, created_at, attempted_at, finished_at
)
SELECT id, kind, queue, 'completed', priority, payload_version, payload, metadata, available_at,
       attempt, max_attempts, errors, unique_key, created_at, attempted_at, now()
FROM done
RETURNING id`

// completeSQL is CompleteJobs: a join with two unnests.
const completeSQL = `WITH done AS (
    DELETE FROM jobc_jobs j
    USING (SELECT unnest($1::bigint[]) AS id, unnest($2::int[]) AS attempt) f
    WHERE j.id = f.id AND j.attempt = f.attempt
      AND j.state = 'running' AND j.lease_owner = 'w1'
    RETURNING j.*` + finishTail

// completeAnySQL drives the delete from the primary key with id = ANY.
const completeAnySQL = `WITH done AS (
    DELETE FROM jobc_jobs j
    WHERE j.id = ANY($1::bigint[])
      AND j.attempt = ($2::int[])[array_position($1::bigint[], j.id)]
      AND j.state = 'running' AND j.lease_owner = 'w1'
    RETURNING j.*` + finishTail

// completeMatSQL joins a materialized unnest and names the ids for the primary key.
const completeMatSQL = `WITH f AS MATERIALIZED (
    SELECT * FROM unnest($1::bigint[], $2::int[]) AS f(id, attempt)
), done AS (
    DELETE FROM jobc_jobs j
    USING f
    WHERE j.id = ANY($1::bigint[]) AND j.id = f.id AND j.attempt = f.attempt
      AND j.state = 'running' AND j.lease_owner = 'w1'
    RETURNING j.*` + finishTail

// completeFromSQL joins the two-argument unnest as a function scan in FROM.
const completeFromSQL = `WITH done AS (
    DELETE FROM jobc_jobs j
    USING unnest($1::bigint[], $2::int[]) AS f(id, attempt)
    WHERE j.id = f.id AND j.attempt = f.attempt
      AND j.state = 'running' AND j.lease_owner = 'w1'
    RETURNING j.*` + finishTail

// completeUpdateSQL marks the jobs completed in place (River's way) instead of moving
// them; jobc_jobs' CHECK constraint is dropped for this probe.
const completeUpdateSQL = `UPDATE jobc_jobs j SET state = 'completed', lease_owner = NULL, lease_expires_at = NULL
    WHERE j.id = ANY($1::bigint[])
      AND j.attempt = ($2::int[])[array_position($1::bigint[], j.id)]
      AND j.state = 'running' AND j.lease_owner = 'w1'
    RETURNING id`

// insertSQL is InsertJob's shape: a plain INSERT whose RETURNING calls jobc_wake only
// when a worker of the queue sleeps; insertCTESQL is the shape it replaced, the insert
// in a CTE joined to a jobc_wake call for every available job.
const insertSQL = `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, metadata, available_at, max_attempts)
    VALUES ('bench_noop', 'default', 'available', 5, 1, '{"n": 1, "email": "user@example.com"}', '{}', now(), 5)
    RETURNING id, CASE WHEN state = 'available'
                            AND EXISTS (SELECT 1 FROM jobc_sleepers s WHERE s.queue = jobc_jobs.queue)
                       THEN jobc_wake(queue) ELSE false END AS woke`

const insertCTESQL = `WITH ins AS (
    INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, metadata, available_at, max_attempts)
    VALUES ('bench_noop', 'default', 'available', 5, 1, '{"n": 1, "email": "user@example.com"}', '{}', now(), 5)
    RETURNING id, queue, state
)
SELECT ins.id FROM ins
LEFT JOIN LATERAL (SELECT jobc_wake(ins.queue) WHERE ins.state = 'available') n ON true`

const insertQuietSQL = `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, metadata, available_at, max_attempts)
    VALUES ('bench_noop', 'default', 'available', 5, 1, '{"n": 1, "email": "user@example.com"}', '{}', now(), 5)
    RETURNING id`

var (
	generic bool
	probeN  int
)

var execTime = regexp.MustCompile(`Execution Time: ([\d.]+) ms`)

func main() {
	jobs := flag.Int("jobs", 20000, "available jobs in the table")
	reps := flag.Int("reps", 7, "repetitions of each variant")
	batches := flag.String("batches", "10,100,300,1000", "claim/complete batch sizes")
	dead := flag.Int("dead", 0, "first burn (claim and complete, committed) this many jobs, leaving dead tuples and index entries behind, as a running burn-down does without vacuum")
	show := flag.Bool("plans", false, "print the first plan of each variant")
	flag.BoolVar(&generic, "generic", true, "explain the generic plan (PREPARE, plan_cache_mode = force_generic_plan), which is what a pgx connection that cached the statement runs after five executions")
	running := flag.Int("running", 0, "leave this many more jobs claimed (running, same owner) while probing, as a worker's in-flight and not yet recorded jobs are")
	fillfactor := flag.Int("fillfactor", 0, "set jobc_jobs' fillfactor before the bulk insert")
	flag.Parse()
	ctx := context.Background()
	e, err := bench.Open(ctx, bench.NewSystem("jobc"), 4)
	fail(err)
	defer e.Close()
	if *fillfactor > 0 {
		_, err := e.Pool.Exec(ctx, fmt.Sprintf("ALTER TABLE jobc_jobs SET (fillfactor = %d)", *fillfactor))
		fail(err)
	}
	fail(e.Sys.BulkInsert(ctx, e.Pool, *jobs))
	_, err = e.Pool.Exec(ctx, `ANALYZE jobc_jobs; ANALYZE jobc_jobs_finished`)
	fail(err)
	if *dead > 0 {
		for done := 0; done < *dead; done += 100 {
			ids, attempts := claim(ctx, e.Pool, 100)
			_, err := e.Pool.Exec(ctx, completeAnySQL, ids, attempts)
			fail(err)
		}
	}
	if *running > 0 {
		claim(ctx, e.Pool, *running)
	}
	fmt.Printf("plans: generic=%v\n", generic)
	fmt.Printf("jobc_jobs (fillfactor %d): %d jobs, %d burnt before (dead), %d more running; medians of %d runs (ms, inside the server)\n\n", *fillfactor, *jobs, *dead, *running, *reps)

	type probe struct {
		name  string
		sql   string
		setup bool // claim the batch first, in the same transaction
	}
	var bs []int
	for _, s := range strings.Split(*batches, ",") {
		n, _ := strconv.Atoi(s)
		bs = append(bs, n)
	}
	probes := []probe{
		{"claim (ClaimJobs, EXISTS over unnest)", claimSQL, false},
		{"claim, kind = ANY + version range", claimAnySQL, false},
		{"claim, UPDATE WHERE id = ANY(ARRAY(...))", claimArraySQL, false},
		{"complete (CompleteJobs, join unnest)", completeSQL, true},
		{"complete, id = ANY + array_position", completeAnySQL, true},
		{"complete, materialized unnest + id = ANY", completeMatSQL, true},
		{"complete, USING unnest(ids, attempts)", completeFromSQL, true},
		{"complete as UPDATE in place (no move)", completeUpdateSQL, true},
	}
	fmt.Printf("%-40s", "statement \\ batch")
	for _, b := range bs {
		fmt.Printf(" %14d", b)
	}
	fmt.Println("   (ms per statement; µs per job; WAL B/job)")
	for _, p := range probes {
		fmt.Printf("%-40s", p.name)
		var plans []string
		for _, b := range bs {
			var ts []float64
			var wal float64
			for r := range *reps {
				t, plan, w := explain(ctx, e, p.sql, p.setup, b)
				ts = append(ts, t)
				wal = w
				if r == 0 {
					plans = append(plans, fmt.Sprintf("-- %s, batch %d\n%s", p.name, b, plan))
				}
			}
			m := bench.Median(ts)
			fmt.Printf(" %5.2f %4.0f %4.0f", m, 1000*m/float64(b), wal/float64(b))
		}
		fmt.Println()
		if *show {
			fmt.Fprintln(os.Stderr, strings.Join(plans, "\n"))
		}
	}
	fmt.Println()
	for _, p := range []probe{{"insert one job (InsertJob)", insertSQL, false}, {"insert one job, CTE joined to jobc_wake", insertCTESQL, false}, {"insert one job without a wake-up", insertQuietSQL, false}} {
		var ts []float64
		var wal float64
		var plan string
		for range *reps * 3 {
			var t float64
			t, plan, wal = explain(ctx, e, p.sql, false, 0)
			ts = append(ts, t)
		}
		fmt.Printf("%-44s %6.3f ms  WAL %4.0f B\n", p.name, bench.Median(ts), wal)
		if *show {
			fmt.Fprintf(os.Stderr, "-- %s\n%s\n", p.name, plan)
		}
	}
}

// claim claims n jobs for owner w1, committed.
func claim(ctx context.Context, db interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, n int) ([]int64, []int32) {
	rows, err := db.Query(ctx, claimSQL, n)
	fail(err)
	var ids []int64
	var attempts []int32
	for rows.Next() {
		vals, err := rows.Values()
		fail(err)
		ids = append(ids, vals[0].(int64))
		attempts = append(attempts, vals[7].(int32))
	}
	fail(rows.Err())
	return ids, attempts
}

var walBytes = regexp.MustCompile(`WAL: records=\d+(?: fpi=\d+)? bytes=(\d+)`)

// explain runs sql under EXPLAIN (ANALYZE, BUFFERS, WAL) in a transaction that is
// rolled back and returns the execution time, the plan and the top node's WAL bytes.
func explain(ctx context.Context, e *bench.Env, sql string, setup bool, batch int) (float64, string, float64) {
	tx, err := e.Pool.Begin(ctx)
	fail(err)
	defer tx.Rollback(ctx)
	if strings.Contains(sql, "'completed'") && strings.HasPrefix(sql, "UPDATE") {
		_, err := tx.Exec(ctx, `ALTER TABLE jobc_jobs DROP CONSTRAINT jobc_jobs_state_unfinished`)
		fail(err)
	}
	var args []any
	if setup {
		ids, attempts := claim(ctx, tx, batch)
		args = []any{ids, attempts}
	} else if batch > 0 {
		args = []any{batch}
	}
	query := "EXPLAIN (ANALYZE, BUFFERS, WAL) " + sql
	if generic {
		_, err := tx.Exec(ctx, "SET LOCAL plan_cache_mode = force_generic_plan")
		fail(err)
		probeN++
		name := fmt.Sprintf("probe%d", probeN)
		_, err = tx.Exec(ctx, "PREPARE "+name+" AS "+sql)
		fail(err)
		// A utility statement's parameters are not described, so pass literals.
		ps := make([]string, len(args))
		for i, a := range args {
			ps[i] = literal(a)
		}
		query = "EXPLAIN (ANALYZE, BUFFERS, WAL) EXECUTE " + name
		if len(ps) > 0 {
			query += "(" + strings.Join(ps, ", ") + ")"
		}
		args = nil
		defer func() { _, _ = e.Pool.Exec(ctx, "SELECT 1") }()
	}
	rows, err := tx.Query(ctx, query, args...)
	fail(err)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	fail(err)
	plan := strings.Join(lines, "\n")
	m := execTime.FindStringSubmatch(plan)
	if m == nil {
		fail(fmt.Errorf("no execution time in\n%s", plan))
	}
	t, _ := strconv.ParseFloat(m[1], 64)
	var wal float64
	if w := walBytes.FindStringSubmatch(plan); w != nil {
		wal, _ = strconv.ParseFloat(w[1], 64)
	}
	return t, plan, wal
}

func literal(a any) string {
	switch v := a.(type) {
	case int:
		return strconv.Itoa(v)
	case []int64:
		s := make([]string, len(v))
		for i, x := range v {
			s[i] = strconv.FormatInt(x, 10)
		}
		return "'{" + strings.Join(s, ",") + "}'"
	case []int32:
		s := make([]string, len(v))
		for i, x := range v {
			s[i] = strconv.Itoa(int(x))
		}
		return "'{" + strings.Join(s, ",") + "}'"
	}
	panic(fmt.Sprintf("literal %T", a))
}

func fail(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "sqlprobe:", err)
		os.Exit(1)
	}
}
