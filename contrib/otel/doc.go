// Package jobcotel instruments jobc with OpenTelemetry: traces and metrics following
// the messaging semantic conventions (messaging.system "jobc", the queue as
// messaging.destination.name), plus jobc's own job metrics.
//
// One Instrumentation value plays three parts:
//
//   - a runtime.EnqueueHook (pass it with runtime.WithHooks): a producer span around
//     each enqueue, whose W3C trace context is stored in the job's metadata (key
//     MetadataKey), and the messaging.client.sent.messages counter;
//   - a runtime.Middleware (runtime.Config.Middleware): a consumer span around each
//     execution, child of the enqueuing span, so a handler's own spans continue the
//     trace of the request that enqueued the job;
//   - a runtime.Hook (runtime.Config.Hooks): messaging.process.duration,
//     messaging.client.consumed.messages, jobc.jobs.finished, jobc.job.wait,
//     jobc.jobs.rescued and jobc.worker.reconnects. The two counters of every job (consumed and finished) are
//     observable counters: the Instrumentation keeps their totals and the meter reads
//     them when it collects, so a job costs an atomic add for each rather than the
//     SDK's work per measurement, and they carry no exemplars.
//
// The package lives in a module of its own, so that applications importing only the
// runtime do not pay for OpenTelemetry.
package jobcotel
