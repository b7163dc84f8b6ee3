// Package maintenance holds the services every jobc worker runs beside its queues:
// the scheduler, the rescuer, the pruners, the starvation ager, the unhandled-jobs
// reporter, the payload upgraders and the periodic enqueuers.
//
// Each is a small type with its config and a RunOnce method that returns what one run
// did; the worker (package runtime) runs each on a ticker and hands the result to its
// hooks, and tests call RunOnce directly. Every RunOnce is a few short, idempotent
// statements guarded by FOR UPDATE SKIP LOCKED or a unique key, so every node may run
// every service at once.
package maintenance

// Batch bounds the rows one statement of a service touches, so that no maintenance
// statement holds locks or builds WAL for long.
const Batch = 1000
