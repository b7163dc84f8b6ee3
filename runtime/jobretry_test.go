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

// cancelledJobs enqueues n jobs of jt to run in an hour and cancels them: the quickest
// way, through the real API, to finished jobs that RetryJobs and DeleteJobs act on.
func cancelledJobs(t *testing.T, pool *pgxpool.Pool, jt *runtime.JobType, n int) []int64 {
	t.Helper()
	ids := make([]int64, n)
	for i := range ids {
		e, err := runtime.Enqueue(t.Context(), pool, jt, emailPayload{N: i, Email: "ada@example.com"}, runtime.RunAfter(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if st, err := runtime.CancelJob(t.Context(), pool, e.ID); err != nil || st != runtime.StateCancelled {
			t.Fatalf("cancel job %d: %s, %v", e.ID, st, err)
		}
		ids[i] = e.ID
	}
	return ids
}

// waitJob polls job id until it is in state want, for at most timeout, and fails with
// the state it last saw.
func waitJob(t *testing.T, pool *pgxpool.Pool, id int64, want runtime.State, timeout time.Duration) *runtime.JobInfo {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		info, err := runtime.GetJob(t.Context(), pool, id)
		if err == nil && info.State == want {
			return info
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d after %s: %+v (err %v); want %s", id, timeout, info, err, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRetryFailedJob: a job that failed for good is retried with one more attempt, a
// worker completes it, and its error history still shows the failed attempt.
func TestRetryFailedJob(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	jt := emailType(t, func(jt *runtime.JobType) { jt.MaxAttempts = 1 })
	cfg := testConfig(nil)
	w := runtime.NewWorker(pool, cfg)
	if err := runtime.Handle(w, jt, func(_ context.Context, job *runtime.Job, _ emailPayload) error {
		if job.Attempt == 1 {
			return &runtime.ClassError{Class: "bad_deploy", Err: errors.New("upcast is broken")}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	patience := 20 * cfg.PollInterval
	failed := waitJob(t, pool, e.ID, runtime.StateFailed, patience)
	if failed.Attempt != 1 || failed.MaxAttempts != 1 || len(failed.Errors) != 1 {
		t.Fatalf("failed job: %+v; want attempt 1 of 1 with one error", failed)
	}
	info, err := runtime.RetryJob(ctx, pool, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if info.State != runtime.StateAvailable && info.State != runtime.StateRunning && info.State != runtime.StateCompleted {
		t.Errorf("RetryJob returned state %s; want the job available (or already taken by the worker)", info.State)
	}
	// The retry is recorded after the first error: when and how the job had ended.
	wantRetried := "retried after it ended failed at " + failed.FinishedAt.UTC().Format("2006-01-02 15:04:05 UTC") +
		" on attempt 1 of 1; one more attempt allowed (max_attempts 2)"
	if info.MaxAttempts != 2 || len(info.Errors) != 2 || info.Errors[1].Class != "jobc_retried" || info.Errors[1].Error != wantRetried ||
		info.Errors[1].Attempt != 1 || info.Errors[1].At.Before(*failed.FinishedAt) {
		t.Errorf("retried job: max attempts %d, errors %+v; want 2, the first error kept and a jobc_retried entry %q", info.MaxAttempts, info.Errors, wantRetried)
	}
	done := waitJob(t, pool, e.ID, runtime.StateCompleted, patience)
	if done.Attempt != 2 || len(done.Errors) != 2 || done.Errors[0].Class != "bad_deploy" || done.Errors[0].Attempt != 1 || done.Errors[1].Class != "jobc_retried" {
		t.Errorf("completed after retry: attempt %d, errors %+v; want attempt 2 with the bad_deploy error of attempt 1 and the retry", done.Attempt, done.Errors)
	}
}

// TestRetryScheduledJob: a scheduled job runs now; its attempts are not touched.
func TestRetryScheduledJob(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	e, err := runtime.Enqueue(ctx, pool, emailType(t, nil), emailPayload{N: 1, Email: "ada@example.com"}, runtime.RunAfter(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	info, err := runtime.RetryJob(ctx, pool, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if info.State != runtime.StateAvailable || time.Until(info.AvailableAt) > time.Second || info.MaxAttempts != 3 || info.Attempt != 0 {
		t.Errorf("scheduled job after retry: %+v; want available now with attempts untouched", info)
	}
}

// TestRetryBadInput: a missing, running, available or completed job is refused with
// an error that says why, and nothing changes; so is a bulk retry without a filter.
func TestRetryBadInput(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	jt := emailType(t, nil)
	if _, err := runtime.RetryJob(ctx, pool, 987654); !errors.Is(err, runtime.ErrJobNotFound) || !strings.Contains(err.Error(), "987654") {
		t.Errorf("RetryJob of a missing job: %v; want ErrJobNotFound naming the id", err)
	}

	running := make(chan struct{})
	release := make(chan struct{})
	w := runtime.NewWorker(pool, testConfig(nil))
	if err := runtime.Handle(w, jt, func(ctx context.Context, job *runtime.Job, p emailPayload) error {
		if p.N == 1 {
			close(running)
			<-release
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	stop := startWorker(t, w)
	busy, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	<-running
	before, _ := runtime.GetJob(ctx, pool, busy.ID)
	if _, err := runtime.RetryJob(ctx, pool, busy.ID); !errors.Is(err, runtime.ErrJobRunning) || !strings.Contains(err.Error(), fmt.Sprint(busy.ID)) {
		t.Errorf("RetryJob of a running job: %v; want ErrJobRunning naming the id", err)
	}
	if err := runtime.DeleteJob(ctx, pool, busy.ID); !errors.Is(err, runtime.ErrJobRunning) || !strings.Contains(err.Error(), "cancel it first") {
		t.Errorf("DeleteJob of a running job: %v; want ErrJobRunning saying to cancel it first", err)
	}
	if after, err := runtime.GetJob(ctx, pool, busy.ID); err != nil || after.State != runtime.StateRunning || after.Attempt != before.Attempt || after.MaxAttempts != before.MaxAttempts {
		t.Errorf("running job after the refused retry and delete: %+v, %v; want it unchanged (%+v)", after, err, before)
	}
	close(release)
	waitJob(t, pool, busy.ID, runtime.StateCompleted, 100*testConfig(nil).PollInterval)
	stop()
	if _, err := runtime.RetryJob(ctx, pool, busy.ID); !errors.Is(err, runtime.ErrNothingToRetry) || !strings.Contains(err.Error(), "completed") {
		t.Errorf("RetryJob of a completed job: %v; want ErrNothingToRetry naming the state", err)
	}
	avail, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 2, Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runtime.RetryJob(ctx, pool, avail.ID); !errors.Is(err, runtime.ErrNothingToRetry) || !strings.Contains(err.Error(), "available") {
		t.Errorf("RetryJob of an available job: %v; want ErrNothingToRetry naming the state", err)
	}

	cancelled := cancelledJobs(t, pool, jt, 1)
	for name, f := range map[string]func() error{
		"RetryJobs": func() error { _, err := runtime.RetryJobs(ctx, pool, runtime.JobSelection{}); return err },
		"RetryJobs with only a limit": func() error {
			_, err := runtime.RetryJobs(ctx, pool, runtime.JobSelection{Limit: 10})
			return err
		},
		"DeleteJobs":         func() error { _, err := runtime.DeleteJobs(ctx, pool, runtime.JobSelection{}); return err },
		"CountRetryableJobs": func() error { _, err := runtime.CountRetryableJobs(ctx, pool, runtime.JobSelection{}); return err },
		"CountDeletableJobs": func() error { _, err := runtime.CountDeletableJobs(ctx, pool, runtime.JobSelection{}); return err },
	} {
		if err := f(); !errors.Is(err, runtime.ErrNoFilter) {
			t.Errorf("%s without a filter: %v; want ErrNoFilter", name, err)
		}
	}
	if _, err := runtime.RetryJobs(ctx, pool, runtime.JobSelection{States: []runtime.State{"dead"}}); err == nil || !strings.Contains(err.Error(), `"dead"`) || !strings.Contains(err.Error(), "failed, cancelled") {
		t.Errorf("RetryJobs with an unknown state: %v; want an error naming it and listing the valid states", err)
	}
	if _, err := runtime.RetryJobs(ctx, pool, runtime.JobSelection{Kinds: []string{jt.Kind}, Limit: -1}); err == nil || !strings.Contains(err.Error(), "limit -1") {
		t.Errorf("RetryJobs with a negative limit: %v; want an error naming the limit", err)
	}
	if info, err := runtime.GetJob(ctx, pool, cancelled[0]); err != nil || info.State != runtime.StateCancelled {
		t.Errorf("cancelled job after refused bulk calls: %+v, %v; want it still cancelled", info, err)
	}
	if info, err := runtime.GetJob(ctx, pool, avail.ID); err != nil || info.State != runtime.StateAvailable {
		t.Errorf("available job after refused calls: %+v, %v; want it still available", info, err)
	}
}

// TestRetryUniqueKey: a retried job takes its unique key again; while another job
// holds the key, the retry fails naming that job, and the bulk form skips it.
func TestRetryUniqueKey(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	jt := emailType(t, func(jt *runtime.JobType) { jt.Unique = &runtime.Unique{Fields: []string{"n"}} })
	first := cancelledJobs(t, pool, jt, 1)[0] // cancelled: its key is free again
	holder, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 0, Email: "ada@example.com"}, runtime.RunAfter(time.Hour))
	if err != nil || holder.Duplicate {
		t.Fatalf("enqueue of the key's next holder: %+v, %v", holder, err)
	}
	_, err = runtime.RetryJob(ctx, pool, first)
	if !errors.Is(err, runtime.ErrUniqueConflict) || !strings.Contains(err.Error(), fmt.Sprintf("job %d holds", holder.ID)) {
		t.Fatalf("RetryJob while another job holds the key: %v; want ErrUniqueConflict naming job %d", err, holder.ID)
	}
	res, err := runtime.RetryJobs(ctx, pool, runtime.JobSelection{IDs: []int64{first}})
	if err != nil || res.Changed != 0 || res.Skipped != 1 {
		t.Errorf("RetryJobs while another job holds the key: %+v, %v; want 0 changed, 1 skipped", res, err)
	}
	if n, err := runtime.CountRetryableJobs(ctx, pool, runtime.JobSelection{IDs: []int64{first}}); err != nil || n != 0 {
		t.Errorf("CountRetryableJobs while another job holds the key: %d, %v; want 0", n, err)
	}
	if info, err := runtime.GetJob(ctx, pool, first); err != nil || info.State != runtime.StateCancelled {
		t.Errorf("job after the refused retry: %+v, %v; want it still cancelled", info, err)
	}

	if _, err := runtime.CancelJob(ctx, pool, holder.ID); err != nil {
		t.Fatal(err)
	}
	// Both are cancelled now and share the key: a bulk retry takes the newest only.
	res, err = runtime.RetryJobs(ctx, pool, runtime.JobSelection{Kinds: []string{jt.Kind}})
	if err != nil || res.Changed != 1 || res.Skipped != 1 || len(res.IDs) != 1 || res.IDs[0] != holder.ID {
		t.Fatalf("RetryJobs of two cancelled jobs with one key: %+v, %v; want job %d retried, one skipped", res, err, holder.ID)
	}
	dup, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 0, Email: "ada@example.com"})
	if err != nil || !dup.Duplicate || dup.ID != holder.ID {
		t.Errorf("enqueue after the retry: %+v, %v; want a duplicate of the retried job %d, which holds the key again", dup, err, holder.ID)
	}
}

// TestRetryJobsSelection: the bulk retry changes exactly the jobs its filters select,
// newest first up to the limit, and reports the others as skipped.
func TestRetryJobsSelection(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	a := emailType(t, func(jt *runtime.JobType) { jt.Kind = "kind_a" })
	b := emailType(t, func(jt *runtime.JobType) { jt.Kind = "kind_b"; jt.Queue = "other" })
	aIDs := cancelledJobs(t, pool, a, 3)
	bIDs := cancelledJobs(t, pool, b, 2)
	pending, err := runtime.Enqueue(ctx, pool, a, emailPayload{N: 9, Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}

	sel := runtime.JobSelection{Kinds: []string{"kind_a"}}
	if n, err := runtime.CountRetryableJobs(ctx, pool, sel); err != nil || n != 3 {
		t.Errorf("CountRetryableJobs of kind_a: %d, %v; want 3", n, err)
	}
	sel.Limit = 2
	res, err := runtime.RetryJobs(ctx, pool, sel)
	if err != nil || res.Changed != 2 || res.Skipped != 2 || fmt.Sprint(res.IDs) != fmt.Sprint(aIDs[1:]) {
		t.Fatalf("RetryJobs of kind_a, limit 2: %+v, %v; want the newest two %v changed and two skipped (the oldest and the available job)", res, err, aIDs[1:])
	}
	if info, _ := runtime.GetJob(ctx, pool, aIDs[0]); info.State != runtime.StateCancelled {
		t.Errorf("the oldest kind_a job is %s; want it left cancelled by the limit", info.State)
	}
	if info, _ := runtime.GetJob(ctx, pool, pending.ID); info.State != runtime.StateAvailable || info.Attempt != 0 {
		t.Errorf("the available kind_a job: %+v; want it untouched", info)
	}
	res, err = runtime.RetryJobs(ctx, pool, runtime.JobSelection{Queues: []string{"other"}, States: []runtime.State{runtime.StateCancelled}})
	if err != nil || res.Changed != 2 || fmt.Sprint(res.IDs) != fmt.Sprint(bIDs) {
		t.Errorf("RetryJobs of queue other, cancelled: %+v, %v; want %v", res, err, bIDs)
	}
	res, err = runtime.RetryJobs(ctx, pool, runtime.JobSelection{Since: time.Now().Add(time.Hour)})
	if err != nil || res.Changed != 0 {
		t.Errorf("RetryJobs of jobs finished in the future: %+v, %v; want none", res, err)
	}
	res, err = runtime.RetryJobs(ctx, pool, runtime.JobSelection{ErrorClass: "no_such_class"})
	if err != nil || res.Changed != 0 || res.Skipped != 0 {
		t.Errorf("RetryJobs of an error class no job has: %+v, %v; want nothing matched", res, err)
	}
}
