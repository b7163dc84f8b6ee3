package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// Waiting says why a job is not running: the first of the reasons below that holds,
// in the order a claim meets them.
type Waiting struct {
	JobID int64
	State State
	// Cause is one of the WaitCause values; Reason says it for people, with the
	// numbers: "email ada@example.com is at its limit 2/2".
	Cause  WaitCause
	Reason string
	// Key is the job's flow key as the by fields and their values ("account_id 42"),
	// "" for a job without one or a kind limited as a whole.
	Key string
	// Limit and Current are the numbers of a limit the job waits on (running jobs,
	// or starts in the rate window); Until is when it may start: the run time of a
	// scheduled job, when a full rate window opens.
	Limit, Current int
	Until          *time.Time
	// HeldBy is the job a sequence waits on: the failed job holding it, or the key's
	// first job.
	HeldBy int64
}

// WaitCause is why a job waits (Waiting.Cause).
type WaitCause string

const (
	WaitRunning          WaitCause = "running"           // not waiting: it runs
	WaitFinished         WaitCause = "finished"          // not waiting: it ended
	WaitScheduled        WaitCause = "scheduled"         // its run time has not come
	WaitQueuePaused      WaitCause = "queue_paused"      // an operator paused its queue
	WaitNoWorker         WaitCause = "no_worker"         // no live worker decodes its kind and version
	WaitSequenceFailed   WaitCause = "sequence_failed"   // a failed job of its sequence holds the key
	WaitSequenceBehind   WaitCause = "sequence_behind"   // an earlier job of its sequence has not finished
	WaitKeyConcurrency   WaitCause = "key_concurrency"   // its key (or kind) is at its concurrency limit
	WaitKeyRate          WaitCause = "key_rate"          // its key (or kind) used its rate window
	WaitQueueConcurrency WaitCause = "queue_concurrency" // its queue is at its concurrency limit
	WaitQueueRate        WaitCause = "queue_rate"        // its queue used its rate window
	WaitSlot             WaitCause = "slot"              // nothing holds it: it waits for a free worker slot
)

// WhyWaiting says why job id is not running. It reads the state a claim would
// decide on; by the time it returns, a claim may have changed it.
func WhyWaiting(ctx context.Context, dbtx DBTX, id int64) (Waiting, error) {
	f, err := db.New(dbtx).WaitFacts(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		info, err := GetJob(ctx, dbtx, id)
		if err != nil {
			return Waiting{}, err
		}
		return Waiting{JobID: id, State: info.State, Cause: WaitFinished, Reason: fmt.Sprintf("it ended %s", info.State)}, nil
	}
	if err != nil {
		return Waiting{}, fmt.Errorf("jobc: why is job %d waiting: %w", id, dberr.Describe(err))
	}
	w := Waiting{JobID: id, State: State(f.State)}
	key := ""
	if f.FlowKey != nil {
		key = describeKey(f.ByFields, *f.FlowKey)
		w.Key = key
	}
	subject := "kind " + f.Kind
	if key != "" {
		subject = key
	}
	switch {
	case w.State == StateRunning:
		w.Cause, w.Reason = WaitRunning, "it is running"
		return w, nil
	case w.State == StateScheduled:
		at := f.AvailableAt
		w.Cause, w.Until = WaitScheduled, &at
		w.Reason = fmt.Sprintf("scheduled to run at %s (in %s)", at.UTC().Format(time.RFC3339), at.Sub(f.Now).Round(time.Second))
		return w, nil
	case f.Paused:
		w.Cause, w.Reason = WaitQueuePaused, fmt.Sprintf("queue %s is paused", f.Queue)
		return w, nil
	}
	if ok, err := decodedByLiveWorker(ctx, dbtx, f.Kind, int(f.PayloadVersion)); err != nil {
		return Waiting{}, err
	} else if !ok {
		w.Cause, w.Reason = WaitNoWorker, fmt.Sprintf("no live worker decodes %s v%d", f.Kind, f.PayloadVersion)
		return w, nil
	}
	if f.FlowKey == nil {
		w.Cause, w.Reason = WaitSlot, "nothing holds it: it waits for a free worker slot"
		return w, nil
	}
	switch {
	case f.Sequence && f.HeldBy != 0:
		w.Cause, w.HeldBy = WaitSequenceFailed, f.HeldBy
		w.Reason = fmt.Sprintf("sequence %s is held by failed job %d until it is retried or deleted", subject, f.HeldBy)
	case f.Sequence && f.Head != id:
		w.Cause, w.HeldBy = WaitSequenceBehind, f.Head
		w.Reason = fmt.Sprintf("sequence %s runs job %d first", subject, f.Head)
	case f.Sequence && f.KeyRunning > 0:
		w.Cause, w.Limit, w.Current = WaitKeyConcurrency, 1, int(f.KeyRunning)
		w.Reason = fmt.Sprintf("sequence %s has a job running", subject)
	case f.KindConcurrency > 0 && f.KeyRunning >= f.KindConcurrency:
		w.Cause, w.Limit, w.Current = WaitKeyConcurrency, int(f.KindConcurrency), int(f.KeyRunning)
		w.Reason = fmt.Sprintf("%s is at its limit %d/%d", subject, f.KeyRunning, f.KindConcurrency)
	case f.KindRateLimit > 0 && full(f.KeyStarts, f.KindRateLimit, f.KindRatePerSeconds, f.Now):
		w.rate(WaitKeyRate, subject, f.KeyStarts, f.KindRateLimit, f.KindRatePerSeconds, f.Now)
	case f.QueueConcurrency > 0 && f.QueueRunning >= f.QueueConcurrency:
		w.Cause, w.Limit, w.Current = WaitQueueConcurrency, int(f.QueueConcurrency), int(f.QueueRunning)
		w.Reason = fmt.Sprintf("queue %s is at its limit %d/%d", f.Queue, f.QueueRunning, f.QueueConcurrency)
	case f.QueueRateLimit > 0 && full(f.QueueStarts, f.QueueRateLimit, f.QueueRatePerSeconds, f.Now):
		w.rate(WaitQueueRate, "queue "+f.Queue, f.QueueStarts, f.QueueRateLimit, f.QueueRatePerSeconds, f.Now)
	default:
		w.Cause, w.Reason = WaitSlot, "no limit holds it: it waits for its turn and a free worker slot"
	}
	return w, nil
}

// inWindow returns the starts within the rate window of per seconds that ends now.
func inWindow(starts []time.Time, perSeconds float64, now time.Time) []time.Time {
	from := now.Add(-time.Duration(perSeconds * float64(time.Second)))
	for i, s := range starts {
		if s.After(from) {
			return starts[i:]
		}
	}
	return nil
}

func full(starts []time.Time, limit int32, perSeconds float64, now time.Time) bool {
	return len(inWindow(starts, perSeconds, now)) >= int(limit)
}

func (w *Waiting) rate(cause WaitCause, subject string, starts []time.Time, limit int32, perSeconds float64, now time.Time) {
	in := inWindow(starts, perSeconds, now)
	per := time.Duration(perSeconds * float64(time.Second))
	next := in[len(in)-int(limit)].Add(per)
	w.Cause, w.Limit, w.Current, w.Until = cause, int(limit), len(in), &next
	w.Reason = fmt.Sprintf("%s reached its rate limit %d per %s; next start in %s", subject, limit, per, next.Sub(now).Round(100*time.Millisecond))
}

// describeKey renders a flow key with its by fields: ["42","eu"] with [account_id,
// region] is "account_id 42, region eu". A key that is not such an array (hashed, or
// of other fields) is shown as it is.
func describeKey(by []string, key string) string {
	if key == "" || len(by) == 0 {
		return ""
	}
	var values []json.RawMessage
	if err := json.Unmarshal([]byte(key), &values); err != nil || len(values) != len(by) {
		return strings.Join(by, ", ") + " " + key
	}
	parts := make([]string, len(by))
	for i, v := range values {
		var s string
		if json.Unmarshal(v, &s) != nil {
			s = string(v)
		}
		parts[i] = by[i] + " " + s
	}
	return strings.Join(parts, ", ")
}

// decodedByLiveWorker says whether a live worker decodes kind at version.
func decodedByLiveWorker(ctx context.Context, dbtx DBTX, kind string, version int) (bool, error) {
	workers, err := ListWorkers(ctx, dbtx, 0)
	if err != nil {
		return false, err
	}
	for _, w := range workers {
		if r, ok := w.Kinds[kind]; ok && r[0] <= version && version <= r[1] {
			return true, nil
		}
	}
	return false, nil
}
