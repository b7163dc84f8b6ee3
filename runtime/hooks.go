package runtime

import (
	"context"
	"maps"
	"slices"
	"time"
)

// Hook observes a worker: Config.Hooks receive an Event for every claim, handler start,
// finish (a snooze is a finish with OutcomeSnoozed), rescue and maintenance run, with
// the context at hand (a job's events carry the job's context). OnEvent runs on the
// worker's hot path, in the goroutine of the job: it must be fast and must not block.
// Metric adapters count and return; anything slower belongs in a goroutine of its own.
//
// Enqueues happen outside any worker, in Enqueue and the generated Enqueue<T>; they are
// seen by an EnqueueHook passed with WithHooks.
type Hook interface {
	OnEvent(ctx context.Context, e Event)
}

// Middleware wraps the handlers of a worker (Config.Middleware), outermost first: it may
// put values in the handler's context (a tracing span), time the handler, or turn its
// error into another. It must call next, at most once, and return next's error unless it
// means to change the job's outcome.
type Middleware interface {
	WrapHandler(ctx context.Context, job *Job, next func(ctx context.Context) error) error
}

// EventKind says what an Event reports.
type EventKind uint8

// The events a Hook sees.
const (
	// EventClaim: the worker leased Count jobs of Queue in one statement.
	EventClaim EventKind = iota + 1
	// EventStart: a handler is about to run Job; Wait is how long the job had been
	// available before it was claimed.
	EventStart
	// EventFinish: a handler returned and the worker decided the attempt's Outcome
	// (with ErrorClass and Err for a failed attempt); RunTime is the handler's time.
	EventFinish
	// EventRescue: the rescuer returned Count jobs of Queue whose lease had expired
	// (one event per queue).
	EventRescue
	// EventMaintenance: maintenance service Service ran once, taking RunTime, with
	// Result (its result value) or Err.
	EventMaintenance
)

// String returns the event kind's name: claim, start, finish, rescue, maintenance.
func (k EventKind) String() string {
	switch k {
	case EventClaim:
		return "claim"
	case EventStart:
		return "start"
	case EventFinish:
		return "finish"
	case EventRescue:
		return "rescue"
	case EventMaintenance:
		return "maintenance"
	}
	return "unknown"
}

// Outcomes of an attempt, as Event.Outcome and in every metric label, CLI column and
// dashboard: the same words everywhere.
const (
	OutcomeCompleted = "completed" // done
	OutcomeRetried   = "retried"   // failed, will run again after a backoff
	OutcomeFailed    = "failed"    // failed for good: out of attempts or a permanent class
	OutcomeCancelled = "cancelled" // cancelled while running
	OutcomeSnoozed   = "snoozed"   // asked to run again later, no attempt counted
	OutcomeReleased  = "released"  // given back at shutdown, no attempt counted
)

// Event is what a Hook sees. It is passed by value, so observing costs no allocation;
// which fields are set depends on Kind (see the EventKind constants).
type Event struct {
	Kind    EventKind
	Worker  string // the worker's ID
	Queue   string
	JobKind string // the job's kind as stored
	// Job is the running job (EventStart, EventFinish); a Hook must not keep it.
	Job        *Job
	Attempt    int
	Outcome    string // EventFinish: one of the Outcome constants
	ErrorClass string // EventFinish: the error's class, "" for none
	Err        error  // EventFinish: the handler's error; EventMaintenance: the run's
	// Wait is how long the job was available before its claim (EventStart, EventFinish).
	Wait time.Duration
	// RunTime is the handler's time (EventFinish) or the service's (EventMaintenance).
	RunTime time.Duration
	Count   int    // EventClaim: jobs claimed; EventRescue: jobs rescued
	Service string // EventMaintenance: the service's name (scheduler, rescuer, ...)
	Result  any    // EventMaintenance: the service's result, a struct of counts
}

// emit passes e to every hook. With no hook configured it is a length check.
func (w *Worker) emit(ctx context.Context, e Event) {
	if len(w.cfg.Hooks) == 0 {
		return
	}
	e.Worker = w.cfg.ID
	for _, h := range w.cfg.Hooks {
		h.OnEvent(ctx, e)
	}
}

// wrap returns run wrapped in the worker's middleware, outermost first.
func (w *Worker) wrap(job *Job, run func(ctx context.Context) error) func(ctx context.Context) error {
	for i := len(w.cfg.Middleware) - 1; i >= 0; i-- {
		m, next := w.cfg.Middleware[i], run
		run = func(ctx context.Context) error { return m.WrapHandler(ctx, job, next) }
	}
	return run
}

// label is the outcome's name in events and metrics.
func (o outcome) label() string {
	switch o {
	case outcomeComplete, outcomeRecorded: // recorded: the handler's transaction completed it
		return OutcomeCompleted
	case outcomeRetry:
		return OutcomeRetried
	case outcomeFail:
		return OutcomeFailed
	case outcomeCancel:
		return OutcomeCancelled
	case outcomeSnooze:
		return OutcomeSnoozed
	case outcomeRelease:
		return OutcomeReleased
	}
	return "unknown"
}

// handle runs the handler through the worker's middleware, if any.
func (w *Worker) handle(ctx context.Context, job *Job, run func(ctx context.Context) error) error {
	if len(w.cfg.Middleware) == 0 {
		return run(ctx)
	}
	return w.wrap(job, run)(ctx)
}

// observe emits job's start event and returns the function, to be deferred, that emits
// its finish event with the outcome execute decided and the handler's error.
func (w *Worker) observe(ctx context.Context, job *Job, wait time.Duration) func(res *result, err *error) {
	began := time.Now()
	e := Event{Kind: EventStart, Queue: job.Queue, JobKind: job.Kind, Job: job, Attempt: job.Attempt, Wait: wait}
	w.emit(ctx, e)
	return func(res *result, err *error) {
		e.Kind, e.RunTime = EventFinish, time.Since(began)
		e.Outcome, e.ErrorClass = res.outcome.label(), res.err.Class
		if res.outcome != outcomeComplete && res.outcome != outcomeRecorded {
			e.Err = *err
		}
		w.emit(ctx, e)
	}
}

// emitMaintenance reports one run of a maintenance service, and the rescuer's rescues
// as an EventRescue of their own: a rescue means a worker vanished with work in hand.
func (w *Worker) emitMaintenance(ctx context.Context, name string, took time.Duration, res any, err error) {
	w.emit(ctx, Event{Kind: EventMaintenance, Service: name, RunTime: took, Result: res, Err: err})
	if r, ok := res.(rescuerResult); ok {
		for _, queue := range slices.Sorted(maps.Keys(r.ByQueue)) {
			w.emit(ctx, Event{Kind: EventRescue, Queue: queue, Count: r.ByQueue[queue]})
		}
	}
}
