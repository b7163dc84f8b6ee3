package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/cmd/testworker/chaosjob"
	"github.com/jobc-dev/jobc/runtime"
)

// handler runs chaos_job and records each execution, so that tests can tell how often
// and where every job ran.
type handler struct {
	pool     *pgxpool.Pool
	worker   string
	maxSleep time.Duration // 0: no cap
}

// handle records the execution's start in handled (so that an execution killed midway
// is visible), snoozes on the job's first SnoozeTimes executions, sleeps SleepMS unless
// its context ends first, fails while the attempt is at most FailAttempts, and records
// success in handled_done.
func (h *handler) handle(ctx context.Context, job *runtime.Job, p chaosjob.Payload) error {
	var run int64
	err := unconnected(ctx, func() error {
		return h.pool.QueryRow(ctx, "INSERT INTO handled (job_id, n, worker, attempt) VALUES ($1, $2, $3, $4) RETURNING run",
			job.ID, p.N, h.worker, job.Attempt).Scan(&run)
	})
	if err != nil {
		return fmt.Errorf("job %d (n=%d): insert into handled: %w", job.ID, p.N, err)
	}
	defer h.ended(ctx, job, run)
	if p.SnoozeTimes > 0 {
		var runs int64
		if err := h.pool.QueryRow(ctx, "SELECT count(*) FROM handled WHERE job_id = $1", job.ID).Scan(&runs); err != nil {
			return fmt.Errorf("job %d (n=%d): count its executions: %w", job.ID, p.N, err)
		}
		if runs <= p.SnoozeTimes {
			return job.Snooze(0)
		}
	}
	if d := h.sleep(p); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return fmt.Errorf("job %d (n=%d) interrupted during its %s sleep: %w", job.ID, p.N, d, context.Cause(ctx))
		}
	}
	if int64(job.Attempt) <= p.FailAttempts {
		return fmt.Errorf("job %d (n=%d): planned failure on attempt %d (fails while attempt <= %d)", job.ID, p.N, job.Attempt, p.FailAttempts)
	}
	if err := h.record(ctx, "handled_done", job, p); err != nil {
		return err
	}
	job.Logger().Debug("testworker: job done", "n", p.N)
	return nil
}

func (h *handler) sleep(p chaosjob.Payload) time.Duration {
	d := time.Duration(p.SleepMS) * time.Millisecond
	if h.maxSleep > 0 && d > h.maxSleep {
		d = h.maxSleep
	}
	return d
}

// ended records when the execution run ended, so that tests can tell executions that
// overlapped: the time the handler returned, by this machine's clock (the server's
// too: tests run it on the same machine), written however long writing takes. The
// write is retried for up to endRecordRetries, so that an end survives a server
// restart or a failover; a failure is then only logged: the job's outcome does not
// depend on it, and a test then has no end to compare.
func (h *handler) ended(ctx context.Context, job *runtime.Job, run int64) {
	end := time.Now()
	ctx = context.WithoutCancel(ctx)
	var err error
	for deadline := end.Add(endRecordRetries); ; time.Sleep(endRecordPause) {
		if _, err = h.pool.Exec(ctx, "UPDATE handled SET ended_at = $2 WHERE run = $1", run, end); err == nil {
			return
		}
		if time.Now().After(deadline) {
			break
		}
	}
	job.Logger().WarnContext(ctx, "testworker: could not record the end of an execution", "run", run, "err", err)
}

// unconnected runs one of the handler's own bookkeeping statements, again while it
// fails because the pool could not open a connection (the server refused it, e.g. at
// max_connections: ten processes hold about 110 connections at their peak), for up to
// endRecordRetries. Nothing reached the server then, so running it again cannot record
// an execution twice; returned, the failure would fail the attempt, and the job, whose
// work succeeded, would run again (counted by the tests as a double execution).
func unconnected(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(endRecordRetries)
	for {
		err := f()
		var connErr *pgconn.ConnectError
		if err == nil || !errors.As(err, &connErr) || ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-time.After(endRecordPause):
		case <-ctx.Done():
			return err
		}
	}
}

// How long and how often ended retries the record of an execution's end.
const (
	endRecordRetries = 10 * time.Second
	endRecordPause   = 100 * time.Millisecond
)

// record inserts the execution into table (handled or handled_done).
func (h *handler) record(ctx context.Context, table string, job *runtime.Job, p chaosjob.Payload) error {
	err := unconnected(ctx, func() error {
		_, err := h.pool.Exec(ctx, "INSERT INTO "+table+" (job_id, n, worker, attempt) VALUES ($1, $2, $3, $4)",
			job.ID, p.N, h.worker, job.Attempt)
		return err
	})
	if err != nil {
		return fmt.Errorf("job %d (n=%d): insert into %s: %w", job.ID, p.N, table, err)
	}
	return nil
}

// step runs a chaos_step: it records its execution as handle does, works for SleepMS
// unless its context ends first, and returns its n as its result.
func (h *handler) step(ctx context.Context, job *runtime.Job, p chaosjob.StepPayload) (chaosjob.StepResult, error) {
	var run int64
	err := h.pool.QueryRow(ctx, "INSERT INTO handled (job_id, n, worker, attempt) VALUES ($1, $2, $3, $4) RETURNING run",
		job.ID, p.N, h.worker, job.Attempt).Scan(&run)
	if err != nil {
		return chaosjob.StepResult{}, fmt.Errorf("step %d (n=%d): insert into handled: %w", job.ID, p.N, err)
	}
	defer h.ended(ctx, job, run)
	if d := h.sleep(chaosjob.Payload{SleepMS: p.SleepMS}); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return chaosjob.StepResult{}, fmt.Errorf("step %d (n=%d) interrupted during its %s sleep: %w", job.ID, p.N, d, context.Cause(ctx))
		}
	}
	if err := h.record(ctx, "handled_done", job, chaosjob.Payload{N: p.N}); err != nil {
		return chaosjob.StepResult{}, err
	}
	return chaosjob.StepResult{N: p.N}, nil
}
