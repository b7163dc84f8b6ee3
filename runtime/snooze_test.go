package runtime_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

// TestSnooze: a handler that snoozes runs again after the delay, on the same attempt
// and without an error record; a wrapped snooze counts too.
func TestSnooze(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	jt := emailType(t, func(jt *runtime.JobType) { jt.MaxAttempts = 1 })
	cfg := testConfig(nil)
	const snooze = 200 * time.Millisecond
	var mu sync.Mutex
	runs := map[int][]time.Time{}
	w := runtime.NewWorker(pool, cfg)
	if err := runtime.Handle(w, jt, func(_ context.Context, job *runtime.Job, p emailPayload) error {
		mu.Lock()
		runs[p.N] = append(runs[p.N], time.Now())
		n := len(runs[p.N])
		mu.Unlock()
		switch {
		case n < 3 && p.N == 1:
			return job.Snooze(snooze)
		case n < 3:
			return fmt.Errorf("not yet: %w", runtime.Snooze(snooze))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	for n := 1; n <= 2; n++ {
		e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: n, Email: "ada@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		// Three runs two snoozes apart, each snooze a scheduler pass, and a lease's
		// worth of slack: on a loaded machine the worker's start alone took a second.
		info := waitJob(t, pool, e.ID, runtime.StateCompleted, 3*snooze+20*cfg.SchedulerInterval+cfg.LeaseDuration)
		if info.Attempt != 1 || len(info.Errors) != 0 {
			t.Errorf("job %d completed at attempt %d with errors %+v; want attempt 1 of 1, no errors", n, info.Attempt, info.Errors)
		}
		mu.Lock()
		r := runs[n]
		mu.Unlock()
		if len(r) != 3 {
			t.Fatalf("job %d ran %d times; want 3 (two snoozes)", n, len(r))
		}
		for i := 1; i < len(r); i++ {
			if gap := r[i].Sub(r[i-1]); gap < snooze {
				t.Errorf("job %d ran again %s after snoozing for %s", n, gap, snooze)
			}
		}
	}
}
