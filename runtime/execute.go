package runtime

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// Pseudo-classes the runtime assigns on its own.
const (
	classInvalidPayload = "invalid_payload" // the stored payload does not match its schema: never retried
	classPanic          = "panic"
	classTimeout        = "timeout"
	classUnregistered   = "unregistered"
)

// execute runs one claimed job's handler and decides its outcome.
func (w *Worker) execute(workCtx context.Context, row db.ClaimJobsRow) result {
	r := w.kinds[row.Kind]
	job := &Job{
		ID:             row.ID,
		Kind:           row.Kind,
		Queue:          row.Queue,
		Attempt:        int(row.Attempt),
		MaxAttempts:    int(row.MaxAttempts),
		Priority:       int(row.Priority),
		PayloadVersion: int(row.PayloadVersion),
		CreatedAt:      row.CreatedAt,
		Metadata:       row.Metadata,
	}
	job.logger = w.log.With("job_id", job.ID, "kind", job.Kind, "attempt", job.Attempt)
	job.extend = func(ctx context.Context) error { return w.extendOne(ctx, job.ID) }
	if r == nil { // cannot happen: the claim filter only takes registered kinds
		return w.decide(nil, job, &ClassError{Class: classUnregistered, Err: fmt.Errorf("no handler for kind %q", row.Kind)})
	}

	ctx := workCtx
	var cancel context.CancelFunc
	if r.jt.Timeout > 0 {
		ctx, cancel = context.WithTimeoutCause(workCtx, r.jt.Timeout, errTimeout)
	} else {
		ctx, cancel = context.WithCancel(workCtx)
	}
	defer cancel()

	err := safeRun(ctx, r, job, int(row.PayloadVersion), row.Payload)
	if err != nil {
		switch cause := context.Cause(ctx); {
		case errors.Is(cause, errTimeout):
			err = &ClassError{Class: classTimeout, Err: fmt.Errorf("handler exceeded its timeout of %s: %w", r.jt.Timeout, err)}
		case errors.Is(cause, errShutdown):
			return result{id: job.ID, attempt: int32(job.Attempt), outcome: outcomeRelease}
		}
	}
	return w.decide(r.jt, job, err)
}

var errTimeout = errors.New("jobc: handler timeout")

// safeRun calls the handler and turns a panic into an error.
func safeRun(ctx context.Context, r *registration, job *Job, version int, payload []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &ClassError{Class: classPanic, Err: fmt.Errorf("panic: %v\n%s", p, debug.Stack())}
		}
	}()
	return r.run(ctx, job, version, payload)
}

// decide turns a handler's return value into the job's next state.
func (w *Worker) decide(jt *JobType, job *Job, err error) result {
	res := result{id: job.ID, attempt: int32(job.Attempt)}
	if err == nil {
		res.outcome = outcomeComplete
		return res
	}
	now := time.Now()
	className := ""
	var retryAfter time.Duration
	if ce, ok := classOf(err); ok {
		className, retryAfter = ce.Class, ce.RetryAfter
	}

	retry, maxAttempts := true, job.MaxAttempts
	backoff := DefaultBackoff
	if jt != nil {
		backoff = jt.Backoff
	}
	class, declared := ErrorClass{}, false
	if jt != nil {
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
		if class.MaxAttempts > 0 && class.MaxAttempts < maxAttempts {
			maxAttempts = class.MaxAttempts
		}
	case className == classInvalidPayload || className == classUnregistered:
		retry = false
	}
	if jt != nil && jt.Backoff.Initial == 0 && class.Backoff == nil {
		backoff = DefaultBackoff
	}

	res.err = AttemptError{Attempt: job.Attempt, At: now.UTC(), Class: className, Error: err.Error(), Worker: w.cfg.ID}
	switch {
	case !retry || job.Attempt >= maxAttempts:
		res.outcome = outcomeFail
		job.logger.Warn("jobc job failed", "class", className, "err", err)
	default:
		delay := backoff.Delay(job.Attempt, nil)
		if declared && class.DelayFromError && retryAfter > 0 {
			delay = retryAfter
		}
		res.outcome = outcomeRetry
		res.runAt = now.Add(delay)
		job.logger.Info("jobc job will retry", "class", className, "in", delay, "err", err)
	}
	return res
}
