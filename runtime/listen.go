package runtime

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// listenLoop keeps a connection LISTENing and wakes the queue named by each jobc
// notification, or cancels the handler named by each jobc_cancel notification. It
// reconnects by itself; after each (re)connect it wakes every queue, since
// notifications sent while it was away are lost (cancellations also arrive through
// heartbeats).
func (w *Worker) listenLoop(ctx context.Context, queues []*queue) {
	byName := make(map[string]*queue, len(queues))
	for _, q := range queues {
		byName[q.name] = q
	}
	for delay := 100 * time.Millisecond; ctx.Err() == nil; delay = min(2*delay, 5*time.Second) {
		err := w.listenOnce(ctx, byName, func() { delay = 100 * time.Millisecond })
		if ctx.Err() != nil {
			return
		}
		w.log.Warn("jobc worker: notification listener lost its connection; reconnecting", "err", describeDBError(err), "in", delay)
		sleep(ctx, delay)
	}
}

// listenOnce LISTENs on a dedicated connection made from the pool's configuration: a
// connection that waits for notifications for the worker's whole life must not hold
// one of the pool's, or several workers sharing a small pool would starve each other.
func (w *Worker) listenOnce(ctx context.Context, byName map[string]*queue, connected func()) error {
	// Connecting and LISTENing are bounded like any hot statement; waiting is not.
	setupCtx, cancelSetup := context.WithTimeout(ctx, w.cfg.StatementTimeout)
	defer cancelSetup()
	conn, err := pgx.ConnectConfig(setupCtx, w.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	q := db.New(conn)
	if err := q.Listen(setupCtx); err != nil {
		return err
	}
	if err := q.ListenCancel(setupCtx); err != nil {
		return err
	}
	cancelSetup()
	connected()
	for _, q := range byName {
		signal(q.wake)
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		switch n.Channel {
		case "jobc":
			if q := byName[n.Payload]; q != nil {
				q.notified.Add(1)
				signal(q.wake)
			}
		case "jobc_cancel":
			if id, err := strconv.ParseInt(n.Payload, 10, 64); err == nil && w.running.cancel(id, errCancelled) {
				w.log.InfoContext(ctx, "jobc worker: cancelling a running job on request", "job_id", id)
			}
		}
	}
}

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
	if err != nil && ctx.Err() == nil {
		w.log.ErrorContext(ctx, "jobc worker: registry heartbeat failed", "err", describeDBError(err))
	}
	ids := w.running.ids()
	if len(ids) == 0 {
		return
	}
	rows, err := w.extend(ctx, ids)
	if err != nil {
		if ctx.Err() == nil {
			w.log.ErrorContext(ctx, "jobc worker: extending leases failed", "jobs", len(ids), "err", describeDBError(err))
		}
		return
	}
	for _, r := range rows {
		if r.CancelRequested && w.running.cancel(r.ID, errCancelled) {
			w.log.InfoContext(ctx, "jobc worker: cancelling a running job on request", "job_id", r.ID)
		}
	}
}

// extend extends the leases of ids that this worker still holds, within
// Config.StatementTimeout, and notes the new expiry of each.
func (w *Worker) extend(ctx context.Context, ids []int64) ([]db.ExtendLeasesRow, error) {
	ctx, cancel := context.WithTimeout(ctx, w.cfg.StatementTimeout)
	defer cancel()
	sent := time.Now()
	rows, err := w.q.ExtendLeases(ctx, db.ExtendLeasesParams{LeaseSeconds: w.cfg.LeaseDuration.Seconds(), Ids: ids, Owner: w.cfg.ID})
	if err != nil {
		return nil, err
	}
	extended := make([]int64, len(rows))
	for i, r := range rows {
		extended[i] = r.ID
	}
	w.running.extended(extended, sent.Add(w.cfg.LeaseDuration))
	return rows, nil
}

// extendOne extends one job's lease for Job.Heartbeat.
func (w *Worker) extendOne(ctx context.Context, id int64) error {
	rows, err := w.extend(ctx, []int64{id})
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return ErrLeaseLost
	}
	return nil
}
