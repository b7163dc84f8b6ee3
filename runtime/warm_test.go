package runtime_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime"
)

// claimConnsSQL records, for every claim, the application_name of the connection
// behind it and the synchronous_commit, plan_cache_mode and jit it ran with, and for
// every finished job the plan_cache_mode and jit of the statement that moved it.
const claimConnsSQL = `
CREATE TABLE claim_conns (job_id bigint, app text, mode text, plans text, jit text);
CREATE FUNCTION log_claim_conn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF OLD.state = 'available' AND NEW.state = 'running' THEN
		INSERT INTO claim_conns VALUES (NEW.id, current_setting('application_name'),
			current_setting('synchronous_commit'), current_setting('plan_cache_mode'),
			current_setting('jit'));
	END IF;
	RETURN NULL;
END $$;
CREATE TRIGGER log_claim_conn AFTER UPDATE ON jobc_jobs FOR EACH ROW EXECUTE FUNCTION log_claim_conn();
CREATE TABLE finish_conns (job_id bigint, app text, plans text, jit text);
CREATE FUNCTION log_finish_conn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO finish_conns VALUES (NEW.id, current_setting('application_name'), current_setting('plan_cache_mode'), current_setting('jit'));
	RETURN NULL;
END $$;
CREATE TRIGGER log_finish_conn AFTER INSERT ON jobc_jobs_finished FOR EACH ROW EXECUTE FUNCTION log_finish_conn();
`

// startAndClaimOne starts a worker over one waiting job and returns the
// application_name of the connection that claimed it and the synchronous_commit
// setting its claim committed with.
func startAndClaimOne(t *testing.T, pool *pgxpool.Pool) (app, mode string) {
	t.Helper()
	ctx := t.Context()
	if _, err := pool.Exec(ctx, claimConnsSQL); err != nil {
		t.Fatal(err)
	}
	jt := emailType(t, nil)
	if _, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "a@b.c"}); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(nil)
	w := runtime.NewWorker(pool, cfg)
	ran := make(chan struct{}, 1)
	if err := runtime.Handle(w, jt, func(context.Context, *runtime.Job, emailPayload) error {
		ran <- struct{}{}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	stop := startWorker(t, w)
	defer stop()
	wait := 10 * (cfg.PollInterval + cfg.LeaseDuration/5)
	select {
	case <-ran:
	case <-time.After(wait):
		t.Fatalf("the job did not run within %s", wait)
	}
	if err := pool.QueryRow(ctx, `SELECT app, mode FROM claim_conns`).Scan(&app, &mode); err != nil {
		t.Fatal(err)
	}
	return app, mode
}

// TestStartBorrowsAnIdleApplicationConnection: a starting worker makes its first claim
// on an idle connection of the application's pool rather than wait for one of its own
// to open (the worker's own connections are named after it), and that claim commits
// as the application's transactions do.
func TestStartBorrowsAnIdleApplicationConnection(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	appMode := showSynchronousCommit(t, pool)
	app, mode := startAndClaimOne(t, pool)
	if strings.HasPrefix(app, "jobc worker ") {
		t.Errorf("the first claim ran on the worker's own connection %q, want one of the application's", app)
	}
	if mode != appMode {
		t.Errorf("the borrowed claim committed with synchronous_commit=%s, want the application's %s", mode, appMode)
	}
}

// TestClaimsUseGenericPlansWithoutJIT: once started, a worker claims on connections of
// its own that use generic plans, so that no claim is planned again, whether its queue
// is idle (here, woken by a lone job) or busy, and records outcomes with generic plans
// too (a lone job's completion is planned once); and none of the worker's statements
// is compiled with JIT, which the server here would otherwise use (a claim's generic
// plan at a large backlog passes jit_above_cost), claims and outcomes alike.
func TestClaimsUseGenericPlansWithoutJIT(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	if _, err := pool.Exec(ctx, claimConnsSQL); err != nil {
		t.Fatal(err)
	}
	var appJIT string
	if err := pool.QueryRow(ctx, `SHOW jit`).Scan(&appJIT); err != nil {
		t.Fatal(err)
	}
	if appJIT != "on" {
		t.Fatalf("the test database runs with jit=%s; this test needs the server default, on", appJIT)
	}
	jt := emailType(t, nil)
	cfg := testConfig(map[string]runtime.QueueConfig{"email": {MaxWorkers: 10}})
	cfg.FetchBatch = 5
	w := runtime.NewWorker(pool, cfg)
	ran := make(chan int64, 100)
	if err := runtime.Handle(w, jt, func(_ context.Context, job *runtime.Job, _ emailPayload) error {
		ran <- job.ID
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	stop := startWorker(t, w)
	waitOwnConnections(t, w, cfg)
	wait := 10 * (cfg.PollInterval + cfg.LeaseDuration/5)
	runJobs := func(n int) {
		t.Helper()
		for range n {
			select {
			case <-ran:
			case <-time.After(wait):
				t.Fatalf("a job did not run within %s; claims: %v", wait, claimConns(t, pool))
			}
		}
	}
	claimOf := func(id int64) (app, plans, jit string) {
		t.Helper()
		if err := pool.QueryRow(ctx, `SELECT app, plans, jit FROM claim_conns WHERE job_id = $1`, id).Scan(&app, &plans, &jit); err != nil {
			t.Fatalf("the claim of job %d: %v", id, err)
		}
		return app, plans, jit
	}

	// A claim that chose the application's connection just before the worker's own were
	// ready can still take the first lone job (see TestOutcomesCommitSynchronously); the
	// next one is then claimed by a worker that has started.
	var started int64 // the first job a started worker claimed
	for attempt := 1; ; attempt++ {
		e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: attempt, Email: "a@b.c"})
		if err != nil {
			t.Fatal(err)
		}
		runJobs(1)
		app, plans, jit := claimOf(e.ID)
		if !strings.HasPrefix(app, "jobc worker ") && attempt < 3 {
			continue
		}
		if !strings.HasPrefix(app, "jobc worker ") || plans != "force_generic_plan" || jit != "off" {
			t.Errorf("a woken queue's claim ran on %q with plan_cache_mode %s and jit %s, want the worker's own connection with force_generic_plan and off", app, plans, jit)
		}
		started = e.ID
		break
	}

	// Fifteen jobs at once: the woken claim takes five (a full claim), and the queue is
	// busy from then on until its claims come back short.
	ps := make([]emailPayload, 15)
	for i := range ps {
		ps[i] = emailPayload{N: 100 + i, Email: "a@b.c"}
	}
	if _, err := runtime.EnqueueMany(ctx, pool, jt, ps); err != nil {
		t.Fatal(err)
	}
	runJobs(len(ps))
	stop() // every outcome is recorded
	other := countRows(t, pool, `SELECT count(*) FROM claim_conns WHERE job_id >= $1 AND (app NOT LIKE 'jobc worker %' OR plans <> 'force_generic_plan' OR jit <> 'off')`, started)
	claimed := countRows(t, pool, `SELECT count(*) FROM claim_conns WHERE job_id >= $1`, started)
	if other > 0 || claimed != 1+len(ps) {
		t.Errorf("%d of %d claims since the worker started ran elsewhere than on its own connections with generic plans and without JIT, want none of %d; claims: %v", other, claimed, 1+len(ps), claimConns(t, pool))
	}
	jitted := countRows(t, pool, `SELECT count(*) FROM finish_conns WHERE jit <> 'off'`)
	finished := countRows(t, pool, `SELECT count(*) FROM finish_conns`)
	if jitted > 0 || finished < 1+len(ps) {
		t.Errorf("%d of %d outcomes were recorded with JIT on, want none of at least %d", jitted, finished, 1+len(ps))
	}
	custom := countRows(t, pool, `SELECT count(*) FROM finish_conns WHERE job_id >= $1 AND plans <> 'force_generic_plan'`, started)
	if custom > 0 {
		t.Errorf("%d outcomes since the worker started were recorded with plans made for them, want generic plans for all", custom)
	}
}

// claimConns lists the claims claim_conns recorded, for failure messages.
func claimConns(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(t.Context(), `SELECT format('job %s on %s with %s, jit %s', job_id, app, plans, jit) FROM claim_conns ORDER BY job_id`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// waitOwnConnections waits until a started worker's own connections are ready, and
// its claims no longer borrow the application's pool.
func waitOwnConnections(t *testing.T, w *runtime.Worker, cfg runtime.Config) {
	t.Helper()
	ready := 10 * (cfg.LeaseDuration / 4) // the warm-up takes at most a StatementTimeout
	select {
	case <-runtime.OwnConnectionsReady(w):
	case <-time.After(ready):
		t.Fatalf("the worker's own connections were not ready after %s", ready)
	}
}
