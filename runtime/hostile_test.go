package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime"
)

// One bad row, written by anyone, must not stop the rest: these tests write the rows
// that stopped a queue, the outcome writer or the rescuer on f17ea1b (issue 20) and
// check that the tables refuse them or that the job fails alone.

// wantSQLState asserts that err carries SQLSTATE code.
func wantSQLState(t *testing.T, what string, err error, code string) {
	t.Helper()
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != code {
		t.Errorf("%s: got %v, want SQLSTATE %s", what, err, code)
	}
}

// TestTablesRefuseRowsThatBreakTheirInvariants: whoever writes (here the schema's
// owner, who holds every privilege), a row with a time that is not finite, a priority,
// version or attempt count out of range, a running job without a lease, errors that
// are not a list or metadata that is not an object is refused by the table itself.
func TestTablesRefuseRowsThatBreakTheirInvariants(t *testing.T) {
	pool := newDB(t)
	ctx := t.Context()
	insert := `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts, %s)
		VALUES ('k', 'q', '%s', 5, 1, '{}', 3, %s)`
	for _, c := range []struct{ name, state, cols, vals, constraint string }{
		{"available_at -infinity", "available", "available_at", "'-infinity'", "jobc_time_finite"},
		{"available_at infinity", "scheduled", "available_at", "'infinity'", "jobc_time_finite"},
		{"created_at infinity", "available", "created_at", "'infinity'", "jobc_time_finite"},
		{"attempt -1", "available", "attempt", "-1", "jobc_count_not_negative"},
		{"running without a lease", "running", "attempt", "1", "jobc_jobs_running_leased"},
		{"running without an expiry", "running", "lease_owner", "'w'", "jobc_jobs_running_leased"},
		{"lease expiry infinity", "running", "lease_owner, lease_expires_at", "'w', 'infinity'", "jobc_time_finite"},
		{"errors an object", "available", "errors", `'{"error":"x"}'`, "jobc_jobs_errors_list"},
		{"errors a string", "available", "errors", `'"boom"'`, "jobc_jobs_errors_list"},
		{"metadata a list", "available", "metadata", `'[1]'`, "jobc_jobs_metadata_object"},
		{"errors JSON null", "available", "errors", `'null'`, "jobc_jobs_errors_list"},
		{"metadata a number", "available", "metadata", `'1'`, "jobc_jobs_metadata_object"},
		{"completed in the hot table", "completed", "attempt", "1", "jobc_jobs_state_unfinished"},
		{"failed in the hot table", "failed", "attempt", "1", "jobc_jobs_state_unfinished"},
		{"cancelled in the hot table", "cancelled", "attempt", "1", "jobc_jobs_state_unfinished"},
	} {
		_, err := pool.Exec(ctx, fmt.Sprintf(insert, c.cols, c.state, c.vals))
		wantSQLState(t, c.name, err, "23514")
		if err != nil && !strings.Contains(err.Error(), c.constraint) {
			t.Errorf("%s: %v does not name %s", c.name, err, c.constraint)
		}
	}
	// The rules of one column are its type (a domain): its error names the rule.
	for _, c := range []struct{ name, priority, version, maxAttempts, constraint string }{
		{"priority 10", "10", "1", "3", "jobc_priority_range"},
		{"priority -1", "-1", "1", "3", "jobc_priority_range"},
		{"payload version 0", "5", "0", "3", "jobc_positive_above_zero"},
		{"max_attempts 0", "5", "1", "0", "jobc_positive_above_zero"},
	} {
		_, err := pool.Exec(ctx, fmt.Sprintf(`INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts)
			VALUES ('k', 'q', 'available', %s, %s, '{}', %s)`, c.priority, c.version, c.maxAttempts))
		wantSQLState(t, c.name, err, "23514")
		if err != nil && !strings.Contains(err.Error(), c.constraint) {
			t.Errorf("%s: %v does not name %s", c.name, err, c.constraint)
		}
	}
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_jobs_finished (id, kind, queue, state, priority, payload_version,
		payload, metadata, available_at, attempt, max_attempts, errors, created_at)
		VALUES (1, 'k', 'q', 'failed', 5, 1, '{}', '{}', now(), 1, 1, '[]', now())`); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, set, constraint string }{
		{"finished_at infinity", "finished_at = 'infinity'", "jobc_time_finite"},
		{"attempted_at -infinity", "attempted_at = '-infinity'", "jobc_time_finite"},
		{"errors an object", `errors = '{"error":"x"}'`, "jobc_jobs_finished_errors_list"},
		{"metadata a string", `metadata = '"m"'`, "jobc_jobs_finished_metadata_object"},
	} {
		_, err := pool.Exec(ctx, `UPDATE jobc_jobs_finished SET `+c.set+` WHERE id = 1`)
		wantSQLState(t, "finished: "+c.name, err, "23514")
		if err != nil && !strings.Contains(err.Error(), c.constraint) {
			t.Errorf("finished: %s: %v does not name %s", c.name, err, c.constraint)
		}
	}
	_, err := pool.Exec(ctx, `INSERT INTO jobc_events (event, version, subject, payload, available_at)
		VALUES ('e', 1, 's', '{}', '-infinity')`)
	wantSQLState(t, "event available_at -infinity", err, "23514")
	if err != nil && !strings.Contains(err.Error(), "jobc_time_finite") {
		t.Errorf("event available_at -infinity: %v does not name jobc_time_finite", err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs_all`); n != 1 {
		t.Errorf("%d jobs were written, want the one valid finished job", n)
	}
}

// TestSQLProducerRefusesATimeThatIsNotFinite is failure 1 of issue 20: SELECT
// jobc_enqueue_<kind>(payload, '-infinity') was accepted, and every claim of the queue
// failed from then on. The shared insert now refuses it, naming the run time; the
// queue's other jobs run.
func TestSQLProducerRefusesATimeThatIsNotFinite(t *testing.T) {
	pool := newDB(t)
	ctx := t.Context()
	for _, at := range []string{"-infinity", "infinity"} {
		for _, key := range []string{"NULL", "'k1'"} {
			_, err := pool.Exec(ctx, fmt.Sprintf(`SELECT jobc_enqueue_job('send_email', 'email', 5, 3, 1,
				'{"n":1,"email":"a@example.com"}', '%s', %s, NULL)`, at, key))
			wantSQLState(t, at+" with key "+key, err, "22007")
			if err != nil && !strings.Contains(err.Error(), "not a finite time") {
				t.Errorf("%s: %v does not say the time is not finite", at, err)
			}
		}
	}
	jt := emailType(t, nil)
	done := make(chan int, 10)
	w := runtime.NewWorker(pool, testConfig(map[string]runtime.QueueConfig{"email": {MaxWorkers: 2}}))
	if err := runtime.Handle(w, jt, func(_ context.Context, _ *runtime.Job, p emailPayload) error {
		done <- p.N
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `SELECT jobc_enqueue_job('send_email', 'email', 5, 3, 1, '{"n":7,"email":"a@example.com"}', NULL, NULL, NULL)`); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	select {
	case n := <-done:
		if n != 7 {
			t.Errorf("ran job %d, want 7", n)
		}
	case <-time.After(20 * testConfig(nil).PollInterval):
		t.Fatalf("the job did not run within 20 poll intervals; jobs: %v", jobStates(t, pool))
	}
}

// jobStates lists every job as "id:state", for failure messages.
func jobStates(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT id || ':' || state FROM jobc_jobs_all ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// countingHandler records how many times each job ran.
type countingHandler struct {
	runs [32]atomic.Int32
}

func (h *countingHandler) handle(_ context.Context, _ *runtime.Job, p emailPayload) error {
	h.runs[p.N].Add(1)
	return nil
}

// enqueueN enqueues jobs 1..n of jt and returns their ids by N.
func enqueueN(t *testing.T, pool *pgxpool.Pool, jt *runtime.JobType, n int) map[int]int64 {
	t.Helper()
	ids := map[int]int64{}
	for i := 1; i <= n; i++ {
		e, err := runtime.Enqueue(t.Context(), pool, jt, emailPayload{N: i, Email: "a@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = e.ID
	}
	return ids
}

// finishedState returns the state of job id in jobc_jobs_finished, or "" if it is not
// there.
func finishedState(t *testing.T, pool *pgxpool.Pool, id int64) string {
	t.Helper()
	var st string
	err := pool.QueryRow(context.Background(), `SELECT state::text FROM jobc_jobs_finished WHERE id = $1`, id).Scan(&st)
	if err != nil && !strings.Contains(err.Error(), "no rows") {
		t.Fatal(err)
	}
	return st
}

// poisonedCopy returns the failed row of jobc_jobs_finished whose last error is
// jobc_poisoned and names job id, with that error's message.
func poisonedCopy(t *testing.T, pool *pgxpool.Pool, id int64) (int64, string) {
	t.Helper()
	var copyID int64
	var msg string
	err := pool.QueryRow(context.Background(), `
		SELECT id, errors->-1->>'error' FROM jobc_jobs_finished
		WHERE state = 'failed' AND errors->-1->>'class' = 'jobc_poisoned'
		  AND (id = $1 OR errors->-1->>'error' LIKE '%id ' || $1 || ',%')`, id).Scan(&copyID, &msg)
	if err != nil {
		t.Fatalf("no poisoned failed copy of job %d: %v; jobs: %v", id, err, jobStates(t, pool))
	}
	return copyID, msg
}

// TestOneRowDoesNotStallOutcomes is failure 2 of issue 20: a job in jobc_jobs whose id
// a finished job already has made jobc_finish fail, the outcome writer retried the
// whole batch, and ten jobs that ran were never recorded. Now the batch falls back to
// one statement per job: the ten are completed, the one is failed alone under a new id
// that its error names with the old one, and the finished job that had the id is
// untouched.
func TestOneRowDoesNotStallOutcomes(t *testing.T) {
	pool := newDB(t)
	ctx := t.Context()
	jt := emailType(t, nil)
	ids := enqueueN(t, pool, jt, 11)
	bad := ids[6]
	// The row a finished job already has: written as a role with INSERT could, in
	// the partition the job's completion goes to. id is unique within a partition of
	// history; this row is in the DEFAULT partition of completed jobs, and the
	// partitions the worker's pruner prepares begin after its finish time, so the
	// completion goes there too.
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_jobs_finished (id, kind, queue, state, priority,
		payload_version, payload, metadata, available_at, attempt, max_attempts, errors, created_at, finished_at)
		VALUES ($1, 'other', 'other', 'completed', 5, 1, '{"planted":true}', '{}', now(), 1, 1, '[]', now(),
		        now() + interval '1 hour')`, bad); err != nil {
		t.Fatal(err)
	}
	log, rec := newLogRecorder()
	cfg := testConfig(map[string]runtime.QueueConfig{"email": {MaxWorkers: 20}})
	cfg.Logger = log
	w := runtime.NewWorker(pool, cfg)
	h := &countingHandler{}
	if err := runtime.Handle(w, jt, h.handle); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	waitFor(t, "every job to leave jobc_jobs", 100*cfg.PollInterval, func() bool {
		return countRows(t, pool, `SELECT count(*) FROM jobc_jobs`) == 0
	})
	for n, id := range ids {
		if id == bad {
			continue
		}
		if st := finishedState(t, pool, id); st != "completed" {
			t.Errorf("job %d (n=%d) is %q, want completed; jobs: %v", id, n, st, jobStates(t, pool))
		}
		if runs := h.runs[n].Load(); runs != 1 {
			t.Errorf("job %d ran %d times, want once", id, runs)
		}
	}
	copyID, msg := poisonedCopy(t, pool, bad)
	if copyID == bad || !strings.Contains(msg, "recording the job's outcome (completed)") || !strings.Contains(msg, "duplicate key") {
		t.Errorf("poisoned copy %d of job %d: %q; want a new id and the duplicate key named", copyID, bad, msg)
	}
	var planted bool
	if err := pool.QueryRow(ctx, `SELECT (payload->>'planted')::bool FROM jobc_jobs_finished WHERE id = $1`, bad).Scan(&planted); err != nil || !planted {
		t.Errorf("the finished job that had id %d changed: %v", bad, err)
	}
	if lines := rec.matching("failed alone", fmt.Sprint(bad)); len(lines) != 1 {
		t.Errorf("the log names job %d %d times, want once: %q", bad, len(lines), rec.all())
	}
}

// TestOneRowDoesNotStopClaims: a row that makes the claim statement fail (here an
// attempt count at the integer's limit, so attempt + 1 overflows: no constraint
// forbids it) made every claim of its queue fail on every poll. Now the claim falls
// back to one job at a time, the row is failed alone with the error, and the queue's
// other jobs run once each.
func TestOneRowDoesNotStopClaims(t *testing.T) {
	pool := newDB(t)
	ctx := t.Context()
	jt := emailType(t, nil)
	ids := enqueueN(t, pool, jt, 5)
	bad := ids[1] // the first in claim order
	if _, err := pool.Exec(ctx, `UPDATE jobc_jobs SET attempt = 2147483647, max_attempts = 2147483647 WHERE id = $1`, bad); err != nil {
		t.Fatal(err)
	}
	log, rec := newLogRecorder()
	cfg := testConfig(map[string]runtime.QueueConfig{"email": {MaxWorkers: 10}})
	cfg.Logger = log
	w := runtime.NewWorker(pool, cfg)
	h := &countingHandler{}
	if err := runtime.Handle(w, jt, h.handle); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	waitFor(t, "every job to leave jobc_jobs", 100*cfg.PollInterval, func() bool {
		return countRows(t, pool, `SELECT count(*) FROM jobc_jobs`) == 0
	})
	for n := 2; n <= 5; n++ {
		if st := finishedState(t, pool, ids[n]); st != "completed" || h.runs[n].Load() != 1 {
			t.Errorf("job %d: %q after %d runs, want completed after 1", ids[n], st, h.runs[n].Load())
		}
	}
	if h.runs[1].Load() != 0 {
		t.Errorf("the poisoned job ran %d times", h.runs[1].Load())
	}
	copyID, msg := poisonedCopy(t, pool, bad)
	if copyID != bad || !strings.Contains(msg, "claiming queue email") || !strings.Contains(msg, "out of range") {
		t.Errorf("poisoned job %d: %q", copyID, msg)
	}
	if lines := rec.matching("failed alone", fmt.Sprint(bad)); len(lines) != 1 {
		t.Errorf("the log names job %d %d times, want once: %q", bad, len(lines), rec.all())
	}
}

// TestOneRowDoesNotStopTheRescuer is the second half of failure 2: once the job whose
// id a finished job has was out of attempts, every rescue failed, so no expired
// lease anywhere was rescued. Now that job is failed alone and the others are rescued.
func TestOneRowDoesNotStopTheRescuer(t *testing.T) {
	pool := newDB(t)
	ctx := t.Context()
	jt := emailType(t, nil)
	ids := enqueueN(t, pool, jt, 4)
	bad := ids[2]
	if _, err := pool.Exec(ctx, `UPDATE jobc_jobs SET state = 'running', lease_owner = 'dead',
		lease_expires_at = now() - interval '1 minute',
		attempt = CASE WHEN id = $1 THEN max_attempts ELSE 1 END`, bad); err != nil {
		t.Fatal(err)
	}
	// The rescuer fails it (out of attempts): a failed row of this hour with its id.
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_jobs_finished (id, kind, queue, state, priority,
		payload_version, payload, metadata, available_at, attempt, max_attempts, errors, created_at)
		VALUES ($1, 'other', 'other', 'failed', 5, 1, '{}', '{}', now(), 1, 1, '[]', now())`, bad); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, `SELECT job_id, job_state::text, coalesce(problem, '') FROM jobc_rescue_expired(100) ORDER BY job_id`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]string{}
	var problem string
	for rows.Next() {
		var id int64
		var st, p string
		if err := rows.Scan(&id, &st, &p); err != nil {
			t.Fatal(err)
		}
		got[id] = st
		if p != "" {
			problem = p
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("rescue: %v", err)
	}
	if len(got) != 4 || !strings.Contains(problem, "duplicate key") {
		t.Errorf("rescued %v with problem %q; want all 4, one failed on a duplicate key", got, problem)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs WHERE state = 'available' AND attempt = 1`); n != 3 {
		t.Errorf("%d jobs back in their queue, want 3; jobs: %v", n, jobStates(t, pool))
	}
	if _, msg := poisonedCopy(t, pool, bad); !strings.Contains(msg, "lease expired") {
		t.Errorf("poisoned job %d: %q", bad, msg)
	}
}

// TestProducerRoleCannotForge covers failures 3 and 4 of issue 20 with the real roles
// (and the worker role, which names no ids either):
// the producer could INSERT into jobc_unique_keys (a planted key made a later
// legitimate enqueue return a job id that does not exist, for ever) and INSERT jobs
// with ids ahead of the sequence (the next enqueues of every producer failed with
// 23505). Now it can do neither, nor write a running job, an attempt count or errors,
// while every way it enqueues and publishes still works; the read-only role cannot
// enqueue through the gate for unique jobs.
func TestProducerRoleCannotForge(t *testing.T) {
	e := newGrantsEnv(t)
	ctx := t.Context()
	owner := e.pool(t, e.migrator, "app", nil)
	if _, err := runtime.Migrate(ctx, owner); err != nil {
		t.Fatal(err)
	}
	if _, err := runtime.ApplyGrants(ctx, owner, runtime.GrantRoles{Worker: e.worker, Producer: e.producer, ReadOnly: e.reader}); err != nil {
		t.Fatal(err)
	}
	producer := e.pool(t, e.producer, "app", nil)
	reader := e.pool(t, e.reader, "app", nil)

	_, err := producer.Exec(ctx, `INSERT INTO jobc_unique_keys (kind, key, job_id) VALUES ('send_email', '{"n":1}', 999999)`)
	wantDenied(t, "planting a unique key", err, "jobc_unique_keys")
	_, err = producer.Exec(ctx, `INSERT INTO jobc_jobs (id, kind, queue, state, priority, payload_version, payload, max_attempts)
		VALUES (nextval('jobc_jobs_id_seq') + 5, 'send_email', 'email', 'available', 5, 1, '{}', 3)`)
	wantDenied(t, "taking an id ahead of the sequence", err, "jobc_jobs")
	_, err = producer.Exec(ctx, `INSERT INTO jobc_jobs (id, kind, queue, state, priority, payload_version, payload, max_attempts)
		VALUES (1000, 'send_email', 'email', 'available', 5, 1, '{}', 3)`)
	wantDenied(t, "inserting an explicit id", err, "jobc_jobs")
	for col, val := range map[string]string{"lease_owner": "'w'", "attempt": "2", "errors": "'[]'", "unique_key": "'k'"} {
		_, err = producer.Exec(ctx, `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts, `+col+`)
			VALUES ('send_email', 'email', 'available', 5, 1, '{}', 3, `+val+`)`)
		wantDenied(t, "writing "+col, err, "jobc_jobs")
	}
	_, err = producer.Exec(ctx, `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts)
		VALUES ('send_email', 'email', 'running', 5, 1, '{}', 3)`)
	wantSQLState(t, "writing a running job", err, "23514")
	_, err = producer.Exec(ctx, `INSERT INTO jobc_events (id, event, version, subject, payload) VALUES (1000, 'e', 1, 's', '{}')`)
	wantDenied(t, "an event with an explicit id", err, "jobc_events")
	_, err = producer.Exec(ctx, `INSERT INTO jobc_events (event, version, subject, payload, state) VALUES ('e', 1, 's', '{}', 'published')`)
	wantDenied(t, "an event in state published", err, "jobc_events")
	// The worker role, which runs jobs, names no ids either, nor plants keys.
	worker := e.pool(t, e.worker, "app", nil)
	_, err = worker.Exec(ctx, `INSERT INTO jobc_jobs (id, kind, queue, state, priority, payload_version, payload, max_attempts)
		VALUES (1000, 'send_email', 'email', 'available', 5, 1, '{}', 3)`)
	wantDenied(t, "the worker inserting an explicit id", err, "jobc_jobs")
	_, err = worker.Exec(ctx, `INSERT INTO jobc_unique_keys (kind, key, job_id) VALUES ('send_email', '{"n":1}', 999999)`)
	wantDenied(t, "the worker planting a unique key", err, "jobc_unique_keys")
	_, err = worker.Exec(ctx, `INSERT INTO jobc_events (id, event, version, subject, payload) VALUES (1000, 'e', 1, 's', '{}')`)
	wantDenied(t, "the worker inserting an event with an explicit id", err, "jobc_events")
	for _, f := range []string{`jobc_retry_selected(NULL, ARRAY['k'], NULL, NULL, NULL, NULL, NULL)`, `jobc_poison(1, NULL, 0, 'x')`} {
		_, err = producer.Exec(ctx, `SELECT * FROM `+f)
		wantDenied(t, "the producer calling "+f, err, f[:strings.Index(f, "(")])
	}
	_, err = reader.Exec(ctx, `SELECT * FROM jobc_enqueue_unique('send_email', 'email', 5, 3, 1, '{}', '{}', NULL, 'k', NULL)`)
	wantDenied(t, "the read-only role calling jobc_enqueue_unique", err, "jobc_enqueue_unique")

	// The gate runs with its owner's rights, so it must not find its tables through
	// the caller's search_path: a producer that puts a table of its own named
	// jobc_unique_keys first (a temporary one: it may create no other) still gets its
	// job into the real tables.
	hijack, err := producer.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		`CREATE TEMP TABLE jobc_unique_keys (kind text, key text, job_id bigint, created_at timestamptz, PRIMARY KEY (kind, key))`,
		`SET search_path = pg_temp, app`,
	} {
		if _, err := hijack.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	var hijackedID int64
	if err := hijack.QueryRow(ctx, `SELECT job_id FROM app.jobc_enqueue_unique('send_email', 'email', 5, 3, 1,
		'{"n":99,"email":"a@example.com"}', '{}', NULL, '{"n":99}', NULL)`).Scan(&hijackedID); err != nil {
		t.Fatalf("jobc_enqueue_unique with a hostile search_path: %v", err)
	}
	var temp int
	if err := hijack.QueryRow(ctx, `SELECT count(*) FROM pg_temp.jobc_unique_keys`).Scan(&temp); err != nil || temp != 0 {
		t.Errorf("the gate wrote %d rows into the caller's temporary table (%v)", temp, err)
	}
	hijack.Release()
	if n := countRows(t, owner, `SELECT count(*) FROM jobc_unique_keys WHERE job_id = $1`, hijackedID); n != 1 {
		t.Errorf("the real key row of job %d: %d rows, want 1", hijackedID, n)
	}

	// What the producer may do still works: plain, unique, batched jobs, events.
	jt := emailType(t, func(jt *runtime.JobType) { jt.Unique = &runtime.Unique{Fields: []string{"n"}} })
	first, err := runtime.Enqueue(ctx, producer, jt, emailPayload{N: 1, Email: "a@example.com"})
	if err != nil || first.Duplicate {
		t.Fatalf("unique enqueue as the producer: %+v, %v", first, err)
	}
	again, err := runtime.Enqueue(ctx, producer, jt, emailPayload{N: 1, Email: "b@example.com"})
	if err != nil || !again.Duplicate || again.ID != first.ID {
		t.Errorf("second unique enqueue: %+v, %v; want a duplicate of %d", again, err, first.ID)
	}
	plain := emailType(t, func(jt *runtime.JobType) { jt.Kind = "plain" })
	many, err := runtime.EnqueueMany(ctx, producer, plain, []emailPayload{{N: 1, Email: "a@example.com"}, {N: 2, Email: "b@example.com"}})
	if err != nil || len(many) != 2 || many[0].ID >= many[1].ID {
		t.Errorf("EnqueueMany as the producer: %+v, %v", many, err)
	}
	et, err := runtime.NewEventType(runtime.EventType{
		Name: "forge_event", Subject: "forge.event", OrderingKey: []string{"email"}, Relay: true,
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: emailSchema}},
	})
	if err != nil {
		t.Fatal(err)
	}
	unkeyed, err := runtime.NewEventType(runtime.EventType{
		Name: "forge_unkeyed", Subject: "forge.unkeyed", Relay: true,
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: emailSchema}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := runtime.PublishMany(ctx, producer, et, []emailPayload{{N: 1, Email: "a@example.com"}, {N: 2, Email: "b@example.com"}, {N: 3, Email: "a@example.com"}})
	if err != nil || len(ps) != 3 {
		t.Fatalf("PublishMany as the producer: %+v, %v", ps, err)
	}
	if ps, err := runtime.PublishMany(ctx, producer, unkeyed, []emailPayload{{N: 4, Email: "a@example.com"}, {N: 5, Email: "b@example.com"}}); err != nil || len(ps) != 2 {
		t.Fatalf("PublishMany without ordering keys as the producer: %+v, %v", ps, err)
	}
	var got string
	err = owner.QueryRow(ctx, `SELECT json_agg(json_build_array(payload->'n', ordering_key) ORDER BY id)::text FROM jobc_events`).Scan(&got)
	const want = `[[1, "a@example.com"], [2, "b@example.com"], [3, "a@example.com"], [4, null], [5, null]]`
	if err != nil || got != want {
		t.Errorf("outbox rows in id order: %s, %v; want %s", got, err, want)
	}
}

// TestMalformedErrorsStillList is failure 13 of issue 20: one row whose errors held a
// value of the wrong shape broke `jobc jobs list`, `jobs show` and the dashboard. The
// table now holds errors to a list, and the readers show any entry of it, whatever
// its shape, as text.
func TestMalformedErrorsStillList(t *testing.T) {
	pool := newDB(t)
	ctx := t.Context()
	jt := emailType(t, nil)
	ids := enqueueN(t, pool, jt, 2)
	if _, err := pool.Exec(ctx, `UPDATE jobc_jobs SET errors = $2 WHERE id = $1`, ids[1],
		`[1, "boom", null, {"attempt": "two", "at": 5, "class": 7, "error": {"a": 1}, "worker": "w"}]`); err != nil {
		t.Fatal(err)
	}
	info, err := runtime.GetJob(ctx, pool, ids[1])
	if err != nil {
		t.Fatalf("GetJob of the job with malformed errors: %v", err)
	}
	want := []string{"malformed error entry: 1", `malformed error entry: "boom"`, "malformed error entry: null",
		`{"a": 1} (malformed attempt: "two") (malformed time: 5)`}
	if len(info.Errors) != len(want) {
		t.Fatalf("errors: %+v, want %d entries", info.Errors, len(want))
	}
	for i, w := range want {
		if info.Errors[i].Error != w {
			t.Errorf("entry %d: %q, want %q", i, info.Errors[i].Error, w)
		}
	}
	if last := info.Errors[3]; last.Class != "7" || last.Worker != "w" {
		t.Errorf("entry 3: %+v; want class 7 and worker w", last)
	}
	page, err := runtime.ListJobs(ctx, pool, runtime.JobFilter{JobSelection: runtime.JobSelection{Kinds: []string{jt.Kind}}})
	if err != nil || len(page.Jobs) != 2 {
		t.Errorf("ListJobs with a malformed row: %d jobs, %v; want both", len(page.Jobs), err)
	}
}

// TestOneRowDoesNotStopABulkRetry: a failed job whose id a job in jobc_jobs also has
// (written with an id from outside the sequence) made RetrySelected fail, so no job of
// the selection was retried. Now the others are retried, and that one is left failed
// and listed in Refused with the error.
func TestOneRowDoesNotStopABulkRetry(t *testing.T) {
	pool := newDB(t)
	ctx := t.Context()
	jt := emailType(t, nil)
	ids := enqueueN(t, pool, jt, 3)
	if _, err := pool.Exec(ctx, `WITH gone AS (DELETE FROM jobc_jobs RETURNING *)
		INSERT INTO jobc_jobs_finished (id, kind, queue, state, priority, payload_version, payload, metadata,
			available_at, attempt, max_attempts, errors, created_at)
		SELECT id, kind, queue, 'failed', priority, payload_version, payload, metadata, available_at, 3, 3,
			'[{"error":"boom"}]', created_at FROM gone`); err != nil {
		t.Fatal(err)
	}
	bad := ids[2]
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_jobs (id, kind, queue, state, priority, payload_version, payload, max_attempts, available_at)
		VALUES ($1, 'other', 'elsewhere', 'scheduled', 5, 1, '{}', 1, now() + interval '1 hour')`, bad); err != nil {
		t.Fatal(err)
	}
	res, err := runtime.RetryJobs(ctx, pool, runtime.JobSelection{Kinds: []string{jt.Kind}, States: []runtime.State{runtime.StateFailed}})
	if err != nil {
		t.Fatalf("RetryJobs with one job that makes the statement fail: %v", err)
	}
	if res.Changed != 2 || len(res.Refused) != 1 || res.Refused[0].ID != bad || !strings.Contains(res.Refused[0].Reason, "duplicate key") {
		t.Errorf("RetryJobs: %+v; want 2 retried and job %d refused on a duplicate key", res, bad)
	}
	for _, n := range []int{1, 3} {
		if c := countRows(t, pool, `SELECT count(*) FROM jobc_jobs WHERE id = $1 AND state = 'available'`, ids[n]); c != 1 {
			t.Errorf("job %d was not retried; jobs: %v", ids[n], jobStates(t, pool))
		}
	}
	if st := finishedState(t, pool, bad); st != "failed" {
		t.Errorf("the refused job is %q, want still failed", st)
	}
}

// TestPlantedStepRowDoesNotStallOutcomes: a job step has no row while its job runs,
// so a row planted for it (by hand, as a role that may write the table could) makes
// the statement that records its end fail. The batch falls back to one job at a
// time: the other workflows complete, the step's job is failed alone with the error,
// its workflow stays running where an operator sees it, and the planted row is
// untouched.
func TestPlantedStepRowDoesNotStallOutcomes(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	o := newOrderTypes(t)
	wt := o.workflow(t, runtime.OnFailureCancel)
	var ids []runtime.WorkflowID
	for i := range 5 {
		id, err := runtime.StartWorkflow(ctx, pool, wt, orderInput{OrderID: fmt.Sprint("o-", i), Cents: int64(i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	bad := ids[2]
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_workflow_steps (workflow_id, step, state, result)
		VALUES ($1, 'reserve', 'completed', '{"planted": true}')`, int64(bad)); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(map[string]runtime.QueueConfig{"orders": {MaxWorkers: 10}})
	w := runtime.NewWorker(pool, cfg)
	o.register(t, w, 0, nil)
	startWorker(t, w)
	for _, id := range ids {
		if id == bad {
			continue
		}
		if info := waitWorkflow(t, pool, id, 200*cfg.PollInterval); info.State != runtime.WorkflowCompleted {
			t.Errorf("workflow %d: %s; want completed:%s", id, info.State, describeSteps(info))
		}
	}
	var job int64
	if err := pool.QueryRow(ctx, `SELECT id FROM jobc_jobs_finished WHERE workflow_id = $1 AND workflow_step = 'reserve'`,
		int64(bad)).Scan(&job); err != nil {
		t.Fatalf("the planted workflow's reserve job did not finish: %v; jobs: %v", err, jobStates(t, pool))
	}
	if _, msg := poisonedCopy(t, pool, job); !strings.Contains(msg, "jobc_workflow_steps_pkey") {
		t.Errorf("the reserve job of workflow %d failed with %q; want the duplicate step row named", bad, msg)
	}
	info, err := runtime.GetWorkflow(ctx, pool, bad)
	if err != nil {
		t.Fatal(err)
	}
	if info.State != runtime.WorkflowRunning || string(info.Steps[0].Result) != `{"planted": true}` {
		t.Errorf("workflow %d: %s, reserve's result %s; want it running, the planted row untouched:%s",
			bad, info.State, info.Steps[0].Result, describeSteps(info))
	}
}
