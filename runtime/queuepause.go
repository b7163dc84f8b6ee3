package runtime

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// PauseQueue pauses a queue fleet-wide: no claim that starts after it commits takes a
// job of the queue, whatever a worker has heard, and every worker stops asking at once
// through a notification, or within one poll interval if it missed that. Running jobs
// finish. The pause is stored in the database (jobc_queues), so it survives worker
// restarts and covers workers that start later. Pausing a queue no worker serves yet
// is allowed; pausing a paused queue changes nothing. An empty name is refused with
// ErrEmptyQueueName.
func PauseQueue(ctx context.Context, dbtx DBTX, queue string) error {
	if queue == "" {
		return fmt.Errorf("jobc: pause queue: %w", ErrEmptyQueueName)
	}
	if err := db.New(dbtx).PauseQueue(ctx, queue); err != nil {
		return fmt.Errorf("jobc: pause queue %q: %w", queue, dberr.Describe(err))
	}
	return nil
}

// ResumeQueue undoes PauseQueue and wakes the queue's workers at once. Resuming a queue
// that is not paused changes nothing.
func ResumeQueue(ctx context.Context, dbtx DBTX, queue string) error {
	if queue == "" {
		return fmt.Errorf("jobc: resume queue: %w", ErrEmptyQueueName)
	}
	if err := db.New(dbtx).ResumeQueue(ctx, queue); err != nil {
		return fmt.Errorf("jobc: resume queue %q: %w", queue, dberr.Describe(err))
	}
	return nil
}

// Payloads of the jobc_queues notifications (queries/queues.sql).
const (
	pausePrefix  = "pause:"
	resumePrefix = "resume:"
)

// The worker keeps each queue's paused flag in memory (queue.paused), so that a paused
// queue costs no claim statement at all: the flag is read before the worker claims,
// before its first claim, then every poll interval (pauseLoop) and at once on a
// notification (onQueueNotification). The flag can be late (a lost notification, a
// failed poll, a loaded machine), so every claim statement also asks jobc_queues
// itself (jobc_paused_queue, one lookup by key per claim) and claims nothing of a
// paused queue: the flag saves work, the statement keeps the promise.

// refreshPaused reads which of the worker's queues are paused. A resumed queue is woken.
// A notification that arrived while the statement ran is newer than its answer and
// wins (queue.pauseGen).
func (w *Worker) refreshPaused(ctx context.Context, queues []*queue) error {
	ctx, cancel := context.WithTimeout(ctx, w.cfg.StatementTimeout)
	defer cancel()
	gens := make([]int64, len(queues))
	names := make([]string, len(queues))
	for i, q := range queues {
		gens[i], names[i] = q.pauseGen.Load(), q.name
	}
	paused, err := w.starting().PausedQueues(ctx, names)
	if err != nil {
		return fmt.Errorf("jobc: read paused queues: %w", dberr.Describe(err))
	}
	set := make(map[string]bool, len(paused))
	for _, name := range paused {
		set[name] = true
	}
	for i, q := range queues {
		if q.pauseGen.Load() != gens[i] {
			continue
		}
		w.setPaused(ctx, q, set[q.name], "poll")
	}
	return nil
}

// setPaused records whether q is paused, and wakes it when it was resumed. A pause
// waits for a claim of the queue under way (q.claiming; a claim is bounded by the
// statement timeout) before it says so: a claim that read the flag just before it
// flipped would otherwise take jobs enqueued after the worker said the queue was
// paused.
func (w *Worker) setPaused(ctx context.Context, q *queue, paused bool, how string) {
	if q.paused.Swap(paused) == paused {
		return
	}
	if paused {
		q.claiming.Lock()
		q.claiming.Unlock() //nolint:staticcheck // an empty section: it waits for the claim under way
		w.log.InfoContext(ctx, "jobc worker: queue paused; claiming nothing from it until it is resumed", "queue", q.name, "seen_by", how)
		return
	}
	w.log.InfoContext(ctx, "jobc worker: queue resumed", "queue", q.name, "seen_by", how)
	signal(q.wake)
}

// pauseLoop refreshes the paused flags every poll interval, covering notifications the
// listener missed.
func (w *Worker) pauseLoop(ctx context.Context, queues []*queue) {
	t := time.NewTicker(w.cfg.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := w.refreshPaused(ctx, queues); err != nil && ctx.Err() == nil {
			w.log.WarnContext(ctx, "jobc worker: could not read which queues are paused; keeping the last known state", "err", err)
		}
	}
}

// onQueueNotification handles a jobc_queues notification: "pause:<queue>" or
// "resume:<queue>".
func (w *Worker) onQueueNotification(ctx context.Context, byName map[string]*queue, payload string) {
	var name string
	var paused bool
	switch {
	case strings.HasPrefix(payload, pausePrefix):
		name, paused = strings.TrimPrefix(payload, pausePrefix), true
	case strings.HasPrefix(payload, resumePrefix):
		name = strings.TrimPrefix(payload, resumePrefix)
	default:
		return
	}
	if q := byName[name]; q != nil {
		q.pauseGen.Add(1)
		w.setPaused(ctx, q, paused, "notification")
	}
}
