package runtime_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// The shared rules of schema/0001_baseline.sql (jobc_finish and the functions around
// it), exercised through the statements the worker runs (runtime/internal/db) against
// a real database.

// leaseAll marks every job of the test's schema running under owner at attempt 1.
func leaseAll(t *testing.T, ctx context.Context, dbtx runtime.DBTX, owner string) {
	t.Helper()
	if _, err := dbtx.Exec(ctx, `UPDATE jobc_jobs SET state = 'running', attempt = 1, lease_owner = $1,
		lease_expires_at = now() + interval '1 hour'`, owner); err != nil {
		t.Fatal(err)
	}
}

// TestFinishMovesOnlyLeasedAttempts: CompleteJobs and FinishJobs (jobc_finish) move
// exactly the attempts the owner still leases, append each one's error, and release a
// unique key unless the job holds it in the state it finished in.
func TestFinishMovesOnlyLeasedAttempts(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := emailType(t, func(jt *runtime.JobType) {
		jt.Unique = &runtime.Unique{Fields: []string{"n"}, While: []runtime.State{runtime.StateAvailable, runtime.StateScheduled, runtime.StateRunning, runtime.StateCompleted}}
	})
	ids := make([]int64, 5)
	for i := range ids {
		e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: i, Email: "a@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = e.ID
	}
	leaseAll(t, ctx, pool, "me")
	q := db.New(pool)
	// ids[0] completes; ids[1] is asked at a stale attempt; ids[2] fails; ids[3] is
	// cancelled; ids[4] is held by another worker.
	if _, err := pool.Exec(ctx, `UPDATE jobc_jobs SET lease_owner = 'other' WHERE id = $1`, ids[4]); err != nil {
		t.Fatal(err)
	}
	done, err := q.CompleteJobs(ctx, db.CompleteJobsParams{IDs: []int64{ids[0], ids[1], ids[4]}, Attempts: []int32{1, 7, 1}, Owner: "me"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(done, []int64{ids[0]}) {
		t.Errorf("completed %v; want only %d (the others: a stale attempt, another owner's lease)", done, ids[0])
	}
	failed, err := q.FinishJobs(ctx, db.FinishJobsParams{IDs: []int64{ids[2]}, Attempts: []int32{1}, Owner: "me", State: db.JobcStateFailed,
		Errors: []json.RawMessage{json.RawMessage(`{"attempt": 1, "error": "boom", "class": "invalid"}`)}})
	if err != nil || !slices.Equal(failed, []int64{ids[2]}) {
		t.Fatalf("fail: %v, %v", failed, err)
	}
	cancelled, err := q.FinishJobs(ctx, db.FinishJobsParams{IDs: []int64{ids[3]}, Attempts: []int32{1}, Owner: "me", State: db.JobcStateCancelled,
		Errors: []json.RawMessage{json.RawMessage(`{"attempt": 1, "error": "stop", "class": "cancelled"}`)}})
	if err != nil || !slices.Equal(cancelled, []int64{ids[3]}) {
		t.Fatalf("cancel: %v, %v", cancelled, err)
	}
	want := map[int64]runtime.State{ids[0]: runtime.StateCompleted, ids[1]: runtime.StateRunning, ids[2]: runtime.StateFailed,
		ids[3]: runtime.StateCancelled, ids[4]: runtime.StateRunning}
	for id, state := range want {
		info, err := runtime.GetJob(ctx, pool, id)
		if err != nil {
			t.Fatal(err)
		}
		if info.State != state || (info.FinishedAt != nil) != state.Finished() {
			t.Errorf("job %d: %s finished at %v; want %s", id, info.State, info.FinishedAt, state)
		}
	}
	if info, _ := runtime.GetJob(ctx, pool, ids[2]); len(info.Errors) != 1 || info.Errors[0].Error != "boom" {
		t.Errorf("failed job's errors %+v; want the one appended", info.Errors)
	}
	// Keys: held while completed (ids[0]) and while unfinished (1, 4); released when
	// failed (2) or cancelled (3).
	for i, held := range []bool{true, true, false, false, true} {
		if n := countRows(t, pool, `SELECT count(*) FROM jobc_unique_keys WHERE job_id = $1`, ids[i]); (n == 1) != held {
			t.Errorf("job %d: %d unique key rows, want held=%v", ids[i], n, held)
		}
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs_all`); n != 5 {
		t.Errorf("jobc_jobs_all has %d rows, want all 5 jobs once", n)
	}
}

// TestGivingWorkBackWakesOnlySleepers: RetryJobs and ReleaseJobs (jobc_wake) notify a
// queue only when a worker of it sleeps, and a retry only when the job is due now.
func TestGivingWorkBackWakesOnlySleepers(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	// The queues' names are the test's own: the listener hears the whole database.
	jt := emailType(t, func(jt *runtime.JobType) { jt.Queue = "giveback_email" })
	other := emailType(t, func(jt *runtime.JobType) { jt.Kind, jt.Queue = "send_other", "giveback_other" })
	var ids []int64
	for i, j := range []*runtime.JobType{jt, jt, jt, other, other} {
		e, err := runtime.Enqueue(ctx, pool, j, emailPayload{N: i, Email: "a@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	leaseAll(t, ctx, pool, "me")
	listener := listenJobc(t, pool)
	q := db.New(pool)
	errs := []json.RawMessage{json.RawMessage(`{"error": "again"}`)}
	// claimedAt is what the claim of job id returned as its available_at, which names
	// the attempt along with its number.
	claimedAt := func(id int64) []time.Time {
		t.Helper()
		info, err := runtime.GetJob(ctx, pool, id)
		if err != nil {
			t.Fatal(err)
		}
		return []time.Time{info.AvailableAt}
	}

	// Nobody sleeps: retrying and releasing tell nobody.
	if _, err := q.RetryJobs(ctx, db.RetryJobsParams{IDs: ids[:1], Attempts: []int32{1}, ClaimedAts: claimedAt(ids[0]), AvailableAts: []time.Time{time.Now().Add(-time.Second)}, Errors: errs, Owner: "me"}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.ReleaseJobs(ctx, db.ReleaseJobsParams{IDs: ids[3:4], Attempts: []int32{1}, ClaimedAts: claimedAt(ids[3]), Owner: "me"}); err != nil {
		t.Fatal(err)
	}
	if got := notificationsUntilSentinel(t, pool, listener, "giveback_"); len(got) != 0 {
		t.Errorf("notified %q with no worker asleep", got)
	}

	// A worker of email sleeps: a retry due now wakes it, one due later does not;
	// releasing a job of queue other, where nobody sleeps, tells nobody.
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_sleepers (queue, worker) VALUES ('giveback_email', 'w1'), ('giveback_email', 'w2')`); err != nil {
		t.Fatal(err)
	}
	if _, err := q.RetryJobs(ctx, db.RetryJobsParams{IDs: ids[1:2], Attempts: []int32{1}, ClaimedAts: claimedAt(ids[1]), AvailableAts: []time.Time{time.Now().Add(time.Hour)}, Errors: errs, Owner: "me"}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.ReleaseJobs(ctx, db.ReleaseJobsParams{IDs: ids[4:5], Attempts: []int32{1}, ClaimedAts: claimedAt(ids[4]), Owner: "me"}); err != nil {
		t.Fatal(err)
	}
	if got := notificationsUntilSentinel(t, pool, listener, "giveback_"); len(got) != 0 {
		t.Errorf("notified %q; want nothing: a retry due in an hour, a release where nobody sleeps", got)
	}
	if _, err := q.RetryJobs(ctx, db.RetryJobsParams{IDs: ids[2:3], Attempts: []int32{1}, ClaimedAts: claimedAt(ids[2]), AvailableAts: []time.Time{time.Now().Add(-time.Second)}, Errors: errs, Owner: "me"}); err != nil {
		t.Fatal(err)
	}
	if got := notificationsUntilSentinel(t, pool, listener, "giveback_"); !slices.Equal(got, []string{"giveback_email"}) {
		t.Errorf("notified %q; want giveback_email once for two sleepers", got)
	}
	states := map[int64]runtime.State{ids[0]: runtime.StateAvailable, ids[1]: runtime.StateScheduled, ids[2]: runtime.StateAvailable,
		ids[3]: runtime.StateAvailable, ids[4]: runtime.StateAvailable}
	for id, want := range states {
		if info, err := runtime.GetJob(ctx, pool, id); err != nil || info.State != want {
			t.Errorf("job %d: %+v, %v; want %s", id, info, err, want)
		}
	}
}

// TestCancelWaitingLeavesNoTrace: jobc_cancel_waiting leases a waiting job only to
// finish it through jobc_finish, so nothing of the lease shows on the cancelled job.
func TestCancelWaitingLeavesNoTrace(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	e, err := runtime.Enqueue(ctx, pool, emailType(t, nil), emailPayload{N: 1, Email: "a@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := runtime.CancelJob(ctx, pool, e.ID); err != nil || st != runtime.StateCancelled {
		t.Errorf("cancel: %s, %v", st, err)
	}
	if info, err := runtime.GetJob(ctx, pool, e.ID); err != nil || info.Attempt != 0 || info.AttemptedAt != nil || info.FinishedAt == nil {
		t.Errorf("cancelled job: %+v, %v; want attempt 0, never attempted, finished", info, err)
	}
}
