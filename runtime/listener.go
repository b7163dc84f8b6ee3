package runtime

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// listenLoop keeps a connection LISTENing and wakes the queue named by each jobc
// notification, cancels the handler named by each jobc_cancel notification, and
// pauses or resumes the queue named by each jobc_queues notification. It
// reconnects by itself; after each (re)connect it wakes every queue, since
// notifications sent while it was away are lost (cancellations also arrive through
// heartbeats).
func (w *Worker) listenLoop(ctx context.Context, queues []*queue) {
	byName := make(map[string]*queue, len(queues))
	for _, q := range queues {
		byName[q.name] = q
	}
	for delay := 100 * time.Millisecond; ctx.Err() == nil; delay = min(2*delay, 5*time.Second) {
		err := w.listenOnce(ctx, byName, func() { delay = 100 * time.Millisecond; w.status.listening.Store(true) })
		w.status.listening.Store(false)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, errFollowPrimary) {
			w.log.InfoContext(ctx, "jobc worker: notification listener reconnecting with the worker's other connections")
			continue
		}
		w.log.WarnContext(ctx, "jobc worker: notification listener lost its connection; reconnecting",
			"err", dberr.Describe(err), "in", delay.String())
		// The worker's other connections go to the same server: if they hang on the
		// same dead link, they may not find out by themselves soon.
		w.health.stalled(ctx, err)
		sleep(ctx, delay)
	}
}

// errListenIdle ends a wait for notifications that lasted one check interval.
var errListenIdle = errors.New("jobc: no notification for a check interval")

// errFollowPrimary ends a listener connection when the worker's other connections
// found their server unusable: the listener's connection, to the same server, would
// keep waiting for notifications that the new primary sends elsewhere.
var errFollowPrimary = errors.New("jobc: the worker's connections were retired")

// listenOnce LISTENs on a dedicated connection made from the pool's configuration: a
// connection that waits for notifications for the worker's whole life must not hold
// one of the pool's, or several workers sharing a small pool would starve each other.
//
// A connection that only waits never notices on its own that the network stopped
// delivering, nor that its server was demoted while the new primary's notifications go
// to other listeners. So it waits at most one heartbeat interval at a time, pings
// (bounded by Config.StatementTimeout) when nothing came, and gives up as soon as the
// worker retires its other connections (see connHealth).
func (w *Worker) listenOnce(ctx context.Context, byName map[string]*queue, connected func()) error {
	_, retired := w.health.current()
	// Connecting and LISTENing are bounded like any hot statement; waiting is not.
	setupCtx, cancelSetup := context.WithTimeout(ctx, w.cfg.StatementTimeout)
	defer cancelSetup()
	cfg := w.pool.Config().ConnConfig.Copy()
	configureConn(cfg)
	nameConn(cfg, w.cfg.ID)
	conn, err := pgx.ConnectConfig(setupCtx, cfg)
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
	if err := q.ListenQueues(setupCtx); err != nil {
		return err
	}
	cancelSetup()
	connected()
	for _, q := range byName {
		signal(q.wake)
	}
	// Retiring the worker's connections ends this one too (see errFollowPrimary).
	connCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	go func() {
		select {
		case <-retired:
			stop(errFollowPrimary)
		case <-connCtx.Done():
		}
	}()
	check := w.cfg.LeaseDuration / 3
	for {
		n, err := waitForNotification(connCtx, conn, check)
		switch {
		case err != nil:
			if ctx.Err() == nil && errors.Is(context.Cause(connCtx), errFollowPrimary) {
				return errFollowPrimary
			}
			return err
		case n == nil: // nothing for a while: is anyone there?
			pingCtx, cancel := context.WithTimeout(connCtx, w.cfg.StatementTimeout)
			err := conn.Ping(pingCtx)
			cancel()
			if err != nil {
				if ctx.Err() == nil && errors.Is(context.Cause(connCtx), errFollowPrimary) {
					return errFollowPrimary
				}
				return fmt.Errorf("ping after %s without notifications: %w", check, err)
			}
			continue
		}
		switch n.Channel {
		case "jobc":
			if q := byName[n.Payload]; q != nil {
				q.notified.Add(1)
				signal(q.wake)
			}
		case "jobc_queues":
			w.onQueueNotification(ctx, byName, n.Payload)
		case "jobc_cancel":
			if id, err := strconv.ParseInt(n.Payload, 10, 64); err == nil && w.running.Cancel(id, errCancelled) {
				w.log.InfoContext(ctx, "jobc worker: cancelling a running job on request", "job_id", id)
			}
		}
	}
}

// waitForNotification waits up to d for a notification on conn. It returns nil, nil
// when d passed without one: the connection stays usable, since pgx only interrupts
// the read.
func waitForNotification(ctx context.Context, conn *pgx.Conn, d time.Duration) (*pgconn.Notification, error) {
	waitCtx, cancel := context.WithTimeoutCause(ctx, d, errListenIdle)
	defer cancel()
	n, err := conn.WaitForNotification(waitCtx)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(waitCtx), errListenIdle) && !conn.IsClosed() {
		return nil, nil
	}
	return n, err
}
