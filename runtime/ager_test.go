package runtime_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/runtime"
)

// TestStarvationAgerRunOnce: available jobs of the served queues that waited longer
// than the bound move to priority 0; younger ones, those of other queues and those not
// available keep their priority.
func TestStarvationAgerRunOnce(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts, available_at)
		SELECT 'send_email', q, s::jobc_state, p, 1, '{}', 3, now() - d
		FROM (VALUES ('email', 'available', 9, interval '2 minutes'), ('email', 'available', 5, interval '2 minutes'),
		             ('email', 'available', 1, interval '5 minutes'),
		             ('email', 'available', 9, interval '1 second'), ('email', 'scheduled', 9, interval '2 minutes'),
		             ('other', 'available', 9, interval '2 minutes')) v(q, s, p, d)`); err != nil {
		t.Fatal(err)
	}
	res, err := runtime.NewStarvationAgerForTest(pool, []string{"email"}, time.Minute).RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Aged != 3 {
		t.Errorf("result %+v; want the 3 available email jobs older than a minute aged", res)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs WHERE priority = 0 AND queue = 'email' AND state = 'available' AND available_at < now() - interval '1 minute'`); n != 3 {
		t.Errorf("%d of the 3 old available email jobs at priority 0", n)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs WHERE priority = 9`); n != 3 {
		t.Errorf("%d jobs kept priority 9; want the young one, the scheduled one and the other queue's", n)
	}
}

// TestStarvationAgerAgesEveryKindAndVersion: the ager walks each (kind, payload
// version) pair's range of the claim index, skipping from one pair to the next, so old
// jobs of every pair of every served queue are aged, the first and last pairs of the
// index included, and no pair of a queue it does not serve.
func TestStarvationAgerAgesEveryKindAndVersion(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts, available_at)
		SELECT k, q, 'available', p, v, '{}', 3, now() - interval '3 minutes'
		FROM (VALUES ('audit', 'email', 1, 7), ('send_email', 'email', 1, 9), ('send_email', 'email', 2, 4),
		             ('send_email', 'email', 7, 9), ('zip', 'email', 3, 2), ('zip', 'email', 4, 2),
		             ('audit', 'sms', 2, 6), ('audit', 'push', 1, 5), ('zip', 'push', 9, 5)) v(k, q, v, p)`); err != nil {
		t.Fatal(err)
	}
	res, err := runtime.NewStarvationAgerForTest(pool, []string{"email", "sms"}, time.Minute).RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Aged != 7 {
		t.Errorf("result %+v; want the 7 jobs of queues email and sms aged", res)
	}
	rows, err := pool.Query(ctx, `SELECT format('%s %s v%s at %s', queue, kind, payload_version, priority) FROM jobc_jobs ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"email audit v1 at 0", "email send_email v1 at 0", "email send_email v2 at 0", "email send_email v7 at 0",
		"email zip v3 at 0", "email zip v4 at 0", "push audit v1 at 5", "push zip v9 at 5", "sms audit v2 at 0",
	}
	if !slices.Equal(got, want) {
		t.Errorf("jobs after aging:\n%q\nwant\n%q", got, want)
	}
}
