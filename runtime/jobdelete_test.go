package runtime_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

// TestDeleteJobs: finished, available and scheduled jobs are deleted with their unique
// keys; an unknown id is an error; the bulk form counts what it left alone.
func TestDeleteJobs(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	jt := emailType(t, func(jt *runtime.JobType) { jt.Unique = &runtime.Unique{Fields: []string{"n"}} })
	cancelled := cancelledJobs(t, pool, jt, 1)[0]
	avail, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	sched, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 2, Email: "ada@example.com"}, runtime.RunAfter(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{cancelled, avail.ID} {
		if err := runtime.DeleteJob(ctx, pool, id); err != nil {
			t.Errorf("DeleteJob(%d): %v", id, err)
		}
		if _, err := runtime.GetJob(ctx, pool, id); !errors.Is(err, runtime.ErrJobNotFound) {
			t.Errorf("job %d after DeleteJob: %v; want ErrJobNotFound", id, err)
		}
	}
	if err := runtime.DeleteJob(ctx, pool, avail.ID); !errors.Is(err, runtime.ErrJobNotFound) {
		t.Errorf("DeleteJob of a deleted job: %v; want ErrJobNotFound", err)
	}
	// The available job's key went with it: the same payload is a new job now.
	again, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "ada@example.com"})
	if err != nil || again.Duplicate {
		t.Errorf("enqueue after deleting the key's holder: %+v, %v; want a new job", again, err)
	}

	sel := runtime.JobSelection{IDs: []int64{sched.ID, again.ID, 987654}}
	if n, err := runtime.CountDeletableJobs(ctx, pool, sel); err != nil || n != 2 {
		t.Errorf("CountDeletableJobs: %d, %v; want 2", n, err)
	}
	res, err := runtime.DeleteJobs(ctx, pool, sel)
	if err != nil || res.Changed != 2 || res.Skipped != 0 || fmt.Sprint(res.IDs) != fmt.Sprint([]int64{sched.ID, again.ID}) {
		t.Errorf("DeleteJobs: %+v, %v; want both jobs deleted", res, err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_unique_keys`); n != 0 {
		t.Errorf("%d unique keys left after deleting every job; want 0", n)
	}
}
