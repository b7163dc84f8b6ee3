package runtime_test

import (
	"context"
	"testing"
	"time"

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
