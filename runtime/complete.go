package runtime

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

type outcome uint8

const (
	outcomeComplete outcome = iota
	outcomeRetry
	outcomeFail
	outcomeCancel
	outcomeRelease  // shutdown: give the job back without counting the attempt
	outcomeRecorded // already recorded by the handler's transaction, or the lease was lost
)

// result is a finished attempt waiting to be recorded.
type result struct {
	id      int64
	attempt int32
	outcome outcome
	runAt   time.Time    // outcomeRetry
	err     AttemptError // outcomeRetry, outcomeFail, outcomeCancel
}

const maxCompleteBatch = 1000

// completeLoop records outcomes in batches. It takes whatever results are waiting
// when it is ready to write, so under load each round trip carries many outcomes and at
// low load a single outcome is written at once, without a timer adding latency. It
// returns when results is closed and everything is written.
func (w *Worker) completeLoop(results <-chan result) {
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
		w.recordWithRetry(batch)
	}
}

// recordWithRetry writes a batch, retrying while the database is unreachable: an
// outcome is never dropped. If the lease expires meanwhile, the rescuer hands the job
// to another worker and this write then leaves it alone.
func (w *Worker) recordWithRetry(batch []result) {
	ctx := context.Background()
	for delay := 100 * time.Millisecond; ; delay = min(2*delay, 5*time.Second) {
		err := w.record(ctx, batch)
		if err == nil {
			break
		}
		w.log.Error("jobc worker: recording outcomes failed; retrying", "jobs", len(batch), "err", describeDBError(err), "in", delay)
		time.Sleep(delay)
	}
	w.running.forget(idsAttempts(batch))
}

func (w *Worker) record(ctx context.Context, batch []result) error {
	by := map[outcome][]result{}
	for _, r := range batch {
		by[r.outcome] = append(by[r.outcome], r)
	}
	owner := w.cfg.ID
	if rs := by[outcomeComplete]; len(rs) > 0 {
		ids, attempts := idsAttempts(rs)
		done, err := w.q.CompleteJobs(ctx, db.CompleteJobsParams{Ids: ids, Attempts: attempts, Owner: owner})
		if err != nil {
			return err
		}
		w.lostLeases("completed", ids, done)
	}
	for _, o := range []outcome{outcomeFail, outcomeCancel} {
		rs := by[o]
		if len(rs) == 0 {
			continue
		}
		state := db.JobcStateFailed
		if o == outcomeCancel {
			state = db.JobcStateCancelled
		}
		ids, attempts := idsAttempts(rs)
		done, err := w.q.FinishJobs(ctx, db.FinishJobsParams{Ids: ids, Attempts: attempts, Errors: errorsJSON(rs), Owner: owner, State: state})
		if err != nil {
			return err
		}
		w.lostLeases(string(state), ids, done)
	}
	if rs := by[outcomeRetry]; len(rs) > 0 {
		ids, attempts := idsAttempts(rs)
		at := make([]time.Time, len(rs))
		for i, r := range rs {
			at[i] = r.runAt
		}
		done, err := w.q.RetryJobs(ctx, db.RetryJobsParams{Ids: ids, Attempts: attempts, AvailableAts: at, Errors: errorsJSON(rs), Owner: owner})
		if err != nil {
			return err
		}
		w.lostLeases("retried", ids, done)
	}
	if rs := by[outcomeRelease]; len(rs) > 0 {
		ids, _ := idsAttempts(rs)
		if _, err := w.q.ReleaseJobs(ctx, db.ReleaseJobsParams{Ids: ids, Owner: owner}); err != nil {
			return err
		}
	}
	return nil
}

// lostLeases logs the attempts whose outcome was not recorded because this worker no
// longer held their lease: it expired (the worker was paused or cut off) and the job was
// rescued, so another attempt runs or ran elsewhere.
func (w *Worker) lostLeases(outcome string, asked, done []int64) {
	if len(done) == len(asked) {
		return
	}
	recorded := make(map[int64]bool, len(done))
	for _, id := range done {
		recorded[id] = true
	}
	for _, id := range asked {
		if !recorded[id] {
			w.log.Warn("jobc worker: an outcome was not recorded: the job's lease expired before it finished, and it was rescued",
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
