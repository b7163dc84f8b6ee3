package lease

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/migrate"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func migrated(ctx context.Context, pool *pgxpool.Pool) error {
	_, err := migrate.Up(ctx, pool)
	return err
}

// Extend extends only the leases its owner still holds, and the worker's view of
// their expiry follows; a lease another worker holds keeps its old expiry in both.
func TestExtendOnlyTheOwnersLeases(t *testing.T) {
	pool := pgtest.NewSchema(t, migrated)
	ctx := context.Background()
	qs := db.New(pool)
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts)
		SELECT 'a', 'q', 'available', 1, 1, '{}', 3 FROM generate_series(1, 2)`); err != nil {
		t.Fatal(err)
	}
	claim := func(owner string) db.ClaimJobsRow {
		t.Helper()
		rows, err := qs.ClaimJobs(ctx, db.ClaimJobsParams{Owner: owner, LeaseSeconds: 60, Queue: "q",
			Kinds: []string{"a"}, Versions: []int32{1}, Max: 1})
		if err != nil || len(rows) != 1 {
			t.Fatalf("claim as %s: %v, %v", owner, rows, err)
		}
		return rows[0]
	}
	mine, theirs := claim("w1"), claim("w2")
	held := NewHeld()
	claimedAt := time.Now()
	held.Add(mine.ID, mine.Attempt, claimedAt.Add(time.Minute))
	held.Add(theirs.ID, theirs.Attempt, claimedAt.Add(time.Minute))

	rows, err := held.Extend(ctx, qs, "w1", time.Hour, []int64{mine.ID, theirs.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].ID != mine.ID || rows[0].CancelRequested {
		t.Fatalf("Extend as w1 returned %+v, want only job %d, not asked to cancel", rows, mine.ID)
	}
	if until, ok := held.Until(mine.ID, mine.Attempt); !ok || until.Before(claimedAt.Add(59*time.Minute)) {
		t.Errorf("after Extend, the extended lease runs until %v (held %v), want about an hour from now", until, ok)
	}
	if until, ok := held.Until(theirs.ID, theirs.Attempt); !ok || !until.Equal(claimedAt.Add(time.Minute)) {
		t.Errorf("after Extend, the other worker's lease runs until %v (held %v), want the minute it had", until, ok)
	}
	var longer int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM jobc_jobs WHERE lease_expires_at > now() + interval '59 minutes'`).Scan(&longer); err != nil || longer != 1 {
		t.Errorf("%d leases extended to an hour in the table (%v), want 1", longer, err)
	}
}

// Forget drops an attempt once its outcome is recorded, but not a later attempt of the
// same job that this worker claimed again meanwhile: that lease must go on being
// extended.
func TestForgetKeepsALaterAttempt(t *testing.T) {
	held := NewHeld()
	until := time.Now().Add(time.Minute)
	held.Add(7, 2, until) // the job was rescued and claimed again: attempt 2
	held.Forget([]int64{7}, []int32{1})
	if _, ok := held.Until(7, 2); !ok || len(held.IDs()) != 1 {
		t.Fatalf("after forgetting attempt 1, attempt 2 is not held any more (ids %v)", held.IDs())
	}
	if _, ok := held.Until(7, 1); ok {
		t.Errorf("attempt 1 is reported held")
	}
	held.Forget([]int64{7}, []int32{2})
	if ids := held.IDs(); len(ids) != 0 {
		t.Errorf("after forgetting attempt 2, held %v, want none", ids)
	}
}
