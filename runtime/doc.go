// Package runtime is the library that jobc-generated code imports: it inserts jobs in
// the caller's transaction, and runs workers that claim them from PostgreSQL with
// FOR UPDATE SKIP LOCKED, call the handlers, and record each outcome.
//
// # Delivery
//
// Delivery is at least once. A claimed job is leased to one worker; if that worker dies
// or loses its connection, the lease expires and the job runs again elsewhere. A handler
// must therefore be safe to run more than once for the same job: use the job's
// IdempotencyKey for external side effects, or the transactional mode for side effects
// that live in the same database.
//
// # Lifecycle
//
// A job is available (may run now), scheduled (waits for its run time or its next
// retry) or running (leased). It ends as completed, failed (out of attempts or a
// permanent error; kept with the error of every attempt) or cancelled. Unfinished jobs
// live in table jobc_jobs; finished jobs move to jobc_jobs_finished, so they never slow
// the claim query.
//
// # Observing
//
// Config.Hooks receive an Event for every claim, handler start and finish (with the
// outcome, error class, attempt, run time and the wait since the job became
// available), rescue and maintenance run; Config.Middleware wraps every handler; an
// EnqueueHook passed with WithHooks wraps enqueues. With none configured they cost a
// length check. The Prometheus and OpenTelemetry adapters are written on them and
// live in modules of their own (contrib/prometheus, contrib/otel). Worker.Health and
// Worker.HealthHandler report whether a worker is fit to work, for readiness probes.
package runtime
