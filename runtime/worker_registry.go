package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// registerSelf records the worker in jobc_workers: its queues and the versions of each
// kind it decodes, so that operators (and `jobc`) can tell which waiting jobs no live
// worker can decode.
func (w *Worker) registerSelf(ctx context.Context, queues []*queue) error {
	kinds := map[string][2]int{}
	for name, r := range w.kinds {
		kinds[name] = [2]int{r.jt.minVersion(), r.jt.maxVersion()}
	}
	b, err := json.Marshal(kinds)
	if err != nil {
		return fmt.Errorf("jobc: register worker: %w", err)
	}
	host, _ := os.Hostname()
	w.registration = db.RegisterWorkerParams{
		ID: w.cfg.ID, Host: host, Pid: int32(os.Getpid()), Queues: queueNames(queues), Kinds: b,
		LeaseSecs: w.cfg.LeaseDuration.Seconds(),
	}
	if err := w.starting().RegisterWorker(ctx, w.registration); err != nil {
		return fmt.Errorf("jobc: register worker: %w", dberr.Describe(err))
	}
	return nil
}

// registryHeartbeat tells the registry the worker is alive, registering it again if
// its entry was pruned meanwhile (the process was paused for longer than the pruning
// age, say).
func (w *Worker) registryHeartbeat(ctx context.Context) error {
	n, err := w.q.WorkerHeartbeat(ctx, w.cfg.ID)
	if err != nil || n > 0 {
		return err
	}
	return w.q.RegisterWorker(ctx, w.registration)
}

// deregisterSelf removes the worker's rows, bounded by one StatementTimeout in all:
// both expire by themselves should the database be gone.
func (w *Worker) deregisterSelf(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.cfg.StatementTimeout)
	defer cancel()
	if err := w.q.ForgetSleeper(ctx, w.cfg.ID); err != nil {
		w.log.WarnContext(ctx, "jobc worker: could not remove its sleeper rows; the pruner removes them", "err", dberr.Describe(err))
	}
	if err := w.q.DeregisterWorker(ctx, w.cfg.ID); err != nil {
		w.log.WarnContext(ctx, "jobc worker: could not remove itself from the registry; it expires by itself", "err", dberr.Describe(err))
	}
}
