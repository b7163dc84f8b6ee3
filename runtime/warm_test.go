package runtime_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime"
)

// claimConnsSQL records the application_name of the connection behind every claim.
const claimConnsSQL = `
CREATE TABLE claim_conns (job_id bigint, app text, mode text);
CREATE FUNCTION log_claim_conn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF OLD.state = 'available' AND NEW.state = 'running' THEN
		INSERT INTO claim_conns VALUES (NEW.id, current_setting('application_name'), current_setting('synchronous_commit'));
	END IF;
	RETURN NULL;
END $$;
CREATE TRIGGER log_claim_conn AFTER UPDATE ON jobc_jobs FOR EACH ROW EXECUTE FUNCTION log_claim_conn();
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
