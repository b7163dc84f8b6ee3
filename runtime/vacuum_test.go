package runtime_test

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/testkit"
	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// vacuums counts the VACUUMs of jobc_jobs (not autovacuum's) since the server started.
func vacuums(t *testing.T, pool *pgxpool.Pool) int64 {
	t.Helper()
	var n int64
	if err := pool.QueryRow(t.Context(), `SELECT pg_stat_get_vacuum_count(to_regclass('jobc_jobs'))`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestVacuumerVacuumsPastTheThreshold: the vacuumer vacuums jobc_jobs once its dead
// row versions pass the threshold, and not before; not while another worker holds the
// vacuum's lock; and it reports the dead versions a snapshot still open keeps, which
// no VACUUM can remove. (When its turn comes: maintenance's TestVacuumWaitsItsTurn.)
func TestVacuumerVacuumsPastTheThreshold(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	const dead = 2_000

	// Another worker holds the lock: this one defers, whatever the dead versions.
	testkit.DeadJobs(t, pool, dead)
	other, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if locked, err := db.New(other).TryVacuumLock(ctx); err != nil || !locked {
		t.Fatalf("another worker's vacuum lock: %v, %v", locked, err)
	}
	before := vacuums(t, pool)
	if r, err := runtime.NewVacuumerForTest(pool, dead/2).RunOnce(ctx); err != nil || r.Vacuumed || !r.Deferred || r.Dead < dead {
		t.Fatalf("with another worker vacuuming: %+v, %v; want %d dead or more, deferred", r, err, dead)
	}
	if err := db.New(other).VacuumUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	other.Release()

	// Below the threshold: nothing.
	if r, err := runtime.NewVacuumerForTest(pool, 10*dead).RunOnce(ctx); err != nil || r.Vacuumed || r.Deferred || r.NotPermitted {
		t.Fatalf("below the threshold: %+v, %v; want nothing done", r, err)
	}
	if n := vacuums(t, pool); n != before {
		t.Fatalf("%d VACUUMs of jobc_jobs before the threshold was passed", n-before)
	}

	// Past it, while a snapshot taken before the deletes is open: the VACUUM runs and
	// says that it left them.
	pin, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pin.Rollback(ctx) }()
	if _, err := pin.Exec(ctx, `SET TRANSACTION ISOLATION LEVEL REPEATABLE READ`); err != nil {
		t.Fatal(err)
	}
	if _, err := pin.Exec(ctx, `SELECT count(*) FROM jobc_jobs`); err != nil { // takes the snapshot
		t.Fatal(err)
	}
	testkit.DeadJobs(t, pool, dead)
	v := runtime.NewVacuumerForTest(pool, dead/2)
	r, err := v.RunOnce(ctx)
	if err != nil || !r.Vacuumed || r.Deferred || r.DeadAfter < dead {
		t.Fatalf("past the threshold with a snapshot open: %+v, %v; want vacuumed, %d dead left or more", r, err, dead)
	}
	if n := vacuums(t, pool); n != before+1 {
		t.Fatalf("%d VACUUMs of jobc_jobs, want 1", n-before)
	}

	if err := pin.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
}
