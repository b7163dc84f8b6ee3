package runtime

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// This file holds every error the runtime returns for callers to test with errors.Is
// or errors.As.

// ErrLeaseLost is returned by Heartbeat when the job's lease is no longer this
// worker's: it expired and was rescued, or the job was cancelled. The handler should
// stop; another attempt may be running elsewhere.
var ErrLeaseLost = errors.New("jobc: the job's lease was lost")

// ErrJobFinished is returned by CancelJob for a job that already finished.
var ErrJobFinished = errors.New("jobc: job already finished")

// ErrNoLimit is returned for a kind or queue without flow control: only limits the
// spec declares can be changed, since only their jobs carry the keys limits count.
var ErrNoLimit = errors.New("jobc: no flow control declared")

// ErrJobNotFound is returned by GetJob for an id that no job has (or had, before
// retention pruned it).
var ErrJobNotFound = errors.New("jobc: job not found")

// ErrNoResult is returned by JobResult for a job that has not completed (it waits,
// runs, failed or was cancelled): only a completed job has a result. The error names
// the job's state.
var ErrNoResult = errors.New("jobc: job has no result")

// ErrWorkflowNotFound is returned by GetWorkflow for an id that no workflow has (or
// had, before retention pruned it).
var ErrWorkflowNotFound = errors.New("jobc: workflow not found")

// ErrWorkflowEnded is returned by CancelWorkflow and SignalWorkflow for a workflow that
// had already ended (completed, failed or cancelled); the error names its state.
var ErrWorkflowEnded = errors.New("jobc: workflow already ended")

// ErrWorkflowNotRetryable is returned by RetryWorkflow for a workflow that runs or
// completed: only a failed or cancelled one resumes.
var ErrWorkflowNotRetryable = errors.New("jobc: workflow neither failed nor cancelled")

// ErrNoFilter is returned by a bulk mutation whose JobSelection has no filter.
var ErrNoFilter = errors.New("jobc: refusing to act on every job: give at least one filter")

// Errors of the control API, for errors.Is.
var (
	ErrJobRunning     = errors.New("jobc: job is running: cancel it first")
	ErrUniqueConflict = errors.New("jobc: another job holds the unique key")
	ErrNothingToRetry = errors.New("jobc: job is not failed, cancelled or scheduled")
	ErrEmptyQueueName = errors.New("jobc: queue name is empty")
)

// PayloadError says why a payload does not match its version's schema, or would not
// reach a handler exactly as it was given: a string that is not UTF-8 or holds a NUL,
// a NaN or infinity, a number its Go type cannot hold as PostgreSQL stores it (an
// integer written with a fraction, or beyond int64; a number beyond float64 or so
// small that it rounds to 0), nesting deeper than 64 objects and arrays. With
// Metadata, the problems are in the job's (or event's) metadata instead; with Result,
// in a result of the job type (Version is then the result's version).
type PayloadError struct {
	Kind     string
	Version  int
	Metadata bool
	Result   bool
	Problems []Problem
}

// Problem is one schema violation, at a JSON pointer into the payload.
type Problem struct {
	Field   string // "/recipient", "/items/0/sku"; "" for the whole payload
	Message string
}

func (e *PayloadError) Error() string {
	var b strings.Builder
	switch {
	case e.Metadata:
		fmt.Fprintf(&b, "invalid %s metadata: ", e.Kind)
	case e.Result:
		fmt.Fprintf(&b, "invalid %s result (version %d): ", e.Kind, e.Version)
	default:
		fmt.Fprintf(&b, "invalid %s payload (version %d): ", e.Kind, e.Version)
	}
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		if p.Field != "" {
			b.WriteString(p.Field)
			b.WriteString(": ")
		}
		b.WriteString(p.Message)
	}
	return b.String()
}

// ClassError is a handler error of a declared class. Generated code has a constructor
// for each class a job declares; handlers return those instead of building this.
type ClassError struct {
	Class      string
	RetryAfter time.Duration // only for classes with DelayFromError
	Err        error
}

func (e *ClassError) Error() string {
	if e.Err == nil {
		return e.Class
	}
	return e.Err.Error()
}

func (e *ClassError) Unwrap() error { return e.Err }
