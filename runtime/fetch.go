package runtime

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// queue is one queue a worker serves: its claim filter and its free slots.
type queue struct {
	name  string
	max   int // handlers of this queue that may run at once
	batch int // jobs one claim may take

	kinds                    []string // kinds and aliases this worker decodes
	minVersions, maxVersions []int32

	active    atomic.Int32
	slotFreed chan struct{} // a handler finished
	wake      chan struct{} // a notification or a poll says there may be work
}

func newQueue(name string, max, batch int) *queue {
	return &queue{
		name:      name,
		max:       max,
		batch:     batch,
		slotFreed: make(chan struct{}, 1),
		wake:      make(chan struct{}, 1),
	}
}

func (q *queue) addKind(kind string, minVersion, maxVersion int) {
	q.kinds = append(q.kinds, kind)
	q.minVersions = append(q.minVersions, int32(minVersion))
	q.maxVersions = append(q.maxVersions, int32(maxVersion))
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// fetchLoop claims jobs whenever the queue has free slots and may have work: after a
// claim that filled every slot asked for (more is likely waiting), after a wake-up, and
// after each poll interval. A claim that came back short means the queue is drained, so
// the loop then waits for a wake-up instead of asking again at every freed slot.
func (w *Worker) fetchLoop(ctx, workCtx context.Context, q *queue, handlers *sync.WaitGroup, results chan<- result) {
	poll := time.NewTicker(w.cfg.PollInterval)
	defer poll.Stop()
	needFetch := true
	for {
		if ctx.Err() != nil {
			return
		}
		free := q.max - int(q.active.Load())
		if needFetch && free > 0 {
			asked := min(free, q.batch)
			rows, err := w.q.ClaimJobs(ctx, db.ClaimJobsParams{
				Owner:        w.cfg.ID,
				LeaseSeconds: w.cfg.LeaseDuration.Seconds(),
				Queue:        q.name,
				Kinds:        q.kinds,
				MinVersions:  q.minVersions,
				MaxVersions:  q.maxVersions,
				Max:          int32(asked),
			})
			if err != nil {
				if ctx.Err() == nil {
					w.log.Error("jobc worker: claim failed; retrying at the next poll", "queue", q.name, "err", describeDBError(err))
				}
				needFetch = false
			} else {
				for _, row := range rows {
					q.active.Add(1)
					w.running.add(row.ID, row.Attempt)
					handlers.Add(1)
					go func() {
						defer handlers.Done()
						results <- w.execute(workCtx, row)
						q.active.Add(-1)
						signal(q.slotFreed)
					}()
				}
				needFetch = len(rows) == asked
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-q.slotFreed:
		case <-q.wake:
			needFetch = true
		case <-poll.C:
			needFetch = true
		}
	}
}
