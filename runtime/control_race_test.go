package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

// TestControlRacesWorker: many goroutines retry, delete and cancel jobs while a worker
// claims, completes, fails and retries the same jobs. Afterwards no job is in both
// tables or gone without a delete that said so, a job deleted is gone, and no job ran
// twice at once. Every error the control API returned is one of the documented
// refusals.
func TestControlRacesWorker(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	jt := emailType(t, func(jt *runtime.JobType) { jt.MaxAttempts = 1 })
	cfg := testConfig(map[string]runtime.QueueConfig{jt.Queue: {MaxWorkers: 8}})
	cfg.Retention = runtime.Retention{Completed: -1, Failed: -1, Cancelled: -1}

	var mu sync.Mutex
	inFlight := map[int64]bool{}
	var doubled []int64
	w := runtime.NewWorker(pool, cfg)
	if err := runtime.Handle(w, jt, func(_ context.Context, job *runtime.Job, p emailPayload) error {
		mu.Lock()
		if inFlight[job.ID] {
			doubled = append(doubled, job.ID)
		}
		inFlight[job.ID] = true
		mu.Unlock()
		time.Sleep(time.Duration(rand.N(2000)) * time.Microsecond)
		mu.Lock()
		delete(inFlight, job.ID)
		mu.Unlock()
		if p.N%3 == 0 {
			return errors.New("fails for good")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	stop := startWorker(t, w)

	const jobs = 200
	ids := make([]int64, jobs)
	for i := range ids {
		e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: i, Email: "ada@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = e.ID
	}

	var deletedMu sync.Mutex
	deleted := map[int64]bool{}
	markDeleted := func(ids ...int64) {
		deletedMu.Lock()
		defer deletedMu.Unlock()
		for _, id := range ids {
			if deleted[id] {
				t.Errorf("job %d reported deleted twice", id)
			}
			deleted[id] = true
		}
	}
	// refused reports whether err is a refusal the API documents for a job in the
	// wrong state (or already deleted).
	refused := func(err error) bool {
		for _, e := range []error{runtime.ErrJobRunning, runtime.ErrNothingToRetry, runtime.ErrJobNotFound, runtime.ErrJobFinished} {
			if errors.Is(err, e) {
				return true
			}
		}
		return strings.Contains(err.Error(), "kept changing")
	}
	var ops sync.WaitGroup
	for g := range 6 {
		ops.Add(1)
		go func() {
			defer ops.Done()
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range 150 {
				id := ids[r.IntN(len(ids))]
				var err error
				switch op := r.IntN(20); {
				case op < 9:
					_, err = runtime.RetryJob(ctx, pool, id)
				case op < 10:
					if err = runtime.DeleteJob(ctx, pool, id); err == nil {
						markDeleted(id)
					}
				case op < 13:
					_, err = runtime.CancelJob(ctx, pool, id)
				case op < 19:
					var res runtime.BulkResult
					res, err = runtime.RetryJobs(ctx, pool, runtime.JobSelection{IDs: []int64{id, ids[r.IntN(len(ids))], ids[r.IntN(len(ids))]}})
					if err == nil && res.Changed+res.Skipped > 3 {
						err = fmt.Errorf("RetryJobs of 3 ids: %+v", res)
					}
				default:
					var res runtime.BulkResult
					res, err = runtime.DeleteJobs(ctx, pool, runtime.JobSelection{IDs: []int64{id, ids[r.IntN(len(ids))]}, States: []runtime.State{runtime.StateFailed, runtime.StateCompleted}})
					if err == nil {
						markDeleted(res.IDs...)
					}
				}
				if err != nil && !refused(err) {
					t.Errorf("control call on job %d: %v", id, err)
				}
			}
		}()
	}
	ops.Wait()

	// Let the worker finish what the retries gave back: within a few polls per job
	// still waiting, which shrinks as it works.
	patience := 50 * cfg.PollInterval
	deadline := time.Now().Add(patience)
	for countRows(t, pool, `SELECT count(*) FROM jobc_jobs WHERE state <> 'scheduled'`) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs still available or running %s after the control calls ended", countRows(t, pool, `SELECT count(*) FROM jobc_jobs`), patience)
		}
		time.Sleep(cfg.PollInterval)
	}
	stop()

	rows, err := pool.Query(ctx, `SELECT i.id, (SELECT count(*) FROM jobc_jobs j WHERE j.id = i.id) + (SELECT count(*) FROM jobc_jobs_finished f WHERE f.id = i.id)
		FROM unnest($1::bigint[]) AS i(id)`, ids)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, n int64
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		switch {
		case n > 1:
			t.Errorf("job %d is in both tables", id)
		case n == 0 && !deleted[id]:
			t.Errorf("job %d is gone, but no delete reported it", id)
		case n == 1 && deleted[id]:
			t.Errorf("job %d was reported deleted but is still there", id)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(doubled) > 0 {
		t.Errorf("jobs %v ran twice at once", doubled)
	}
	t.Logf("%d of %d jobs deleted; %d finished", len(deleted), jobs, countRows(t, pool, `SELECT count(*) FROM jobc_jobs_finished`))
}
