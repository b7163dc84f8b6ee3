package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// listenLoop keeps a connection LISTENing on channel jobc and wakes the queue named by
// each notification. It reconnects by itself; after each (re)connect it wakes every
// queue, since notifications sent while it was away are lost.
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
	conn, err := pgx.ConnectConfig(ctx, w.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if err := db.New(conn).Listen(ctx); err != nil {
		return err
	}
	connected()
	for _, q := range byName {
		signal(q.wake)
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if q := byName[n.Payload]; q != nil {
			signal(q.wake)
		}
	}
}

// heartbeatLoop extends the leases of every job this worker holds, in one statement,
// every third of the lease duration.
func (w *Worker) heartbeatLoop(ctx context.Context) {
	t := newTicker(w.cfg.LeaseDuration / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ids := w.leasedIDs()
		if len(ids) == 0 {
			continue
		}
		kept, err := w.q.ExtendLeases(ctx, db.ExtendLeasesParams{LeaseSeconds: w.cfg.LeaseDuration.Seconds(), Ids: ids, Owner: w.cfg.ID})
		if err != nil {
			if ctx.Err() == nil {
				w.log.Error("jobc worker: extending leases failed", "jobs", len(ids), "err", describeDBError(err))
			}
			continue
		}
		if len(kept) < len(ids) {
			w.log.Debug("jobc worker: some leases were not extended (already recorded or rescued)", "asked", len(ids), "extended", len(kept))
		}
	}
}

// extendOne extends one job's lease for Job.Heartbeat.
func (w *Worker) extendOne(ctx context.Context, id int64) error {
	kept, err := w.q.ExtendLeases(ctx, db.ExtendLeasesParams{LeaseSeconds: w.cfg.LeaseDuration.Seconds(), Ids: []int64{id}, Owner: w.cfg.ID})
	if err != nil {
		return fmt.Errorf("jobc: heartbeat job %d: %w", id, describeDBError(err))
	}
	if len(kept) == 0 {
		return ErrLeaseLost
	}
	return nil
}

// schedulerLoop makes due scheduled jobs (delayed jobs and retries) available.
func (w *Worker) schedulerLoop(ctx context.Context) {
	t := newTicker(w.cfg.SchedulerInterval)
	defer t.Stop()
	for {
		for {
			rows, err := w.q.PromoteScheduled(ctx, promoteBatch)
			if err != nil {
				if ctx.Err() == nil {
					w.log.Error("jobc worker: promoting scheduled jobs failed", "err", describeDBError(err))
				}
				break
			}
			var n int64
			for _, r := range rows {
				n += r.Jobs
			}
			if n < promoteBatch {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

const promoteBatch = 1000

func newTicker(d time.Duration) *time.Ticker {
	if d <= 0 {
		d = time.Second
	}
	return time.NewTicker(d)
}
