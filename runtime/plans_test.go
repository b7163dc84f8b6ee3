package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// planLog is a pool whose sessions log the plan of every statement they run, the
// statements inside functions included, with the rows each node read (auto_explain,
// loaded per session: the server's user must be a superuser, as the test clusters'
// is).
type planLog struct {
	mu    sync.Mutex
	plans []string
}

// newPlanLog gives the test its own migrated schema, through base (whose statements
// are not logged) and through pool, which logs them.
func newPlanLog(t *testing.T) (log *planLog, base, pool *pgxpool.Pool) {
	t.Helper()
	base = newDB(t)
	log = &planLog{}
	return log, base, log.pool(t, pgtest.SchemaOf(base))
}

func (l *planLog) pool(t *testing.T, schema string) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(pgtest.SchemaConnString(t, schema))
	if err != nil {
		t.Fatal(err)
	}
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		for _, s := range []string{`LOAD 'auto_explain'`, `SET auto_explain.log_min_duration = 0`,
			`SET auto_explain.log_nested_statements = on`, `SET auto_explain.log_analyze = on`,
			`SET auto_explain.log_timing = off`, `SET auto_explain.log_level = notice`,
			`SET client_min_messages = notice`} {
			if _, err := c.Exec(ctx, s); err != nil {
				return fmt.Errorf("%s (auto_explain needs a superuser): %w", s, err)
			}
		}
		return nil
	}
	cfg.ConnConfig.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		if strings.Contains(n.Message, "Query Text:") {
			l.mu.Lock()
			l.plans = append(l.plans, n.Message)
			l.mu.Unlock()
		}
	}
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// seqScan is a sequential scan node of a logged plan, with what it read: its rows
// and those its filter removed, per loop (none if it never ran).
var seqScan = regexp.MustCompile(`Seq Scan on (jobc_\w+)[^\n]*?(?:\(actual rows=(\d+) loops=(\d+)\)|\(never executed\))(?:\n\s*Filter:[^\n]*)?(?:\n\s*Rows Removed by Filter: (\d+))?`)

// scan is a sequential scan of a logged plan: the table, the rows it read (those it
// returned and those its filter removed, over every loop), the plan, and whether the
// statement was one of a function's rather than one the runtime sends.
type scan struct {
	table  string
	read   int
	plan   string
	inside bool
}

// seqScans returns the sequential scans of jobc's tables in the plans logged, and how
// many plans of statements inside functions there were.
func (l *planLog) seqScans() (scans []scan, inside int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range l.plans {
		_, text, _ := strings.Cut(p, "Query Text:")
		in := !strings.HasPrefix(strings.TrimSpace(text), "-- name:")
		if in {
			inside++
		}
		for _, m := range seqScan.FindAllStringSubmatch(p, -1) {
			rows, _ := strconv.Atoi(m[2])
			loops, _ := strconv.Atoi(m[3])
			removed, _ := strconv.Atoi(m[4])
			scans = append(scans, scan{table: m[1], read: (rows + removed) * loops, plan: p, inside: in})
		}
	}
	return scans, inside
}

// TestWorkflowPlansWalkKeysOnEmptyTables: a session plans a workflow function's
// statements once, when it first runs them, and on a fresh database (before
// autovacuum's first ANALYZE) the tables are empty then. Those plans must still read
// the workflow tables by their keys: one that hashed a sequential scan of the steps
// made every later start and step of the session cost more than the one before
// (2,000 chains started on a fresh database: 1.66 ms a start, against 0.88 ms).
// Every statement the starts and the worker run inside jobc's functions is logged
// with its plan, from the first; none may be compiled by JIT either.
func TestWorkflowPlansWalkKeysOnEmptyTables(t *testing.T) {
	t.Parallel()
	log, base, pool := newPlanLog(t)
	const workflows = 30
	runOrderWorkflows(t, base, pool, workflows, nil)
	if n := countRows(t, base, `SELECT count(*) FROM jobc_workflows WHERE state = 'completed'`); n != workflows {
		t.Fatalf("%d of %d workflows completed", n, workflows)
	}

	scans, inside := log.seqScans()
	for _, sc := range scans {
		if sc.inside && strings.HasPrefix(sc.table, "jobc_workflow") {
			t.Errorf("a statement inside a function scans %s sequentially:\n%s", sc.table, sc.plan)
		}
	}
	if inside < 4*workflows {
		t.Fatalf("%d plans of statements inside functions logged; want at least one per step (%d)", inside, 4*workflows)
	}
	log.noIndexWalks(t)

	// Nor may any statement be compiled (JIT, at the server's default thresholds):
	// the penalty costs of the settings above and the estimates of JSON set-returning
	// functions (100 rows each) once put a start's statement at 190,000, and its
	// compilation took 28 of the 31 ms the start then took.
	log.noJIT(t, "")
}

// TestStepEndsFindStepsByKey: a step's end looks for the rows of the steps it may run
// by their keys, whatever the statistics: with the tables analyzed before any step
// ended, the planner made a NOT EXISTS of jobc_workflow_ready an anti-join that read
// a workflow's steps by workflow_id alone, so that each step's end read every row its
// workflow had so far.
func TestStepEndsFindStepsByKey(t *testing.T) {
	t.Parallel()
	log, base, pool := newPlanLog(t)
	runOrderWorkflows(t, base, pool, 30, func() {
		// Statistics from before any step ended (no step rows), as a fresh
		// deployment's first analysis has them.
		if _, err := base.Exec(t.Context(), `ANALYZE`); err != nil {
			t.Fatal(err)
		}
	})
	plans := log.all()
	if len(plans) == 0 {
		t.Fatal("no plans logged")
	}
	log.noIndexWalks(t)
	for _, p := range plans {
		// (The runtime's own statements, which say their names, read a workflow's
		// every step where they want them all: GetWorkflow, PruneWorkflows.)
		_, text, _ := strings.Cut(p, "Query Text:")
		if m := stepsByWorkflow.FindString(p); m != "" && !strings.HasPrefix(strings.TrimSpace(text), "-- name:") {
			t.Errorf("a statement reads a workflow's every step to find one:\n%s\nin\n%s", m, p)
		}
	}
}

// runOrderWorkflows starts n order workflows through pool, calls started (if not nil),
// and runs a worker on pool until every workflow has ended.
func runOrderWorkflows(t *testing.T, base, pool *pgxpool.Pool, n int, started func()) {
	t.Helper()
	o := newOrderTypes(t)
	wt := o.workflow(t, "")
	for i := range n {
		if _, err := runtime.StartWorkflow(t.Context(), pool, wt, orderInput{OrderID: fmt.Sprintf("o-%d", i), Cents: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if started != nil {
		started()
	}
	w := runtime.NewWorker(pool, testConfig(map[string]runtime.QueueConfig{"orders": {MaxWorkers: 4}}))
	o.register(t, w, 0, nil)
	stop := startWorker(t, w)
	waitFor(t, "every workflow to end", 30*time.Second, func() bool {
		return countRows(t, base, `SELECT count(*) FROM jobc_workflows WHERE state = 'running'`) == 0
	})
	stop()
}

// indexScan is an index scan node of a logged plan: its index, its table, and the line
// after it, which holds its condition if it has one.
var indexScan = regexp.MustCompile(`Index (?:Only )?Scan (?:Backward )?using (\w+) on (\w+)[^\n]*\n([^\n]*)`)

// noIndexWalks fails t for each statement inside a function that walks a workflow
// table's whole index, with no condition on its keys: a NOT EXISTS that PostgreSQL
// made an anti-join, planned on a step table analyzed while empty, read every step
// row's key for each step's end (2,000 at the ninth batch of 250), its probe not
// parameterized by the end's key. (Such a probe is a subquery with OFFSET 0.)
func (l *planLog) noIndexWalks(t *testing.T) {
	t.Helper()
	for _, p := range l.all() {
		_, text, _ := strings.Cut(p, "Query Text:")
		if strings.HasPrefix(strings.TrimSpace(text), "-- name:") {
			continue // the runtime's own, which say their names
		}
		for _, m := range indexScan.FindAllStringSubmatch(p, -1) {
			if strings.HasPrefix(m[2], "jobc_workflow") && !strings.HasPrefix(strings.TrimSpace(m[3]), "Index Cond:") {
				t.Errorf("a statement inside a function walks %s without a condition on its keys:\n%s", m[1], p)
			}
		}
	}
}

// stepsByWorkflow is a read of jobc_workflow_steps by workflow alone: every row of a
// workflow's, where a statement wants one step's.
var stepsByWorkflow = regexp.MustCompile(`Index (?:Only )?Scan using jobc_workflow_steps_pkey on jobc_workflow_steps \w+[^\n]*\n\s*Index Cond: \(workflow_id = [^()]*\)\n`)

// all returns the plans logged.
func (l *planLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.plans)
}

// bitmapScan is a bitmap index scan node of a logged plan, with the entries it read
// and the line after it, which holds its condition if it has one.
var bitmapScan = regexp.MustCompile(`Bitmap Index Scan on (\w+)[^\n]*\(actual rows=(\d+) loops=(\d+)\)\n([^\n]*)`)

// bitmapHeapScan is a bitmap heap scan of jobc_jobs with its conditions (the lines
// between it and the bitmap index scan right under it, whose offset ends the match).
var bitmapHeapScan = regexp.MustCompile(`Bitmap Heap Scan on jobc_jobs \w+[^\n]*\n((?:[ \t]+(?:Recheck Cond|Filter|Rows Removed by \w+|Heap Blocks):[^\n]*\n)*)[ \t]+->  `)

// readsAllItAdmits reports the offsets in plan p of the bitmap index scans whose heap
// scan names no id: each reads every row its index's predicate admits, as the rescuer
// reads the running jobs' leases (jobc_rescue_expired, by design: no index holds a
// lease), which is not a lookup by id however many entries it reads.
func readsAllItAdmits(p string) map[int]bool {
	at := map[int]bool{}
	for _, m := range bitmapHeapScan.FindAllStringSubmatchIndex(p, -1) {
		if !strings.Contains(p[m[2]:m[3]], "(id = ") {
			at[m[1]] = true
		}
	}
	return at
}

// noJIT fails t for each logged plan compiled by JIT (milliseconds of compiling for
// a statement that runs in microseconds), of the runtime's statements and of those
// inside functions; doing, if set, says what the statements were for.
func (l *planLog) noJIT(t *testing.T, doing string) {
	t.Helper()
	if doing != "" {
		doing = " " + doing
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range l.plans {
		if strings.Contains(p, "\nJIT:") {
			t.Errorf("a statement%s is compiled (JIT):\n%s", doing, p)
		}
	}
}

// TestHotPlansOnAFreshDatabase: a worker started on a freshly migrated database plans
// its statements while the tables are empty, and a generic plan made then is kept
// until autovacuum first analyzes the table, which on a busy new deployment came
// about 95 s in: the claim then read every row of jobc_jobs to find the ones it had
// chosen (69k buffers, 163 ms a claim), and throughput fell from 13.7k to 4k jobs/s.
// Here the worker polls an empty queue long enough for its statements' plans to be
// made and cached, thousands of jobs then arrive, and no statement it runs, its own
// (claims, outcomes, retries, heartbeats, maintenance) or one inside jobc's functions,
// may walk a table sequentially to find a few rows. (RetryJobs did, in one run of
// thirty: planned when the table was small, it read 3,000 rows to retry 2.)
func TestHotPlansOnAFreshDatabase(t *testing.T) {
	t.Parallel()
	log, base, pool := newPlanLog(t)
	ctx := t.Context()
	jt := runtime.MustJobType(runtime.JobType{Kind: "fresh", Queue: "fresh", Priority: 5, MaxAttempts: 3,
		Backoff:      runtime.Backoff{Kind: runtime.BackoffConstant, Initial: 10 * time.Millisecond},
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}}})
	cfg := testConfig(map[string]runtime.QueueConfig{"fresh": {MaxWorkers: 20}})
	cfg.LeaseDuration = time.Second // heartbeats every third of it
	w := runtime.NewWorker(pool, cfg)
	var handled atomic.Int64
	if err := runtime.Handle(w, jt, func(_ context.Context, j *runtime.Job, p map[string]any) error {
		if p["long"] == true {
			time.Sleep(2 * cfg.LeaseDuration) // outlives six heartbeats
			return nil
		}
		n := handled.Add(1)
		if n%10 == 0 && j.Attempt == 1 {
			return errors.New("fails once") // retried: the retry path too
		}
		if n%200 == 0 {
			time.Sleep(cfg.LeaseDuration / 2) // outlives a heartbeat
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	stop := startWorker(t, w)
	// Plans are cached after a statement's fifth run; ten polls and scheduler passes
	// of an empty queue make them on empty tables, and a few long jobs alone in the
	// table make the heartbeat's.
	time.Sleep(10 * max(cfg.PollInterval, cfg.SchedulerInterval))
	const long = 4
	if _, err := runtime.EnqueueMany(ctx, base, jt, slices.Repeat([]map[string]any{{"long": true}}, long)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the long jobs to complete", time.Minute, func() bool {
		return countRows(t, base, `SELECT count(*) FROM jobc_jobs_finished WHERE state = 'completed'`) == long
	})
	const jobs = 4000
	payloads := make([]map[string]any, 500)
	for i := range payloads {
		payloads[i] = map[string]any{"n": i}
	}
	for range jobs / len(payloads) {
		if _, err := runtime.EnqueueMany(ctx, base, jt, payloads); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "every job to complete", 60*time.Second, func() bool {
		return countRows(t, base, `SELECT count(*) FROM jobc_jobs_finished WHERE state = 'completed'`) == long+jobs
	})
	stop()
	// A rescue on the fresh tables, once the worker (whose rescuer would take the job
	// first) has stopped: once, its report per queue read the rescued jobs back
	// through history, every partition from its start.
	if _, err := base.Exec(ctx, `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload,
		    max_attempts, attempt, lease_owner, lease_expires_at)
		VALUES ('fresh', 'fresh', 'running', 5, 1, '{}', 1, 1, 'gone', now() - interval '1 minute')`); err != nil {
		t.Fatal(err)
	}
	if res, err := runtime.NewRescuerForTest(pool, slog.New(slog.DiscardHandler), 10).RunOnce(ctx); err != nil || res.Failed != 1 {
		t.Errorf("a rescue of the job a worker left: %+v, %v", res, err)
	}

	// The statements each job needs ran after the jobs came: a claim, an outcome, a
	// retry and heartbeats.
	log.mu.Lock()
	late := log.plans[len(log.plans)/2:]
	log.mu.Unlock()
	for what, text := range map[string]string{
		"a claim":     "-- name: ClaimJobs",
		"an outcome":  "DELETE FROM jobc_jobs j",
		"a retry":     "-- name: RetryJobs",
		"a heartbeat": "SET lease_expires_at = now() + make_interval(secs => p_lease_seconds)",
	} {
		if !slices.ContainsFunc(late, func(p string) bool { return strings.Contains(p, text) }) {
			t.Errorf("no plan of %s (%q) logged in the second half of the run", what, text)
		}
	}
	log.noSlowPlans(t, "")
}

// noSlowPlans fails t for each logged sequential scan that read more rows than a
// statement needs to find a few on a table of thousands, naming the first three with
// their plans, and for each plan compiled by JIT (noJIT); doing, if set, says what
// the statements were for.
func (l *planLog) noSlowPlans(t *testing.T, doing string) {
	t.Helper()
	l.noJIT(t, doing)
	const most = 200
	if doing != "" {
		doing = " " + doing
	}
	scans, _ := l.seqScans()
	bad := 0
	for _, sc := range scans {
		if sc.read > most {
			if bad++; bad <= 3 {
				t.Errorf("a sequential scan of %s read %d rows%s:\n%s", sc.table, sc.read, doing, sc.plan)
			}
		}
	}
	if bad > 3 {
		t.Errorf("and %d more sequential scans like these", bad-3)
	}
}

// TestHeartbeatsAreHOT: a heartbeat writes a running job's lease expiry and nothing
// else, and no index holds it, so it is a HOT update in the room the table's fillfactor
// leaves: a fleet of long jobs heartbeating adds no index entries and few pages. (With
// the expiry as the rescuer's index key, none of them was.)
func TestHeartbeatsAreHOT(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	const running, beats = 400, 10
	var ids []int64
	rows, err := pool.Query(ctx, `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts,
			attempt, attempted_at, lease_owner, lease_expires_at)
		SELECT 'k', 'q', 'running', 5, 1, '{"email":"someone@example.com"}', 3, 1, now(), 'w', now() + interval '30 seconds'
		FROM generate_series(1, $1) RETURNING id`, running)
	if err != nil {
		t.Fatal(err)
	}
	if ids, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
		t.Fatal(err)
	}
	conn, err := pool.Acquire(ctx) // one session, whose statistics it flushes
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for range beats {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM jobc_extend_leases($1, 'w', 30, true)`, ids).Scan(&n); err != nil || n != running {
			t.Fatalf("a heartbeat extended %d leases (%v), want %d", n, err, running)
		}
	}
	var upd, hot int64
	if _, err := conn.Exec(ctx, `SELECT pg_stat_force_next_flush()`); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relid = 'jobc_jobs'::regclass`).Scan(&upd, &hot); err != nil {
		t.Fatal(err)
	}
	if upd != running*beats {
		t.Fatalf("the statistics count %d updates of jobc_jobs, want the %d heartbeats'", upd, running*beats)
	}
	// Alone on a server, 90% or more are HOT: the page room the last round's versions
	// took is pruned before the next. Beside other sessions' open snapshots nothing is
	// pruned, and the room the fillfactor leaves (a quarter of a page's rows more)
	// takes the first round's alone.
	if hot < running/10 {
		t.Errorf("%d of %d heartbeat updates were HOT, want a tenth of a round (%d) at least", hot, upd, running/10)
	}
}

// TestRescuePlansOnAFreshDatabase: the rescuer's functions find the jobs they rescue by
// id, whatever plans a session cached while jobc_jobs was nearly empty. A session plans
// a function's statements anew for its first five calls, then may keep a generic plan;
// made on a table of a few rows, that plan read the whole table on every later rescue
// (under load in CI: 3,456 rows read to rescue 41).
func TestRescuePlansOnAFreshDatabase(t *testing.T) {
	t.Parallel()
	log, base, pool := newPlanLog(t)
	ctx := t.Context()
	conn, err := pool.Acquire(ctx) // one session: its plans are the ones cached
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	leaveExpired := func(n int) {
		t.Helper()
		if _, err := base.Exec(ctx, `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload,
			    max_attempts, attempt, lease_owner, lease_expires_at)
			SELECT 'fresh', 'fresh', 'running', 5, 1, '{}', 3, 1, 'gone', now() - interval '1 minute'
			FROM generate_series(1, $1)`, n); err != nil {
			t.Fatal(err)
		}
	}
	rescue := func(want int) {
		t.Helper()
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM jobc_rescue_expired(100)`).Scan(&n); err != nil || n != want {
			t.Fatalf("rescued %d jobs (%v), want %d", n, err, want)
		}
	}
	for range 8 {
		leaveExpired(1)
		rescue(1)
	}
	if _, err := base.Exec(ctx, `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts)
		SELECT 'fresh', 'fresh', 'available', 5, 1, '{}', 3 FROM generate_series(1, 3000)`); err != nil {
		t.Fatal(err)
	}
	log.mu.Lock()
	log.plans = nil
	log.mu.Unlock()
	leaveExpired(41)
	rescue(41)
	log.noSlowPlans(t, "to rescue 41 jobs")
}

// TestFlowPlansOnAFreshDatabase is TestHotPlansOnAFreshDatabase for kinds under flow
// control, whose jobs jobc_claim_flow claims and whose outcomes pass places on. On a
// freshly migrated database, before autovacuum's first ANALYZE, a burn-down of 20,000
// such jobs ran at 3,900 jobs/s, against 31,000 since (BenchmarkClaimFinishFlow): the
// claim looked the jobs it had chosen up by id on jobc_jobs_claim_version_idx, whose
// key ends in id, walking it whole (23 ms a claim). Every statement the worker runs, its own and those inside
// jobc's functions, is logged; none may look jobs up by id on an index that does not
// lead with it, nor be compiled.
func TestFlowPlansOnAFreshDatabase(t *testing.T) {
	t.Parallel()
	log, base, pool := newPlanLog(t)
	ctx := t.Context()
	schema := `{"type":"object","required":["n"],"properties":{"n":{"type":"integer"}}}`
	kind := runtime.MustJobType(runtime.JobType{Kind: "limited", Queue: "flowing", Priority: 5, MaxAttempts: 3,
		Flow:         &runtime.Flow{Concurrency: 1000}, // the kind one key, its limit never reached
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: schema}}})
	keyed := runtime.MustJobType(runtime.JobType{Kind: "keyed", Queue: "flowing", Priority: 5, MaxAttempts: 3,
		Flow:         &runtime.Flow{By: []string{"n"}, Concurrency: 2},
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: schema}}})
	// The jobs wait before the worker starts, as after a deploy: its first plans are
	// made on thousands of rows that no ANALYZE has counted.
	const jobs = 3000
	payloads := make([]map[string]any, jobs)
	for i := range payloads {
		payloads[i] = map[string]any{"n": i % 50} // keyed: 50 keys of 60 jobs, 2 at a time each
	}
	for _, jt := range []*runtime.JobType{kind, keyed} {
		if _, err := runtime.EnqueueMany(ctx, base, jt, payloads); err != nil {
			t.Fatal(err)
		}
	}
	w := runtime.NewWorker(pool, testConfig(map[string]runtime.QueueConfig{"flowing": {MaxWorkers: 20}}))
	for _, jt := range []*runtime.JobType{kind, keyed} {
		if err := runtime.Handle(w, jt, func(context.Context, *runtime.Job, map[string]any) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	stop := startWorker(t, w)
	waitFor(t, "every job to complete", 60*time.Second, func() bool {
		return countRows(t, base, `SELECT count(*) FROM jobc_jobs_finished WHERE state = 'completed'`) == 2*jobs
	})
	stop()
	log.mu.Lock()
	late := log.plans[len(log.plans)/2:]
	log.mu.Unlock()
	if !slices.ContainsFunc(late, func(p string) bool { return strings.Contains(p, "jobc_claim_flow") || strings.Contains(p, "flow_key") }) {
		t.Error("no plan of a flow claim logged in the second half of the run")
	}
	log.noJIT(t, "")
	// Jobs looked up by id go through an index that leads with id: one whose key ends
	// in id (the claim indexes) is read whole to find them, by an index scan whose
	// only condition is the id or by a bitmap scan with none. (Not noSlowPlans: under
	// load its rule on sequential scans caught a history read of 303 rows, another
	// matter than this test's.)
	rows, err := base.Query(ctx, `SELECT indexrelid::regclass::text FROM pg_index
		WHERE indrelid = 'jobc_jobs'::regclass AND indkey[0] <> (SELECT attnum FROM pg_attribute
		    WHERE attrelid = 'jobc_jobs'::regclass AND attname = 'id')`)
	if err != nil {
		t.Fatal(err)
	}
	notByID, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(notByID) == 0 {
		t.Fatalf("the indexes of jobc_jobs not led by id: %v, %v", notByID, err)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	for _, p := range log.plans {
		for _, m := range idLookup.FindAllStringSubmatch(p, -1) {
			if slices.Contains(notByID, m[1]) {
				t.Errorf("jobs are looked up by id on %s, whose key does not lead with id:\n%s", m[1], p)
			}
		}
		admits := readsAllItAdmits(p)
		for _, i := range bitmapScan.FindAllStringSubmatchIndex(p, -1) {
			if admits[i[0]] {
				continue
			}
			m := submatches(p, i)
			rows, _ := strconv.Atoi(m[2])
			loops, _ := strconv.Atoi(m[3])
			if slices.Contains(notByID, m[1]) && !strings.Contains(m[4], "Index Cond:") && rows*loops > 200 {
				t.Errorf("a bitmap scan reads %s whole (%d entries), whose key does not lead with id:\n%s", m[1], rows*loops, p)
			}
		}
	}
}

// TestReadsAllItAdmits: the bitmap scans the plan tests pass over are those whose heap
// scan names no id, as the rescuer's read of every running flow job's lease (CI logged
// this one, 574 entries, under load); a lookup by id through a bitmap scan of an index
// that does not lead with id is still caught.
func TestReadsAllItAdmits(t *testing.T) {
	rescue := `                                                ->  Bitmap Heap Scan on jobc_jobs y_1  (cost=4.24..66.12 rows=7 width=16) (actual rows=0 loops=1)
                                                      Recheck Cond: ((state = 'running'::jobc_state) AND (flow_key IS NOT NULL))
                                                      Filter: ((lease_expires_at)::timestamp with time zone < now())
                                                      Heap Blocks: exact=26
                                                      ->  Bitmap Index Scan on jobc_jobs_flow_running_idx  (cost=0.00..4.24 rows=20 width=0) (actual rows=574 loops=1)
`
	lookup := `                      ->  Bitmap Heap Scan on jobc_jobs x  (cost=38.88..72.64 rows=1 width=54) (actual rows=9 loops=1)
                            Recheck Cond: (state = 'available'::jobc_state)
                            Filter: (id = ANY ($0))
                            Rows Removed by Filter: 2991
                            Heap Blocks: exact=40
                            ->  Bitmap Index Scan on jobc_jobs_claim_version_idx  (cost=0.00..38.88 rows=10 width=0) (actual rows=3000 loops=1)
`
	for _, c := range []struct {
		plan   string
		passed bool
	}{{rescue, true}, {lookup, false}} {
		scans := bitmapScan.FindAllStringIndex(c.plan, -1)
		if len(scans) != 1 {
			t.Fatalf("%d bitmap index scans in\n%s", len(scans), c.plan)
		}
		if got := readsAllItAdmits(c.plan)[scans[0][0]]; got != c.passed {
			t.Errorf("passed over: %v, want %v:\n%s", got, c.passed, c.plan)
		}
	}
}

// submatches returns the strings of the submatches at offsets i in s.
func submatches(s string, i []int) []string {
	m := make([]string, len(i)/2)
	for k := range m {
		if i[2*k] >= 0 {
			m[k] = s[i[2*k]:i[2*k+1]]
		}
	}
	return m
}

// idLookup is an index scan of a logged plan whose condition is on id alone.
var idLookup = regexp.MustCompile(`Index (?:Only )?Scan using (\w+) on jobc_jobs \w+[^\n]*\n\s*Index Cond: \(id = `)
