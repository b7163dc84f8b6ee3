package runtime

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/completer"
	"github.com/jobc-dev/jobc/runtime/internal/maintenance"
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
	// EventReconnect: the worker closed all of its own connections to open new ones,
	// because Err showed their server unusable (read-only after a failover, shutting
	// down), a connection broken, or the server silent for a statement timeout
	// (FollowPrimary). Many in a row mean the database or the network is failing.
	EventReconnect
)

// String returns the event kind's name: claim, start, finish, rescue, maintenance,
// reconnect.
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
	case EventReconnect:
		return "reconnect"
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
	Err        error  // EventFinish: the handler's error; EventMaintenance: the run's; EventReconnect: the failure
	// Wait is how long the job was available before its claim (EventStart, EventFinish).
	Wait time.Duration
	// RunTime is the handler's time (EventFinish) or the service's (EventMaintenance).
	RunTime time.Duration
	Count   int    // EventClaim: jobs claimed; EventRescue: jobs rescued
	Service string // EventMaintenance: the service's name (scheduler, rescuer, ...)
	// Result is what the run did (EventMaintenance), by Service: a SchedulerResult,
	// RescuerResult, PrunerResult, RegistryPrunerResult, AgerResult, VacuumerResult,
	// UnhandledResult, FlowKeyerResult ("flow keyer"), UpgraderResult ("upgrader
	// <kind>") or PeriodicResult ("periodic <kind>"). A run
	// that failed carries what it did before the error.
	Result any
}

// SchedulerResult is what one run of the scheduler did: it makes due scheduled jobs
// (delayed jobs and retries) available, and fires workflows' due timers.
type SchedulerResult struct {
	Promoted int64            // jobs made available
	ByQueue  map[string]int64 // of those, per queue
	// Timers is how many workflow steps whose timers were due it ended: sleeps that
	// were over, and waits for a signal that timed out.
	Timers int64
}

// RescuerResult is what one run of the rescuer did: it returns jobs whose lease expired
// (their worker crashed, was killed or lost its connection) to their queue, or fails or
// cancels them. Each queue with rescues is also reported as an EventRescue.
type RescuerResult struct {
	Retried   int            // back in their queue, the attempt counted
	Failed    int            // out of attempts
	Cancelled int            // their cancellation had been requested
	ByQueue   map[string]int // jobs rescued, by queue
}

// PrunerResult is what one run of the pruner did: it retires finished jobs past their
// state's Retention, dropping the partitions of history that end before it (and
// deleting the old rows of the DEFAULT partitions, which hold what no partition
// covered), adds the partitions of the next two intervals, and deletes workflows that
// ended as long ago (kept as long as jobs that end in their state) and handlers' old
// idempotency keys.
type PrunerResult struct {
	// Finished jobs deleted from the DEFAULT partitions, by state.
	Completed, Failed, Cancelled int64
	// Partitions of history dropped, added ahead, and past retention but left for a
	// later run because their drop waited more than 100 ms for its lock (a long
	// transaction reading history holds it off; see docs/operations.md).
	Dropped, Added, Deferred int64
	IdempotencyKeys          int64
	Workflows                int64 // ended workflows, with their steps
}

// RegistryPrunerResult is what one run of the registry pruner deleted: workers that
// stopped heartbeating, the sleeper rows of workers that left the registry, and the
// state rows of flow keys no job needs.
type RegistryPrunerResult struct {
	Workers  int64
	Sleepers int64
	FlowKeys int64
}

// AgerResult is what one run of the starvation ager did (Config.StarvationBound).
type AgerResult struct {
	Aged int64 // available jobs moved to priority 0 after waiting longer than the bound
	// Deferred: the run did not read the queues, as the last took long (a held
	// snapshot keeps every dead entry it reads): it waits 20 times that long.
	Deferred bool
}

// VacuumerResult is what one run of the vacuumer found and did
// (Config.VacuumDeadRows): it vacuums jobc_jobs once its dead row versions pass the
// threshold, one worker at a time, and at most a twentieth of the time.
type VacuumerResult struct {
	Dead, Live int64 // the row versions of jobc_jobs PostgreSQL's statistics counted
	// Vacuumed: the run vacuumed jobc_jobs; DeadAfter is what the statistics counted
	// after it: the versions a snapshot still open may read, which no vacuum removes
	// until it ends.
	Vacuumed  bool
	DeadAfter int64
	// Deferred: past the threshold, but the last vacuum ended less than twenty times
	// its duration ago, or another worker is vacuuming.
	Deferred bool
	// NotPermitted: the worker's role may not vacuum jobc_jobs (it must own it, or,
	// from PostgreSQL 17, hold MAINTAIN on it); autovacuum alone keeps it.
	NotPermitted bool
}

// UnhandledResult is what one run of the unhandled-jobs reporter found: available jobs
// of a queue this worker serves, of a kind no live worker of the queue handles.
type UnhandledResult struct {
	Found  []UnhandledJobs
	Logged int // how many of Found it logged; the others were logged recently
}

// UnhandledJobs are the available jobs of one kind in one queue nobody handles.
type UnhandledJobs struct {
	Kind       string
	Queue      string
	Jobs       int64
	OldestWait time.Duration // since the longest-waiting one became due
}

// UpgraderResult is what one run of a job type's payload upgrader did
// (Config.UpgradePayloads).
type UpgraderResult struct {
	Target   int   // the version rewritten to; at most the oldest decoded: nothing to do
	Waiting  int64 // jobs below Target when the run began
	Upgraded int   // jobs rewritten
	Skipped  int   // jobs whose upcast failed, left at their version
}

// PeriodicResult is what one run of a scheduled job type's periodic enqueuer did.
type PeriodicResult struct {
	Occurrence time.Time // the occurrence it enqueued or found enqueued; zero: none was due
	JobID      int64     // the occurrence's job
	Duplicate  bool      // another node had enqueued it
}

// unhandledResult converts the reporter's result to the exported type.
func unhandledResult(r maintenance.UnhandledResult) UnhandledResult {
	out := UnhandledResult{Found: make([]UnhandledJobs, len(r.Found)), Logged: r.Logged}
	for i, f := range r.Found {
		out.Found[i] = UnhandledJobs(f)
	}
	return out
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

// outcomeLabel is the outcome's name in events and metrics.
func outcomeLabel(o completer.Outcome) string {
	switch o {
	case completer.Complete, completer.Recorded: // recorded: the handler's transaction completed it
		return OutcomeCompleted
	case completer.Retry:
		return OutcomeRetried
	case completer.Fail:
		return OutcomeFailed
	case completer.Cancel:
		return OutcomeCancelled
	case completer.Snooze:
		return OutcomeSnoozed
	case completer.Release:
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

// observe emits job's start event and returns the observation whose finish, deferred,
// emits its finish event.
func (w *Worker) observe(ctx context.Context, job *Job, wait time.Duration) observation {
	o := observation{w: w, began: time.Now(),
		e: Event{Kind: EventStart, Queue: job.Queue, JobKind: job.Kind, Job: job, Attempt: job.Attempt, Wait: wait}}
	w.emit(ctx, o.e)
	return o
}

// observation is a job's execution as the hooks see it (observe).
type observation struct {
	w     *Worker
	began time.Time
	e     Event
}

// finish emits the job's finish event with the outcome execute decided and the
// handler's error.
func (o observation) finish(ctx context.Context, res result, err error) {
	e := o.e
	e.Kind, e.RunTime = EventFinish, time.Since(o.began)
	e.Outcome, e.ErrorClass = outcomeLabel(res.Outcome), res.class
	if res.Outcome != completer.Complete && res.Outcome != completer.Recorded {
		e.Err = err
	}
	o.w.emit(ctx, e)
}

// emitMaintenance reports one run of a maintenance service, and the rescuer's rescues
// as an EventRescue of their own: a rescue means a worker vanished with work in hand.
func (w *Worker) emitMaintenance(ctx context.Context, name string, took time.Duration, res any, err error) {
	w.emit(ctx, Event{Kind: EventMaintenance, Service: name, RunTime: took, Result: res, Err: err})
	if r, ok := res.(RescuerResult); ok {
		for _, queue := range slices.Sorted(maps.Keys(r.ByQueue)) {
			w.emit(ctx, Event{Kind: EventRescue, Queue: queue, Count: r.ByQueue[queue]})
		}
	}
}
