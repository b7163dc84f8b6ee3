package runtime

import (
	"context"
	"errors"
	"sync"
	"time"
)

// errCancelled is the cause of a handler context cancelled by runtime.CancelJob.
var errCancelled = errors.New("jobc: job cancelled")

// runningJobs holds every job this worker has claimed and not yet recorded: for
// heartbeats, for cancellation, and for release on shutdown.
type runningJobs struct {
	mu   sync.Mutex
	jobs map[int64]*runningJob
}

type runningJob struct {
	attempt int32
	cancel  context.CancelCauseFunc // nil until the handler starts
	// leaseUntil is when the job's lease runs out at the latest, as this worker knows
	// it: the time the claim or the last successful extension was sent, plus the lease.
	// The server's expiry is a little later, so the estimate errs on the safe side.
	leaseUntil time.Time
}

func newRunningJobs() *runningJobs { return &runningJobs{jobs: map[int64]*runningJob{}} }

func (r *runningJobs) add(id int64, attempt int32, leaseUntil time.Time) {
	r.mu.Lock()
	r.jobs[id] = &runningJob{attempt: attempt, leaseUntil: leaseUntil}
	r.mu.Unlock()
}

// extended records that the leases of ids now last until leaseUntil.
func (r *runningJobs) extended(ids []int64, leaseUntil time.Time) {
	r.mu.Lock()
	for _, id := range ids {
		if j := r.jobs[id]; j != nil && j.leaseUntil.Before(leaseUntil) {
			j.leaseUntil = leaseUntil
		}
	}
	r.mu.Unlock()
}

// leaseUntil returns when the lease of the given attempt runs out; ok is false if the
// worker does not hold that attempt (any more).
func (r *runningJobs) leaseUntil(id int64, attempt int32) (until time.Time, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j := r.jobs[id]
	if j == nil || j.attempt != attempt {
		return time.Time{}, false
	}
	return j.leaseUntil, true
}

// started records the cancel function of a job's handler context.
func (r *runningJobs) started(id int64, cancel context.CancelCauseFunc) {
	r.mu.Lock()
	if j := r.jobs[id]; j != nil {
		j.cancel = cancel
	}
	r.mu.Unlock()
}

// cancel cancels the handler of job id, if it runs here.
func (r *runningJobs) cancel(id int64, cause error) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	j := r.jobs[id]
	if j == nil || j.cancel == nil {
		return false
	}
	j.cancel(cause)
	return true
}

// forget drops the given attempts once their outcomes are recorded. An entry for a
// later attempt of the same job (the lease expired, was rescued, and this worker claimed
// the job again while the old attempt was still running) stays: its lease must go on
// being extended.
func (r *runningJobs) forget(ids []int64, attempts []int32) {
	r.mu.Lock()
	for i, id := range ids {
		if j := r.jobs[id]; j != nil && j.attempt == attempts[i] {
			delete(r.jobs, id)
		}
	}
	r.mu.Unlock()
}

func (r *runningJobs) ids() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]int64, 0, len(r.jobs))
	for id := range r.jobs {
		ids = append(ids, id)
	}
	return ids
}
