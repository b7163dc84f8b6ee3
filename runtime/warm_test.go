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
CREATE TABLE claim_conns (job_id bigint, app text);
CREATE FUNCTION log_claim_conn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF OLD.state = 'available' AND NEW.state = 'running' THEN
		INSERT INTO claim_conns VALUES (NEW.id, current_setting('application_name'));
	END IF;
	RETURN NULL;
END $$;
CREATE TRIGGER log_claim_conn AFTER UPDATE ON jobc_jobs FOR EACH ROW EXECUTE FUNCTION log_claim_conn();
`

// startAndClaimOne starts a worker over one waiting job and returns the
// application_name of the connection that claimed it.
func startAndClaimOne(t *testing.T, pool *pgxpool.Pool) string {
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
	var app string
	if err := pool.QueryRow(ctx, `SELECT app FROM claim_conns`).Scan(&app); err != nil {
		t.Fatal(err)
	}
	return app
}

// TestStartBorrowsAnIdleApplicationConnection: a starting worker makes its first claim
// on an idle connection of the application's pool rather than wait for one of its own
// to open; the worker's own connections are named after it.
func TestStartBorrowsAnIdleApplicationConnection(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	if app := startAndClaimOne(t, pool); strings.HasPrefix(app, "jobc worker ") {
		t.Errorf("the first claim ran on the worker's own connection %q, want one of the application's", app)
	}
}
