// Package runtime is the library that jobc-generated code imports: it inserts jobs in
// the caller's transaction, and runs workers that claim them from PostgreSQL with
// FOR UPDATE SKIP LOCKED, call the handlers, and record each outcome.
//
// Applications rarely call it directly. `jobc generate` reads the job catalogue
// (jobc.yaml) and writes a package with a payload type, an Enqueue function, a handler
// interface and a Register function per job type; those call [Enqueue], [Handle] and
// [HandleTx] with a [JobType] built by [MustJobType]. This package supplies the rest:
// the [Worker], the error and retry vocabulary, and the functions that inspect and
// control jobs.
//
// # Setting up the database
//
// [Migrate] applies jobc's migrations (the CLI's `jobc migrate up` does the same); it is
// safe to call from many processes at once. A worker refuses to start against a
// database that lacks migrations it needs, with an error saying what to run; a
// database migrated by a newer release is accepted (see [CheckSchema]), so rolling
// deploys work.
//
//	if _, err := runtime.Migrate(ctx, pool); err != nil {
//		return err
//	}
//
// # Defining job types
//
// A job type is declared in jobc.yaml: its payload's JSON Schema per version, its
// queue, priority, timeout, retry policy, error classes, and optionally a unique key,
// a schedule or transactional handling. The generated code turns each into a
// [JobType], with each payload version as a [Version] and the upcasts between versions
// as an [Upcast] (see [Changes] and [UpcastFunc]):
//
//	jobs:
//	  send_welcome_email:
//	    queue: email
//	    retry: {max_attempts: 5, backoff: exponential, initial: 2s, max: 1m}
//	    payload:
//	      versions:
//	        1:
//	          schema: {type: object, required: [email], properties: {email: {type: string}}}
//
// # Enqueueing in a transaction
//
// An Enqueue function takes a [DBTX]: pass the transaction of the business change that
// needs the job, and the job exists if and only if that transaction commits. The
// payload is validated against its version's schema first; an invalid payload returns
// a [*PayloadError] and inserts nothing. [EnqueueOption] values adjust one enqueue:
// [RunAt], [RunAfter], [WithPriority], [WithMetadata], [WithDedupKey], [WithHooks].
// The generated Enqueue<Type>Many functions (on [EnqueueMany]) insert a batch, all of
// it or nothing.
//
//	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
//		if err := createProject(ctx, tx, p); err != nil {
//			return err
//		}
//		_, err := jobs.EnqueueSendWelcomeEmail(ctx, tx, jobs.SendWelcomeEmailV1{
//			ProjectID: p.ID, ProjectName: p.Name, Email: p.Owner,
//		}, runtime.RunAfter(time.Minute))
//		return err
//	})
//
// # Running a worker
//
// [NewWorker] builds a worker on a pool; [Config] names the queues it serves, each
// with its concurrency ([QueueConfig]), and tunes leases, polling and retention (the
// zero value of every field selects a default). The generated Register function
// registers a handler for every job type: a type that lacks any of them does not
// satisfy the generated Handlers interface, so the call does not compile until every
// job type is handled. [Worker.Run] works jobs until its context is cancelled.
//
//	w := runtime.NewWorker(pool, runtime.Config{
//		Queues: map[string]runtime.QueueConfig{"email": {MaxWorkers: 4}},
//	})
//	if err := jobs.Register(w, &handlers{mailer: mailer}); err != nil {
//		return err
//	}
//	return w.Run(ctx)
//
// A handler receives the job's handle ([Job]: id, attempt, metadata,
// [Job.IdempotencyKey], [Job.Logger]) and the payload, upcast to the newest version
// whatever version it was stored at:
//
//	func (h *handlers) HandleSendWelcomeEmail(ctx context.Context, job jobs.SendWelcomeEmailJob, p jobs.SendWelcomeEmail) error {
//		return h.mailer.Send(ctx, job.IdempotencyKey(), p.Email, "Welcome to "+p.ProjectName)
//	}
//
// Besides its queues, every worker runs the maintenance services: making due
// scheduled jobs available, rescuing expired leases, starvation protection, periodic
// jobs and retention. They are safe to run on every node at once.
//
// # Delivery
//
// Delivery is at least once. A claimed job is leased to one worker; if that worker dies
// or loses its connection, the lease expires and the job runs again elsewhere. A handler
// must therefore be safe to run more than once for the same job: use the job's
// [Job.IdempotencyKey] for external side effects, [Job.Once] to record a step in the
// transaction that performs it, or the transactional mode. A job declared
// transactional is registered with [HandleTx]: its handler gets the pgx.Tx that also
// marks the job completed, so its database writes happen exactly once. A handler
// about to take an expensive or irreversible step can call [Job.Heartbeat], which
// returns [ErrLeaseLost] once the lease is no longer this worker's (it expired and was
// rescued, or the job was cancelled).
//
// # Errors and retries
//
// A handler that returns nil completes its job. A plain error is handled as the job's
// [JobType.DefaultClass], or retried with the job's [Backoff] when it declares none;
// a panic is recovered and recorded with its stack, and a handler past its
// [JobType.Timeout] has its context cancelled and the attempt recorded as a timeout.
// Each error class a job declares ([ErrorClass]) says whether to retry, with which
// backoff and how many attempts; the generated job handle has a method per class that
// wraps the error ([Classify], [RetryAfter], [ClassError]):
//
//	if errors.Is(err, errCardDeclined) {
//		return job.Invalid(err) // fails at once, no retries
//	}
//	if limited, ok := asRateLimit(err); ok {
//		return job.RateLimited(err, limited.RetryAfter) // runs again after that delay
//	}
//	return err // the job's default class
//
// [Job.Snooze] (or [Snooze]) means "not yet": the job runs again after the delay,
// without counting the attempt or recording an error. A job out of attempts, or whose
// error class does not retry, ends failed with the error of every attempt
// ([AttemptError]) and stays visible until its retention ends.
//
// # Lifecycle
//
// A job is available (may run now), scheduled (waits for its run time or its next
// retry) or running (leased). It ends as completed, failed (out of attempts or a
// permanent error; kept with the error of every attempt) or cancelled. Unfinished jobs
// live in table jobc_jobs; finished jobs move to jobc_jobs_finished, so they never slow
// the claim query. [Config.Retention] says how long finished jobs are kept: history is
// partitioned by state and finish time, and the pruner drops each partition once it is
// past its state's retention (see docs/operations.md, "History and retention").
//
// # Results
//
// A job type with a result contract ([JobType.ResultVersions], result: in the spec)
// has handlers that return a typed result with their success ([HandleResult],
// [HandleTxResult]). The result is checked against its write version's schema and
// stored with the job in the statement that completes it; one that does not match is
// the attempt's error, so a job never completes without its result. [JobResult]
// (generated: Get<Type>Result) reads it back by the job's id, upcast to the newest
// version, and returns [ErrNoResult] until the job has completed.
//
// # Workflows
//
// A [WorkflowType] is steps that run jobs, each once the steps it comes after have
// completed, with a payload mapped from the workflow's input and its predecessors'
// results. [StartWorkflow] starts one in the caller's transaction, recording its
// definition; PostgreSQL advances it as its steps' jobs finish, in the transactions
// that record their outcomes, so it survives any worker's death without a leader. A
// failed step cancels the steps after it ([OnFailure]). [GetWorkflow] reads a
// workflow with each step's state and result.
//
// # Unique and periodic jobs
//
// A job type with a [Unique] key (payload fields, states, an optional period) has at
// most one job per key: enqueueing a key that a job holds, even concurrently with the
// enqueue that took it, inserts nothing and returns the holder's id with
// [Enqueued.Duplicate] set. With [OnConflictReplace] (a debounce), an enqueue
// whose key a waiting job holds writes its payload and run time into that job instead
// and returns it with [Enqueued.Replaced] set. [WithDedupKey] sets a key for
// one enqueue. A job type with a [Schedule] (cron and time zone) is enqueued by every
// worker's scheduler under a key per occurrence, so any number of nodes produce one job
// per occurrence without a leader; [ListPeriodicJobs] lists the schedules, their next
// occurrence and what the last one did.
//
// # Cancellation and graceful shutdown
//
// [CancelJob] cancels a job: at once if it has not started, or, when it is running, by
// cancelling its handler's context; the job then ends cancelled when the handler
// returns. Handlers should therefore honour ctx. Cancelling the context of
// [Worker.Run] shuts the worker down: it stops claiming, lets running handlers finish
// within [Config.ShutdownGrace], then cancels the rest and releases their jobs without
// counting the attempt, so another worker takes them at once.
//
// # Events and the outbox
//
// An event declared in jobc.yaml becomes an [EventType]; its generated Publish
// function (on [Publish] and [PublishMany]) writes, in the caller's transaction, one
// job per [Subscriber] and, when the event is relayed, a row of the outbox
// jobc_events. Package [github.com/jobc-dev/jobc/runtime/relay] delivers those rows to
// a broker through a [github.com/jobc-dev/jobc/runtime/relay.Sink] (the contrib/nats,
// contrib/rabbitmq and contrib/kafka modules), in publish order per ordering key.
//
//	_, err := shop.PublishOrderPaid(ctx, tx, shop.OrderPaidV2{OrderID: id, Total: total})
//
// # Inspecting and controlling jobs
//
// The functions behind the CLI and the dashboard are exported, each taking a [DBTX]:
// [GetJob], [ListJobs], [ListJobsByError] and [ListFailedGroups] read jobs; [RetryJob],
// [RetryJobs], [DeleteJob], [DeleteJobs] and [CancelJob] act on them (the bulk ones on a
// [JobSelection], refusing an empty one with [ErrNoFilter]); [PauseQueue] and
// [ResumeQueue] stop and restart a queue on every worker; [ListQueueStats],
// [ListQueueThroughput] and [ListWorkers] describe the fleet.
//
//	if _, err := runtime.RetryJob(ctx, pool, id); err != nil {
//		return err
//	}
//
// # Observing
//
// [Config.Hooks] receive an [Event] for every claim, handler start and finish (with the
// outcome, error class, attempt, run time and the wait since the job became
// available), rescue and maintenance run; [Config.Middleware] wraps every handler; an
// [EnqueueHook] passed with [WithHooks] wraps enqueues. With none configured they cost
// a length check. The Prometheus and OpenTelemetry adapters are written on them and
// live in modules of their own (contrib/prometheus, contrib/otel). [Worker.Health] and
// [Worker.HealthHandler] report whether a worker is fit to work, for readiness probes.
//
// # Testing
//
// Package [github.com/jobc-dev/jobc/jobctest] tests application code against a real
// PostgreSQL: [github.com/jobc-dev/jobc/jobctest.Kind.RequireEnqueued] asserts what a
// transaction enqueued, [github.com/jobc-dev/jobc/jobctest.Kind.Run] runs a handler on one
// payload, and [github.com/jobc-dev/jobc/jobctest.Work] runs every waiting job to
// completion with a worker tuned for tests.
package runtime
