package runtime_test

import (
	"context"
	"testing"

	"github.com/jobc-dev/jobc/runtime"
)

// TestUpgraderRunOnce: the opt-in upgrader rewrites waiting version 1 jobs to version
// 2, a transaction per batch — but only once no live worker is limited to version 1 —
// and leaves running jobs alone.
func TestUpgraderRunOnce(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	v1only := emailType(t, nil)
	for i := range 250 {
		if _, err := runtime.Enqueue(ctx, pool, v1only, emailPayload{N: i, Email: "old@example.com"}); err != nil {
			t.Fatal(err)
		}
	}
	running, err := runtime.Enqueue(ctx, pool, v1only, emailPayload{N: 999, Email: "busy@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE jobc_jobs SET state = 'running', lease_owner = 'w', lease_expires_at = now() + interval '1 hour', attempt = 1 WHERE id = $1`, running.ID); err != nil {
		t.Fatal(err)
	}
	// An old worker that only decodes version 1 is alive.
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_workers (id, host, pid, queues, kinds, lease_secs) VALUES ('old', 'h', 1, '{email}', '{"send_email": [1, 1]}', 30)`); err != nil {
		t.Fatal(err)
	}
	log, rec := newLogRecorder()
	u := runtime.NewUpgraderForTest(pool, log, versionedType(t), 100)

	res, err := u.RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Target != 1 || res.Upgraded != 0 {
		t.Errorf("with a version-1-only worker alive: %+v; want target 1, nothing upgraded", res)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs WHERE payload_version = 2`); n != 0 {
		t.Fatalf("%d jobs rewritten to version 2 while a version-1-only worker is alive", n)
	}

	if _, err := pool.Exec(ctx, `DELETE FROM jobc_workers WHERE id = 'old'`); err != nil {
		t.Fatal(err)
	}
	res, err = u.RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Target != 2 || res.Waiting != 251 || res.Upgraded != 250 || res.Skipped != 0 {
		t.Errorf("result %+v; want target 2, 251 below it (one running), 250 upgraded", res)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs WHERE payload_version = 2 AND payload ? 'recipient' AND NOT payload ? 'email'`); n != 250 {
		t.Errorf("%d of 250 waiting jobs at version 2 with email renamed to recipient", n)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs WHERE id = $1 AND payload_version = 1`, running.ID); n != 1 {
		t.Errorf("the running job was rewritten under its handler")
	}
	if got := rec.matching("INFO jobc worker: upgraded waiting jobs to a newer payload version", "kind=send_email", "version=2"); len(got) != 3 || !contains(got[2], "upgraded=250 of=251") {
		t.Errorf("progress records %q; want one per batch of 100, the last saying upgraded=250 of=251", rec.all())
	}
}
