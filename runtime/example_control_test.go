package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// ExampleRetryJob puts a cancelled job back in its queue. A job that is not failed,
// cancelled or scheduled is refused, saying what it is.
func ExampleRetryJob() {
	pool, _, cleanup := pgtest.ExampleSchema("retry_job", migrated)
	defer cleanup()
	ctx := context.Background()
	job, err := runtime.Enqueue(ctx, pool, welcomeType, welcome{UserID: 1, Email: "ada@example.com"}, runtime.RunAfter(time.Hour))
	if err != nil {
		panic(err)
	}
	if _, err := runtime.CancelJob(ctx, pool, job.ID); err != nil {
		panic(err)
	}
	info, err := runtime.RetryJob(ctx, pool, job.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println(info.State, time.Until(info.AvailableAt) <= 0)
	_, err = runtime.RetryJob(ctx, pool, job.ID)
	fmt.Println(errors.Is(err, runtime.ErrNothingToRetry), err)
	// Output:
	// available true
	// true jobc: retry job 1: jobc: job is not failed, cancelled or scheduled: it is available
}

// ExampleRetryJobs retries the cancelled jobs of one kind after a dry run. A selection
// without any filter is refused, so that a forgotten flag cannot retry every job.
func ExampleRetryJobs() {
	pool, _, cleanup := pgtest.ExampleSchema("retry_jobs", migrated)
	defer cleanup()
	ctx := context.Background()
	for i := range 3 {
		job, err := runtime.Enqueue(ctx, pool, welcomeType, welcome{UserID: int64(i), Email: "ada@example.com"}, runtime.RunAfter(time.Hour))
		if err != nil {
			panic(err)
		}
		if _, err := runtime.CancelJob(ctx, pool, job.ID); err != nil {
			panic(err)
		}
	}
	sel := runtime.JobSelection{Kinds: []string{welcomeType.Kind}, States: []runtime.State{runtime.StateCancelled}}
	n, err := runtime.CountRetryableJobs(ctx, pool, sel)
	fmt.Println("would retry", n, err)
	res, err := runtime.RetryJobs(ctx, pool, sel)
	fmt.Println("retried", res.Changed, res.IDs, err)
	_, err = runtime.RetryJobs(ctx, pool, runtime.JobSelection{})
	fmt.Println(err)
	// Output:
	// would retry 3 <nil>
	// retried 3 [1 2 3] <nil>
	// jobc: retry jobs: jobc: refusing to act on every job: give at least one filter
}

// ExampleDeleteJob deletes a waiting job. A running job would be refused with
// ErrJobRunning: cancel it first.
func ExampleDeleteJob() {
	pool, _, cleanup := pgtest.ExampleSchema("delete_job", migrated)
	defer cleanup()
	ctx := context.Background()
	job, err := runtime.Enqueue(ctx, pool, welcomeType, welcome{UserID: 1, Email: "ada@example.com"})
	if err != nil {
		panic(err)
	}
	fmt.Println(runtime.DeleteJob(ctx, pool, job.ID))
	_, err = runtime.GetJob(ctx, pool, job.ID)
	fmt.Println(errors.Is(err, runtime.ErrJobNotFound))
	// Output:
	// <nil>
	// true
}

// ExamplePauseQueue pauses a queue during an incident: no worker claims from it once
// PauseQueue returns, also after a restart, until ResumeQueue.
func ExamplePauseQueue() {
	pool, _, cleanup := pgtest.ExampleSchema("pause_queue", migrated)
	defer cleanup()
	ctx := context.Background()
	if err := runtime.PauseQueue(ctx, pool, "email"); err != nil {
		panic(err)
	}
	stats, err := runtime.ListQueueStats(ctx, pool)
	if err != nil {
		panic(err)
	}
	fmt.Println(stats[0].Queue, "paused:", stats[0].Paused)
	if err := runtime.ResumeQueue(ctx, pool, "email"); err != nil {
		panic(err)
	}
	fmt.Println(runtime.PauseQueue(ctx, pool, ""))
	// Output:
	// email paused: true
	// jobc: pause queue: jobc: queue name is empty
}

// ExampleQueueStats reports what each queue holds, for a status page or an alert on
// the age of the oldest available job.
func ExampleListQueueStats() {
	pool, _, cleanup := pgtest.ExampleSchema("queue_stats", migrated)
	defer cleanup()
	ctx := context.Background()
	for i := range 2 {
		if _, err := runtime.Enqueue(ctx, pool, welcomeType, welcome{UserID: int64(i), Email: "ada@example.com"}); err != nil {
			panic(err)
		}
	}
	if _, err := runtime.Enqueue(ctx, pool, welcomeType, welcome{UserID: 9, Email: "ada@example.com"}, runtime.RunAfter(time.Hour)); err != nil {
		panic(err)
	}
	stats, err := runtime.ListQueueStats(ctx, pool)
	if err != nil {
		panic(err)
	}
	for _, s := range stats {
		fmt.Printf("%s: %d available, %d scheduled, %d running, oldest waiting: %t\n",
			s.Queue, s.Available, s.Scheduled, s.Running, s.OldestAvailableAge > 0)
	}
	// Output:
	// email: 2 available, 1 scheduled, 0 running, oldest waiting: true
}

// ExampleSnooze returns Snooze from a handler whose job cannot run yet: the job runs
// again after the delay, on the same attempt and without an error record.
func ExampleSnooze() {
	pool, _, cleanup := pgtest.ExampleSchema("snooze", migrated)
	defer cleanup()
	ctx := context.Background()
	job, err := runtime.Enqueue(ctx, pool, welcomeType, welcome{UserID: 1, Email: "ada@example.com"})
	if err != nil {
		panic(err)
	}
	w := quietWorker(pool)
	done := make(chan struct{})
	var runs atomic.Int32
	err = runtime.Handle(w, welcomeType, func(ctx context.Context, job *runtime.Job, p welcome) error {
		if runs.Add(1) == 1 {
			// Not yet: e.g. the user has not confirmed the address.
			return job.Snooze(100 * time.Millisecond)
		}
		close(done)
		return nil
	})
	if err != nil {
		panic(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	finished := make(chan error)
	go func() { finished <- w.Run(runCtx) }()
	<-done
	stop()
	if err := <-finished; err != nil {
		panic(err)
	}
	info, err := runtime.GetJob(ctx, pool, job.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println(info.State, "after", runs.Load(), "runs: attempt", info.Attempt, "errors", len(info.Errors))
	// Output:
	// completed after 2 runs: attempt 1 errors 0
}

// ExampleListHistory checks that each finished state's history has a partition for
// the jobs that finish now, as the workers' pruners keep it: a state without one
// sends its finished jobs to its DEFAULT partition, emptied row by row, which means
// no worker's pruner has run for two partitions' time. An alert on it catches a
// fleet whose maintenance stopped.
func ExampleListHistory() {
	pool, _, cleanup := pgtest.ExampleSchema("list_history", migrated)
	defer cleanup()
	ctx := context.Background()
	report := func() {
		history, err := runtime.ListHistory(ctx, pool)
		if err != nil {
			panic(err)
		}
		for _, h := range history {
			fmt.Printf("%s: covered now: %t\n", h.State, h.Covers(time.Now()))
		}
	}
	report() // a new database: no worker has run yet
	// What a worker's pruner does when it starts.
	if _, err := pool.Exec(ctx, `SELECT jobc_history_prepare('completed', interval '1 hour', interval '2 hours')`); err != nil {
		panic(err)
	}
	report()
	// Output:
	// completed: covered now: false
	// failed: covered now: false
	// cancelled: covered now: false
	// completed: covered now: true
	// failed: covered now: false
	// cancelled: covered now: false
}
