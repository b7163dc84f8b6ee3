package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/completer"
	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// errCancelled is the cause of a handler context cancelled by runtime.CancelJob.
var errCancelled = errors.New("jobc: job cancelled")

// Pseudo-classes the runtime assigns on its own.
const (
	classInvalidPayload = "invalid_payload" // the stored payload does not match its schema: never retried
	classPanic          = "panic"
	classTimeout        = "timeout"
	classCancelled      = "cancelled"
	classUnregistered   = "unregistered"
)

var errTimeout = errors.New("jobc: handler timeout")

// execute runs one claimed job's handler and decides its outcome.
func (w *Worker) execute(workCtx context.Context, row *db.ClaimJobsRow) (res result) {
	r := w.kinds[row.Kind]
	// The Job and what the handler's closure hands back share one allocation, and the
	// closure reads nothing else of execute's: every variable a closure that escapes
	// (into the middleware) shares would cost an allocation of its own, every job.
	a := &attempt{job: Job{
		ID:             row.ID,
		Kind:           row.Kind,
		Queue:          row.Queue,
		Attempt:        int(row.Attempt),
		MaxAttempts:    int(row.MaxAttempts),
		Priority:       int(row.Priority),
		PayloadVersion: int(row.PayloadVersion),
		CreatedAt:      row.CreatedAt,
		Metadata:       row.Metadata,
		base:           w.log,
		worker:         w,
	}, r: r, payload: row.Payload}
	job := &a.job
	// Every outcome names the claim it ends (see completer.Result.ClaimedAt).
	claimedAt := row.AvailableAt
	defer func() { res.ClaimedAt = claimedAt }()
	if r == nil { // cannot happen: the claim filter only takes registered kinds
		return w.decide(nil, job, &ClassError{Class: classUnregistered, Err: fmt.Errorf("no handler for kind %q", row.Kind)})
	}

	ctx, cancel := context.WithCancelCause(workCtx)
	defer cancel(nil)
	if r.jt.Timeout > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, r.jt.Timeout, errTimeout)
		defer stop()
	}
	w.running.Started(job.ID, cancel)
	began := time.Now()

	var err error
	if len(w.cfg.Hooks) > 0 {
		o := w.observe(ctx, job, time.Duration(row.WaitedSeconds*float64(time.Second)))
		defer func() { o.finish(ctx, res, err) }()
	}
	if r.runTx != nil {
		err = w.handle(ctx, job, a.runTx)
		if a.recorded {
			return newResult(job.ID, row.Attempt, completer.Recorded)
		}
	} else {
		err = w.handle(ctx, job, a.run)
	}
	if err != nil {
		switch cause := context.Cause(ctx); {
		case errors.Is(cause, errShutdown):
			return newResult(job.ID, row.Attempt, completer.Release)
		case errors.Is(cause, errCancelled):
			job.Logger().Info("jobc job cancelled")
			res = newResult(job.ID, row.Attempt, completer.Cancel)
			res.setError(w.attemptError(job, classCancelled, "cancelled while running: "+err.Error()))
			return res
		case errors.Is(cause, errTimeout):
			err = &ClassError{Class: classTimeout, Err: fmt.Errorf("handler exceeded its timeout of %s: %w", r.jt.Timeout, err)}
		}
	}
	res = w.decide(r.jt, job, err)
	if res.Outcome == completer.Complete && a.output != nil {
		res.Output, res.OutputVersion = a.output, int32(r.jt.ResultWriteVersion)
	}
	// Checked first: tagging the job's logger costs an allocation the hot path would
	// pay for nothing when Debug is off.
	if res.Outcome == completer.Complete && w.log.Enabled(ctx, slog.LevelDebug) {
		job.Logger().DebugContext(ctx, "jobc job completed", slog.String("took", time.Since(began).String()))
	}
	return res
}

// attempt is one execution of a job: the Job its handler receives, what the handler
// runs on, and what it hands back to execute.
type attempt struct {
	job     Job
	r       *registration
	payload []byte

	output   []byte // the job's result, encoded (HandleResult)
	recorded bool   // a transactional handler's: nothing is left to record
}

// run runs the job's handler, a panic turned into an error.
func (a *attempt) run(ctx context.Context) error {
	return safeRun(func() (err error) {
		a.output, err = a.r.run(ctx, &a.job, a.job.PayloadVersion, a.payload)
		return err
	})
}

// runTx runs the job's transactional handler (runInTx).
func (a *attempt) runTx(ctx context.Context) (err error) {
	a.recorded, err = a.job.worker.runInTx(ctx, a.r, &a.job, a.job.PayloadVersion, a.payload)
	return err
}

// runInTx runs a transactional handler: the handler's writes and the job's completion
// commit together. recorded reports that nothing is left to record: the job completed
// with the commit, or its lease was lost and another worker owns it now.
func (w *Worker) runInTx(ctx context.Context, r *registration, job *Job, version int, payload []byte) (recorded bool, err error) {
	tx, err := w.pool.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("begin the handler's transaction: %w", dberr.Describe(err))
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	var output []byte // the job's result, encoded (HandleTxResult)
	if err := safeRun(func() (err error) {
		output, err = r.runTx(ctx, tx, job, version, payload)
		return err
	}); err != nil {
		return false, err
	}
	params := db.CompleteJobInTxParams{ID: job.ID, Attempt: int32(job.Attempt), Owner: w.cfg.ID}
	if output != nil {
		v := int32(r.jt.ResultWriteVersion)
		params.Result, params.ResultVersion = output, &v
	}
	n, err := db.New(tx).CompleteJobInTx(ctx, params)
	if err != nil {
		return false, fmt.Errorf("complete the job in the handler's transaction: %w", dberr.Describe(err))
	}
	if n == 0 {
		job.Logger().Warn("jobc job: lease lost before commit; rolled back the handler's transaction")
		return true, nil
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("commit the handler's transaction: %w", dberr.Describe(err))
	}
	return true, nil
}

// safeRun calls f and turns a panic into an error.
func safeRun(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &ClassError{Class: classPanic, Err: fmt.Errorf("panic: %v\n%s", p, debug.Stack())}
		}
	}()
	return f()
}

func (w *Worker) attemptError(job *Job, class, msg string) AttemptError {
	return AttemptError{Attempt: job.Attempt, At: time.Now().UTC(), Class: class, Error: msg, Worker: w.cfg.ID}
}

// result is a finished attempt: what the completer records, and the error class the
// hooks see.
type result struct {
	completer.Result
	class string
}

func newResult(id int64, attempt int32, o completer.Outcome) result {
	return result{Result: completer.Result{ID: id, Attempt: attempt, Outcome: o}}
}

// setError records the attempt's error: its class for the hooks, and the record the
// job's errors keep.
func (r *result) setError(e AttemptError) {
	r.class = e.Class
	b, err := json.Marshal(e)
	if err != nil { // cannot happen: AttemptError has only plain fields
		b = []byte(`{"error":"unencodable error"}`)
	}
	r.Error = b
}

// decide turns a handler's return value into the job's next state.
func (w *Worker) decide(jt *JobType, job *Job, err error) result {
	res := newResult(job.ID, int32(job.Attempt), completer.Complete)
	if err == nil {
		res.Outcome = completer.Complete
		return res
	}
	if d, ok := snoozed(err); ok {
		res.Outcome, res.RunAt = completer.Snooze, time.Now().Add(d)
		job.Logger().Debug("jobc job snoozed", "for", d.String())
		return res
	}
	className := ""
	var retryAfter time.Duration
	if ce, ok := classOf(err); ok {
		className, retryAfter = ce.Class, ce.RetryAfter
	}
	retry, maxAttempts := true, job.MaxAttempts
	backoff := DefaultBackoff()
	var class ErrorClass
	declared := false
	if jt != nil {
		if jt.Backoff.Initial > 0 {
			backoff = jt.Backoff
		}
		if className == "" && jt.DefaultClass != "" {
			className = jt.DefaultClass
		}
		class, declared = jt.class(className)
	}
	switch {
	case declared:
		retry = class.Retry
		if class.Backoff != nil {
			backoff = *class.Backoff
		}
		if class.MaxAttempts > 0 {
			maxAttempts = class.MaxAttempts
		}
	case className == classInvalidPayload || className == classUnregistered:
		retry = false
	}

	res.setError(w.attemptError(job, className, err.Error()))
	if !retry || job.Attempt >= maxAttempts {
		res.Outcome = completer.Fail
		job.Logger().Warn("jobc job failed", "class", className, "err", err)
		return res
	}
	delay := backoff.Delay(job.Attempt, nil)
	if declared && class.DelayFromError && retryAfter > 0 {
		delay = retryAfter
	}
	res.Outcome = completer.Retry
	res.RunAt = time.Now().Add(delay)
	job.Logger().Info("jobc job will retry", "class", className, "in", delay.String(), "err", err)
	return res
}

// startHandlers starts the queue's handler goroutines. They live as long as the
// worker, so a job does not pay for a new goroutine and its stack growth.
func (w *Worker) startHandlers(workCtx context.Context, q *queue, handlers *sync.WaitGroup, results chan<- completer.Result) {
	for range q.max {
		handlers.Add(1)
		go func() {
			defer handlers.Done()
			for row := range q.jobs {
				res := w.execute(workCtx, &row.ClaimJobsRow).Result
				// A completed job of a key at its limit, of a kind that passes
				// places on, keeps its place for the next job of its key until its
				// outcome is recorded (passing.go): the completer frees it then if
				// nothing took it. A paused queue passes nothing on.
				if res.Outcome == completer.Complete && row.AtLimit && w.status.running.Load() && !q.paused.Load() {
					res.Pass = w.passing.index[row.Kind]
				}
				results <- res
				if res.Pass == 0 {
					q.active.Add(-1)
					signal(q.slotFreed)
				}
			}
		}()
	}
}
