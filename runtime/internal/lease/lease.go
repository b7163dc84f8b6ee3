// Package lease keeps what a worker knows of the leases it holds: which attempt of
// which job, until when, and how to cancel its handler; and extends them in one
// statement per heartbeat.
package lease

import (
	"context"
	"sync"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// Held is every job a worker has claimed and not yet recorded, with the attempt it
// leases and when that lease runs out: for heartbeats, for cancellation, and for
// release on shutdown. It is safe for concurrent use.
type Held struct {
	mu   sync.Mutex
	jobs map[int64]*job
}

type job struct {
	attempt int32
	cancel  context.CancelCauseFunc // nil until the handler starts
	// leaseUntil is when the job's lease runs out at the latest, as this worker knows
	// it: the time the claim or the last successful extension was sent, plus the lease.
	// The server's expiry is a little later, so the estimate errs on the safe side.
	leaseUntil time.Time
}

// NewHeld returns an empty set.
func NewHeld() *Held { return &Held{jobs: map[int64]*job{}} }

// Add records that the worker leased attempt of job id until leaseUntil.
func (r *Held) Add(id int64, attempt int32, leaseUntil time.Time) {
	r.mu.Lock()
	r.jobs[id] = &job{attempt: attempt, leaseUntil: leaseUntil}
	r.mu.Unlock()
}

// extended records that the leases of ids now last until leaseUntil.
func (r *Held) extended(ids []int64, leaseUntil time.Time) {
	r.mu.Lock()
	for _, id := range ids {
		if j := r.jobs[id]; j != nil && j.leaseUntil.Before(leaseUntil) {
			j.leaseUntil = leaseUntil
		}
	}
	r.mu.Unlock()
}

// Until returns when the lease of the given attempt runs out; ok is false if the
// worker does not hold that attempt (any more).
func (r *Held) Until(id int64, attempt int32) (until time.Time, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j := r.jobs[id]
	if j == nil || j.attempt != attempt {
		return time.Time{}, false
	}
	return j.leaseUntil, true
}

// Started records the cancel function of a job's handler context.
func (r *Held) Started(id int64, cancel context.CancelCauseFunc) {
	r.mu.Lock()
	if j := r.jobs[id]; j != nil {
		j.cancel = cancel
	}
	r.mu.Unlock()
}

// Cancel cancels the handler of job id with cause, if it runs here, and says whether
// it did.
func (r *Held) Cancel(id int64, cause error) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	j := r.jobs[id]
	if j == nil || j.cancel == nil {
		return false
	}
	j.cancel(cause)
	return true
}

// Forget drops the given attempts once their outcomes are recorded. An entry for a
// later attempt of the same job (the lease expired, was rescued, and this worker claimed
// the job again while the old attempt was still running) stays: its lease must go on
// being extended.
func (r *Held) Forget(ids []int64, attempts []int32) {
	r.mu.Lock()
	for i, id := range ids {
		if j := r.jobs[id]; j != nil && j.attempt == attempts[i] {
			delete(r.jobs, id)
		}
	}
	r.mu.Unlock()
}

// IDs returns the ids of the jobs held, in no order.
func (r *Held) IDs() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]int64, 0, len(r.jobs))
	for id := range r.jobs {
		ids = append(ids, id)
	}
	return ids
}

// Extend extends, through qs, the leases of ids that owner still holds by lease, and
// notes the new expiry of each. It returns the jobs extended, each saying whether its
// cancellation was requested. With skipLocked it leaves out the jobs whose rows another
// transaction holds (jobc_extend_leases), so that it never waits for them.
func (r *Held) Extend(ctx context.Context, qs *db.Queries, owner string, lease time.Duration, ids []int64, skipLocked bool) ([]db.ExtendLeasesRow, error) {
	sent := time.Now()
	rows, err := qs.ExtendLeases(ctx, db.ExtendLeasesParams{LeaseSeconds: lease.Seconds(), IDs: ids, Owner: owner, SkipLocked: skipLocked})
	if err != nil {
		return nil, err
	}
	extended := make([]int64, len(rows))
	for i, row := range rows {
		extended[i] = row.ID
	}
	r.extended(extended, sent.Add(lease))
	return rows, nil
}
