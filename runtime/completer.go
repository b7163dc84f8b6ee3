package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
	"github.com/jobc-dev/jobc/runtime/internal/lease"
	"github.com/jobc-dev/jobc/runtime/internal/poison"
)

type outcome uint8

const (
	outcomeComplete outcome = iota
	outcomeRetry
	outcomeFail
	outcomeCancel
	outcomeRelease  // shutdown: give the job back without counting the attempt
	outcomeRecorded // already recorded by the handler's transaction, or the lease was lost
	outcomeSnooze   // the handler returned Snooze: reschedule without counting the attempt
)

// result is a finished attempt waiting to be recorded.
type result struct {
	id      int64
	attempt int32
	outcome outcome
	runAt   time.Time    // outcomeRetry, outcomeSnooze
	err     AttemptError // outcomeRetry, outcomeFail, outcomeCancel
}

const maxCompleteBatch = 1000

// How recording a batch of outcomes retries: a capped exponential backoff with jitter,
// each attempt bounded by Config.StatementTimeout, for as long as the jobs' leases last.
const (
	recordRetryInitial = 100 * time.Millisecond
	recordRetryMax     = 5 * time.Second
)

// completeLoop records outcomes in batches. It takes whatever results are waiting
// when it is ready to write, so under load each round trip carries many outcomes and at
// low load a single outcome is written at once, without a timer adding latency. It
// returns when results is closed and everything is written, or given up on because ctx
// is done (see recordWithRetry).
func (w *Worker) completeLoop(ctx context.Context, results <-chan result) {
	batch := make([]result, 0, maxCompleteBatch)
	for r := range results {
		batch = append(batch[:0], r)
	drain:
		for len(batch) < maxCompleteBatch {
			select {
			case r, ok := <-results:
				if !ok {
					break drain
				}
				batch = append(batch, r)
			default:
				break drain
			}
		}
		w.recordWithRetry(ctx, batch)
	}
}

// recordWithRetry writes a batch, retrying with backoff while the database fails or
// is unreachable. It stops retrying an outcome once the job's lease has run out: the
// rescuer owns the job then and hands it out again, and a late write would be ignored
// anyway. It also gives up when ctx is done, which happens only when the worker stops
// and its drain time is over; those jobs are rescued the same way. Either way the job
// runs again, as delivery at least once allows, and the worker says so at Warn.
func (w *Worker) recordWithRetry(ctx context.Context, batch []result) {
	defer w.running.Forget(idsAttempts(batch))
	pending := make([]result, 0, len(batch))
	for _, r := range batch {
		if r.outcome != outcomeRecorded {
			pending = append(pending, r)
		}
	}
	var lastErr error // the last error of the database, rather than a cancellation
	for delay := recordRetryInitial; len(pending) > 0; delay = min(2*delay, recordRetryMax) {
		var err error
		pending, err = w.recordOnce(ctx, pending)
		if err == nil {
			return
		}
		if ctx.Err() != nil {
			if lastErr == nil {
				lastErr = err
			}
			w.gaveUp(ctx, pending, "the worker is stopping and its time to record outcomes is over", lastErr)
			return
		}
		lastErr = err
		pending = w.dropExpired(ctx, pending, lastErr)
		if len(pending) == 0 {
			return
		}
		wait := min(jitter(delay), time.Until(latestLease(w.running, pending)))
		w.log.ErrorContext(ctx, "jobc worker: recording outcomes failed; retrying",
			"jobs", len(pending), "err", dberr.Describe(err), "in", wait.String())
		if !sleep(ctx, wait) {
			w.gaveUp(ctx, pending, "the worker is stopping and its time to record outcomes is over", lastErr)
			return
		}
		pending = w.dropExpired(ctx, pending, lastErr)
	}
}

// recordOnce makes one attempt, bounded by Config.StatementTimeout, and returns the
// results it did not get to write.
func (w *Worker) recordOnce(ctx context.Context, pending []result) ([]result, error) {
	ctx, cancel := context.WithTimeout(ctx, w.cfg.StatementTimeout)
	defer cancel()
	return w.record(ctx, pending)
}

// dropExpired returns the results whose leases still last, and logs the others.
func (w *Worker) dropExpired(ctx context.Context, pending []result, lastErr error) []result {
	now := time.Now()
	live := pending[:0:0]
	var expired []result
	for _, r := range pending {
		if until, ok := w.running.Until(r.id, r.attempt); ok && now.Before(until) {
			live = append(live, r)
		} else {
			expired = append(expired, r)
		}
	}
	if len(expired) > 0 {
		w.gaveUp(ctx, expired, "their leases have expired, so the rescuer owns the jobs now", lastErr)
	}
	return live
}

// gaveUp logs outcomes that will not be recorded.
func (w *Worker) gaveUp(ctx context.Context, rs []result, why string, lastErr error) {
	ids, _ := idsAttempts(rs)
	w.log.WarnContext(ctx, "jobc worker: stopped retrying outcomes: "+why+"; the jobs run again once rescued",
		"job_ids", ids, "err", dberr.Describe(lastErr))
}

// latestLease is the latest lease expiry among rs: retrying past it is pointless.
func latestLease(running *lease.Held, rs []result) time.Time {
	var latest time.Time
	for _, r := range rs {
		if until, ok := running.Until(r.id, r.attempt); ok && until.After(latest) {
			latest = until
		}
	}
	return latest
}

// jitter spreads d over [0.8d, 1.2d), so that workers cut off together do not all
// retry at the same instant.
func jitter(d time.Duration) time.Duration {
	return d*8/10 + rand.N(d*4/10)
}

// record writes the outcomes of rs, one statement per kind of outcome. On error it
// returns the results not yet written; the kinds written before the error stay written.
// A statement that fails because of one job's row is run again for each job of its
// group on its own, and a job whose own statement fails too is poisoned (internal/poison),
// so that the outcomes of the others are recorded.
func (w *Worker) record(ctx context.Context, rs []result) ([]result, error) {
	by := map[outcome][]result{}
	for _, r := range rs {
		by[r.outcome] = append(by[r.outcome], r)
	}
	// left collects what is still to write once a statement fails.
	left := func(from int, order []outcome) []result {
		var out []result
		for _, o := range order[from:] {
			out = append(out, by[o]...)
		}
		return out
	}
	order := []outcome{outcomeComplete, outcomeFail, outcomeCancel, outcomeRetry, outcomeSnooze, outcomeRelease}
	for i, o := range order {
		group := by[o]
		if len(group) == 0 {
			continue
		}
		done, err := w.recordGroup(ctx, o, group)
		if err != nil && dberr.RowFault(err) {
			var rest []result
			done, rest, err = w.recordAlone(ctx, o, group, err)
			if err != nil {
				return append(rest, left(i+1, order)...), err
			}
		}
		if err != nil {
			return left(i, order), err
		}
		ids, _ := idsAttempts(group)
		w.lostLeases(ctx, o.String(), ids, done)
	}
	return nil, nil
}

// String says what recording the outcome does, for the logs.
func (o outcome) String() string {
	switch o {
	case outcomeComplete:
		return "completed"
	case outcomeFail:
		return "failed"
	case outcomeCancel:
		return "cancelled"
	case outcomeRetry:
		return "retried"
	case outcomeSnooze:
		return "snoozed"
	case outcomeRelease:
		return "released"
	case outcomeRecorded:
		return "recorded"
	}
	return fmt.Sprintf("outcome(%d)", uint8(o))
}

// recordGroup writes the outcomes of group, all of outcome o, with one statement, and
// returns the ids it recorded.
func (w *Worker) recordGroup(ctx context.Context, o outcome, group []result) ([]int64, error) {
	ids, attempts := idsAttempts(group)
	owner := w.cfg.ID
	switch o {
	case outcomeComplete:
		return w.outcomes.CompleteJobs(ctx, db.CompleteJobsParams{IDs: ids, Attempts: attempts, Owner: owner})
	case outcomeFail, outcomeCancel:
		state := db.JobcStateFailed
		if o == outcomeCancel {
			state = db.JobcStateCancelled
		}
		return w.outcomes.FinishJobs(ctx, db.FinishJobsParams{IDs: ids, Attempts: attempts, Errors: errorsJSON(group), Owner: owner, State: state})
	case outcomeRetry:
		return w.outcomes.RetryJobs(ctx, db.RetryJobsParams{IDs: ids, Attempts: attempts, AvailableAts: runAts(group), Errors: errorsJSON(group), Owner: owner})
	case outcomeSnooze: // a retry that records no error and does not count the attempt
		return w.outcomes.RetryJobs(ctx, db.RetryJobsParams{IDs: ids, Attempts: attempts, AvailableAts: runAts(group), Snooze: true, Owner: owner})
	case outcomeRelease:
		_, err := w.outcomes.ReleaseJobs(ctx, db.ReleaseJobsParams{IDs: ids, Owner: owner})
		return ids, err // a release of a job rescued meanwhile has nothing to say
	}
	return nil, fmt.Errorf("jobc worker: no statement records outcome %d", o)
}

// recordAlone writes the outcomes of group one job at a time, after the statement for
// the whole group failed with batchErr, a row's fault. A job whose own statement fails
// with a row's fault is poisoned, and counts as recorded if that ended it. On any
// other error it returns the results not yet written.
func (w *Worker) recordAlone(ctx context.Context, o outcome, group []result, batchErr error) (done []int64, rest []result, err error) {
	w.log.WarnContext(ctx, "jobc worker: recording outcomes failed because of a job's row; recording them one by one",
		"jobs", len(group), "outcome", o.String(), "err", dberr.Describe(batchErr))
	owner := w.cfg.ID
	for j, r := range group {
		d, err := w.recordGroup(ctx, o, group[j:j+1])
		switch {
		case err == nil:
			done = append(done, d...)
		case dberr.RowFault(err):
			if poison.Job(ctx, w.log, w.outcomes, r.id, &owner, r.attempt, "recording the job's outcome ("+o.String()+")", err) {
				done = append(done, r.id)
			}
		default:
			return done, group[j:], err
		}
	}
	return done, nil, nil
}

// lostLeases logs the attempts whose outcome was not recorded because this worker no
// longer held their lease: it expired (the worker was paused or cut off) and the job was
// rescued, so another attempt runs or ran elsewhere.
func (w *Worker) lostLeases(ctx context.Context, outcome string, asked, done []int64) {
	if len(done) == len(asked) {
		return
	}
	recorded := make(map[int64]bool, len(done))
	for _, id := range done {
		recorded[id] = true
	}
	for _, id := range asked {
		if !recorded[id] {
			w.log.WarnContext(ctx, "jobc worker: an outcome was not recorded: the job's lease expired before it finished, and it was rescued",
				"job_id", id, "outcome", outcome)
		}
	}
}

func idsAttempts(rs []result) ([]int64, []int32) {
	ids := make([]int64, len(rs))
	attempts := make([]int32, len(rs))
	for i, r := range rs {
		ids[i], attempts[i] = r.id, r.attempt
	}
	return ids, attempts
}

func runAts(rs []result) []time.Time {
	at := make([]time.Time, len(rs))
	for i, r := range rs {
		at[i] = r.runAt
	}
	return at
}

func errorsJSON(rs []result) [][]byte {
	out := make([][]byte, len(rs))
	for i, r := range rs {
		b, err := json.Marshal(r.err)
		if err != nil { // cannot happen: AttemptError has only plain fields
			b = []byte(`{"error":"unencodable error"}`)
		}
		out[i] = b
	}
	return out
}
