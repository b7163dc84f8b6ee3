package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime"
)

// commitModesSQL makes every write to the job tables log the synchronous_commit
// setting of the transaction that made it, labelled by what the write was: a claim, a
// heartbeat, a retry, a release (shutdown), or a finish (completed, failed, cancelled);
// a claim on a connection that is not the worker's own is a borrowed claim.
// The setting in force at commit decides whether the commit waits for the WAL flush,
// and it is the same inside the trigger, so this sees what the worker's connections
// really do.
const commitModesSQL = `
CREATE TABLE commit_modes (job_id bigint, what text, mode text);
CREATE FUNCTION log_commit_mode() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	what text;
BEGIN
	IF TG_TABLE_NAME LIKE 'jobc_jobs_finished%' THEN -- (a partition's name)
		what := NEW.state::text;
	ELSIF OLD.state = 'available' AND NEW.state = 'running'
	      AND current_setting('application_name') NOT LIKE 'jobc worker %' THEN
		what := 'borrowed claim'; -- a starting worker's, on the application's connection
	ELSIF OLD.state = 'available' AND NEW.state = 'running' THEN
		what := 'claim';
	ELSIF OLD.state = 'running' AND NEW.state = 'running' THEN
		what := 'heartbeat';
	ELSIF OLD.state = 'running' AND NEW.attempt = OLD.attempt - 1 THEN
		what := 'release';
	ELSIF OLD.state = 'running' THEN
		what := 'retry';
	ELSE
		RETURN NULL; -- maintenance: scheduling, starvation
	END IF;
	INSERT INTO commit_modes VALUES (NEW.id, what, current_setting('synchronous_commit'));
	RETURN NULL;
END $$;
CREATE TRIGGER log_finished AFTER INSERT ON jobc_jobs_finished FOR EACH ROW EXECUTE FUNCTION log_commit_mode();
CREATE TRIGGER log_updated AFTER UPDATE ON jobc_jobs FOR EACH ROW EXECUTE FUNCTION log_commit_mode();
`

// TestOutcomesCommitSynchronously: claims on the worker's own connections commit with
// synchronous_commit off, while every outcome (completed, failed, retried, released)
// commits the way the application's own transactions do, synchronously — unless
// Config.AsyncOutcomes asks for the old behaviour.
func TestOutcomesCommitSynchronously(t *testing.T) {
	t.Parallel()
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("AsyncOutcomes=%v", async), func(t *testing.T) {
			t.Parallel()
			pool := newDB(t)
			appMode := showSynchronousCommit(t, pool)
			if appMode == "off" {
				t.Fatalf("the test database runs with synchronous_commit=off; this test needs a server default that waits for the flush")
			}
			wantOutcome := appMode
			if async {
				wantOutcome = "off"
			}
			modes := runOutcomes(t, pool, async)
			for _, what := range []string{"claim", "completed", "failed", "retry", "release"} {
				got, ok := modes[what]
				if !ok {
					t.Errorf("no %s was logged; logged: %v", what, modes)
					continue
				}
				want := wantOutcome
				if what == "claim" {
					want = "off"
				}
				for _, m := range got {
					if m != want {
						t.Errorf("a %s committed with synchronous_commit=%s, want %s (all modes seen: %v)", what, m, want, modes)
						break
					}
				}
			}
			// A claim that began before the worker's own connections were ready may
			// still find a job enqueued after; it commits as the application does.
			for _, m := range modes["borrowed claim"] {
				if m != appMode {
					t.Errorf("a claim on the application's connection committed with synchronous_commit=%s, want %s", m, appMode)
				}
			}
			for _, m := range modes["heartbeat"] {
				if m != "off" {
					t.Errorf("a heartbeat committed with synchronous_commit=%s, want off", m)
				}
			}
		})
	}
}

func showSynchronousCommit(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	var mode string
	if err := pool.QueryRow(t.Context(), `SHOW synchronous_commit`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	return mode
}

// runOutcomes runs a worker over three jobs — one that completes, one that fails once
// (a retry) and then for good, one that holds its slot until shutdown (a release) —
// and returns the synchronous_commit setting of each logged write, by kind of write.
func runOutcomes(t *testing.T, pool *pgxpool.Pool, async bool) map[string][]string {
	t.Helper()
	ctx := t.Context()
	if _, err := pool.Exec(ctx, commitModesSQL); err != nil {
		t.Fatal(err)
	}
	jt := emailType(t, func(jt *runtime.JobType) { jt.MaxAttempts = 2 })
	const complete, fail, hold = 0, 1, 2
	cfg := testConfig(map[string]runtime.QueueConfig{"email": {MaxWorkers: 3}})
	cfg.ShutdownGrace = 100 * time.Millisecond // the held job is released, not waited for
	cfg.AsyncOutcomes = async
	w := runtime.NewWorker(pool, cfg)
	holding := make(chan struct{}, 1)
	err := runtime.Handle(w, jt, func(ctx context.Context, job *runtime.Job, p emailPayload) error {
		switch p.N {
		case fail:
			return errors.New("fails every time")
		case hold:
			holding <- struct{}{}
			<-ctx.Done()
			return context.Cause(ctx)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	stop := startWorker(t, w)
	// The jobs come once the worker claims on its own connections: a claim it makes on
	// the application's pool while they open commits as the application does
	// (TestStartBorrowsAnIdleApplicationConnection). One that started just before they
	// were ready can still take a job; the trigger tells it apart.
	waitOwnConnections(t, w, cfg)
	for _, n := range []int{complete, fail, hold} {
		if _, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: n, Email: "x@example.com"}); err != nil {
			t.Fatal(err)
		}
	}
	// Retries wait for the backoff (10ms) and the scheduler; both are short.
	wait := 10 * (cfg.PollInterval + cfg.SchedulerInterval + cfg.LeaseDuration/5)
	waitFor(t, "one completed and one failed job", wait, func() bool {
		return countRows(t, pool, `SELECT count(*) FROM jobc_jobs_finished`) == 2
	})
	select {
	case <-holding:
	case <-time.After(wait):
		t.Fatalf("the held job's handler did not start within %s; %d jobs unfinished", wait, countRows(t, pool, `SELECT count(*) FROM jobc_jobs`))
	}
	stop()
	rows, err := pool.Query(ctx, `SELECT what, mode FROM commit_modes ORDER BY job_id, what`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	modes := map[string][]string{}
	for rows.Next() {
		var what, mode string
		if err := rows.Scan(&what, &mode); err != nil {
			t.Fatal(err)
		}
		modes[what] = append(modes[what], mode)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n := len(modes["release"]); n != 1 {
		t.Errorf("%d releases logged, want 1 (the held job, at shutdown): %v", n, strings.Join(modes["release"], ","))
	}
	return modes
}
