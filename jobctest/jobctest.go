// Package jobctest helps applications test code that enqueues and handles jobc jobs,
// against a real PostgreSQL: assert what a transaction enqueued with its payload
// decoded as a worker decodes it, run one job's handler in a transaction that rolls
// back, and work every waiting job to completion with a worker tuned for tests.
//
// The typed helpers are a [Kind] per job type. jobc generate declares them in a
// package of their own beside the generated one, <out>/<package>test (jobs →
// jobstest), which only tests import, so the application's binary links neither it
// nor package testing:
//
//	func TestPlaceOrder(t *testing.T) {
//		orderID := placeOrder(t, pool)
//		job := jobstest.SendConfirmation.RequireEnqueued(t, pool)
//		if job.Payload.OrderID != orderID { ... }
//		jobctest.Work(t, pool, func(w *runtime.Worker) error { return jobs.Register(w, handlers) })
//	}
package jobctest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime"
)

// Work runs a worker, with the handlers register adds, until no job is available,
// running, or scheduled to run within a second, then stops it and returns the jobs that
// finished meanwhile. It fails the test after a minute, or if the worker fails.
func Work(t testing.TB, pool *pgxpool.Pool, register func(w *runtime.Worker) error) []*runtime.JobInfo {
	t.Helper()
	ctx := context.Background()
	var start time.Time
	if err := pool.QueryRow(ctx, "SELECT now()").Scan(&start); err != nil {
		t.Fatalf("jobctest: %v", err)
	}
	w := runtime.NewWorker(pool, runtime.Config{
		ID:                "jobctest",
		Logger:            slog.New(slog.DiscardHandler),
		PollInterval:      20 * time.Millisecond,
		SchedulerInterval: 20 * time.Millisecond,
		ShutdownGrace:     5 * time.Second,
	})
	if err := register(w); err != nil {
		t.Fatalf("jobctest: register handlers: %v", err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	deadline := time.Now().Add(time.Minute)
	for {
		busy, err := pending(ctx, pool)
		if err != nil {
			stop()
			t.Fatalf("jobctest: %v", err)
		}
		if !busy {
			break
		}
		if time.Now().After(deadline) {
			stop()
			<-done //nolint:errcheck // the worker's error says nothing about the jobs left pending
			t.Fatalf("jobctest: jobs still pending after a minute")
		}
		select {
		case err := <-done:
			stop()
			t.Fatalf("jobctest: worker stopped: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("jobctest: worker: %v", err)
	}
	var finished []*runtime.JobInfo
	for _, st := range []runtime.State{runtime.StateCompleted, runtime.StateFailed, runtime.StateCancelled} {
		page, err := runtime.ListJobs(ctx, pool, runtime.JobFilter{JobSelection: runtime.JobSelection{
			States: []runtime.State{st}, Limit: 10000}})
		if err != nil {
			t.Fatalf("jobctest: %v", err)
		}
		for _, j := range page.Jobs {
			if j.FinishedAt != nil && !j.FinishedAt.Before(start) {
				finished = append(finished, j)
			}
		}
	}
	return finished
}

// pending reports whether any job is available, running, or scheduled within a second.
func pending(ctx context.Context, db runtime.DBTX) (bool, error) {
	for _, st := range []runtime.State{runtime.StateAvailable, runtime.StateRunning, runtime.StateScheduled} {
		page, err := runtime.ListJobs(ctx, db, runtime.JobFilter{JobSelection: runtime.JobSelection{
			States: []runtime.State{st}, Limit: 1000}})
		if err != nil {
			return false, err
		}
		for _, j := range page.Jobs {
			if st != runtime.StateScheduled || time.Until(j.AvailableAt) < time.Second {
				return true, nil
			}
		}
	}
	return false, nil
}
