package runtime

import (
	"context"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// heartbeatLoop extends the leases of every job this worker holds, in one statement,
// every third of the lease duration; cancels the handlers of jobs whose cancellation
// was requested; and tells the registry the worker is alive. Each statement may take
// at most Config.StatementTimeout, so one stalled heartbeat does not delay the next.
func (w *Worker) heartbeatLoop(ctx context.Context) {
	t := time.NewTicker(w.cfg.LeaseDuration / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.heartbeat(ctx)
	}
}

// heartbeat is one round of heartbeatLoop.
func (w *Worker) heartbeat(ctx context.Context) {
	regCtx, cancel := context.WithTimeout(ctx, w.cfg.StatementTimeout)
	err := w.registryHeartbeat(regCtx)
	cancel()
	if err == nil {
		w.status.heartbeat()
	}
	if err != nil && ctx.Err() == nil {
		w.log.ErrorContext(ctx, "jobc worker: registry heartbeat failed", "err", dberr.Describe(err))
	}
	ids := w.running.IDs()
	if len(ids) == 0 {
		return
	}
	rows, err := w.extend(ctx, ids, true)
	if err != nil {
		if ctx.Err() == nil {
			w.log.ErrorContext(ctx, "jobc worker: extending leases failed", "jobs", len(ids), "err", dberr.Describe(err))
		}
		return
	}
	for _, r := range rows {
		if r.CancelRequested && w.running.Cancel(r.ID, errCancelled) {
			w.log.InfoContext(ctx, "jobc worker: cancelling a running job on request", "job_id", r.ID)
		}
	}
}

// extend extends the leases of ids that this worker still holds, within
// Config.StatementTimeout; with skipLocked, not those of jobs whose rows another
// transaction holds (the worker's outcomes, a cancellation, the rescuer), which the
// heartbeat of all the worker's jobs must not wait for (jobc_extend_leases).
func (w *Worker) extend(ctx context.Context, ids []int64, skipLocked bool) ([]db.ExtendLeasesRow, error) {
	ctx, cancel := context.WithTimeout(ctx, w.cfg.StatementTimeout)
	defer cancel()
	return w.running.Extend(ctx, w.q, w.cfg.ID, w.cfg.LeaseDuration, ids, skipLocked)
}

// extendOne extends one job's lease for Job.Heartbeat. It waits for the job's row: a
// row another transaction holds is no lost lease.
func (w *Worker) extendOne(ctx context.Context, id int64) error {
	rows, err := w.extend(ctx, []int64{id}, false)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return ErrLeaseLost
	}
	return nil
}
