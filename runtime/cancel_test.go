package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

// TestCancelPendingJob: a job that has not started is cancelled at once and never runs.
func TestCancelPendingJob(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := emailType(t, nil)
	e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "ada@example.com"}, runtime.RunAfter(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	st, err := runtime.CancelJob(ctx, pool, e.ID)
	if err != nil || st != runtime.StateCancelled {
		t.Fatalf("CancelJob = %s, %v; want cancelled", st, err)
	}
	info, err := runtime.GetJob(ctx, pool, e.ID)
	if err != nil || info.State != runtime.StateCancelled || info.FinishedAt == nil {
		t.Fatalf("job after cancel: %+v, %v", info, err)
	}
	if _, err := runtime.CancelJob(ctx, pool, e.ID); !errors.Is(err, runtime.ErrJobFinished) {
		t.Errorf("second CancelJob: %v, want ErrJobFinished", err)
	}
	if _, err := runtime.CancelJob(ctx, pool, 987654); !errors.Is(err, runtime.ErrJobNotFound) {
		t.Errorf("CancelJob of an unknown id: %v, want ErrJobNotFound", err)
	}
}

// TestCancelRunningJob: cancelling a running job cancels its handler's context; the job
// ends cancelled, not retried.
func TestCancelRunningJob(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := emailType(t, nil)
	e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	cause := make(chan error, 1)
	w := runtime.NewWorker(pool, testConfig(nil))
	if err := runtime.Handle(w, jt, func(ctx context.Context, _ *runtime.Job, _ emailPayload) error {
		close(started)
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return ctx.Err()
	}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	<-started
	st, err := runtime.CancelJob(ctx, pool, e.ID)
	if err != nil || st != runtime.StateRunning {
		t.Fatalf("CancelJob = %s, %v; want running (cancellation requested)", st, err)
	}
	select {
	case c := <-cause:
		if c == nil || c.Error() != "jobc: job cancelled" {
			t.Errorf("handler context cause %v", c)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's context was not cancelled")
	}
	waitFor(t, "the job to end cancelled", 10*time.Second, func() bool {
		info, err := runtime.GetJob(ctx, pool, e.ID)
		return err == nil && info.State == runtime.StateCancelled && info.Attempt == 1 && len(info.Errors) == 1 && info.Errors[0].Class == "cancelled"
	})
}
