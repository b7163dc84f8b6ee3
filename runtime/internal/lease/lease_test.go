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

// claimable returns the queries of a fresh schema holding n available jobs of kind a
// in queue q, and a claim of one of them as owner.
func claimable(t *testing.T, n int) (*pgxpool.Pool, *db.Queries, func(owner string) db.ClaimJobsRow) {
	t.Helper()
	pool := pgtest.NewSchema(t, migrated)
	qs := db.New(pool)
	if _, err := pool.Exec(t.Context(), `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts)
		SELECT 'a', 'q', 'available', 1, 1, '{}', 3 FROM generate_series(1, $1)`, n); err != nil {
		t.Fatal(err)
	}
	return pool, qs, func(owner string) db.ClaimJobsRow {
		t.Helper()
		rows, err := qs.ClaimJobs(t.Context(), db.ClaimJobsParams{Owner: owner, LeaseSeconds: 60, Queue: "q",
			Kinds: []string{"a"}, Versions: []int32{1}, Max: 1})
		if err != nil || len(rows) != 1 {
			t.Fatalf("claim as %s: %v, %v", owner, rows, err)
		}
		return rows[0]
	}
}

// Extend extends only the leases its owner still holds, and the worker's view of
// their expiry follows; a lease another worker holds keeps its old expiry in both.
func TestExtendOnlyTheOwnersLeases(t *testing.T) {
	pool, qs, claim := claimable(t, 2)
	ctx := t.Context()
	mine, theirs := claim("w1"), claim("w2")
	held := NewHeld()
	claimedAt := time.Now()
	held.Add(mine.ID, mine.Attempt, claimedAt.Add(time.Minute))
	held.Add(theirs.ID, theirs.Attempt, claimedAt.Add(time.Minute))

	rows, err := held.Extend(ctx, qs, "w1", time.Hour, []int64{mine.ID, theirs.ID}, true)
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

// The heartbeat of all a worker's jobs (skipLocked) leaves out a job whose row another
// transaction holds, without waiting for it. The transaction here is the worker's
// outcomes, which lock a batch's rows in the order the handlers ended: it holds the
// later job's row, then takes the earlier one's. A heartbeat that locked in id order
// and waited would hold the earlier row while waiting for the later: a deadlock, which
// PostgreSQL broke a second later by failing one of them (10 times in 3 minutes at
// 8,000 jobs/s). One job's heartbeat (Job.Heartbeat) waits instead: a held row is no
// lost lease.
func TestExtendSkipsRowsOthersHold(t *testing.T) {
	pool, qs, claim := claimable(t, 2)
	ctx := t.Context()
	earlier, later := claim("w1"), claim("w1")
	held := NewHeld()
	for _, j := range []db.ClaimJobsRow{earlier, later} {
		held.Add(j.ID, j.Attempt, time.Now().Add(time.Minute))
	}
	outcomes, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = outcomes.Rollback(context.WithoutCancel(ctx)) }()
	lock := func(id int64) error {
		_, err := outcomes.Exec(ctx, `SELECT 1 FROM jobc_jobs WHERE id = $1 FOR UPDATE`, id)
		return err
	}
	if err := lock(later.ID); err != nil {
		t.Fatal(err)
	}

	// A worker's heartbeat is bounded by its StatementTimeout, at most 10 s.
	beatCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	rows, err := held.Extend(beatCtx, qs, "w1", time.Hour, []int64{later.ID, earlier.ID}, true)
	cancel()
	if err != nil {
		t.Fatalf("the heartbeat waited for the row the outcomes hold: %v", err)
	}
	if len(rows) != 1 || rows[0].ID != earlier.ID {
		t.Fatalf("the heartbeat extended %+v, want job %d alone (job %d's row is held)", rows, earlier.ID, later.ID)
	}
	if until, _ := held.Until(later.ID, later.Attempt); until.After(time.Now().Add(2 * time.Minute)) {
		t.Errorf("the worker notes job %d's lease until %v, which the heartbeat did not extend", later.ID, until)
	}
	if err := lock(earlier.ID); err != nil {
		t.Fatalf("the outcomes could not take the earlier job's row after the heartbeat: %v", err)
	}

	one := make(chan []db.ExtendLeasesRow, 1)
	go func() {
		rows, err := held.Extend(ctx, qs, "w1", time.Hour, []int64{later.ID}, false)
		if err != nil {
			t.Error(err)
		}
		one <- rows
	}()
	var waiting int
	for waiting == 0 {
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%jobc_extend_leases%'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		select {
		case rows := <-one:
			t.Fatalf("one job's heartbeat returned %+v while the outcomes held its row, want it to wait", rows)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := outcomes.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if rows := <-one; len(rows) != 1 || rows[0].ID != later.ID {
		t.Fatalf("one job's heartbeat extended %+v once the row was free, want job %d", rows, later.ID)
	}
}
