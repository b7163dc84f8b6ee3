// Package notifier keeps a worker's LISTEN connection: on the channels jobc (a queue
// may have work), jobc_cancel (a job's cancellation was requested) and jobc_queues (a
// queue was paused or resumed). It reconnects by itself, and says so, since
// notifications sent while it was away are lost: LISTEN/NOTIFY only wakes workers, the
// table is the truth.
package notifier

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// Config is what the notifier needs of its worker.
type Config struct {
	// ConnConfig returns the configuration of a new connection, called for each
	// connect.
	ConnConfig func() *pgx.ConnConfig
	// StatementTimeout bounds connecting, LISTENing and each ping.
	StatementTimeout time.Duration
	// Check is how long the connection waits for a notification before it pings.
	Check time.Duration
	// Retired returns a channel closed once the worker retires the connections it has
	// now (the server was found unusable): the listener then reconnects with them.
	Retired func() <-chan struct{}
	// Stalled is told that the connection was lost, which the worker's other
	// connections to the same server may not find out by themselves soon.
	Stalled func(ctx context.Context, err error)
	Log     *slog.Logger
}

// Receiver is told what the notifier hears. Its methods run on the notifier's
// goroutine, one at a time.
type Receiver interface {
	// Connected is called after each (re)connect, once LISTENing: notifications sent
	// while the notifier was away are lost.
	Connected(ctx context.Context)
	// Disconnected is called when the connection is gone.
	Disconnected(ctx context.Context)
	// Notified is called with each notification.
	Notified(ctx context.Context, n *pgconn.Notification)
}

// errIdle ends a wait for notifications that lasted one check interval.
var errIdle = errors.New("jobc: no notification for a check interval")

// errRetired ends a listener connection when the worker's other connections found
// their server unusable: the listener's connection, to the same server, would keep
// waiting for notifications that the new primary sends elsewhere.
var errRetired = errors.New("jobc: the worker's connections were retired")

// Run keeps a connection LISTENing and tells r what it hears until ctx is done. It
// reconnects with a capped backoff, starting again from the shortest after each
// connect that worked.
func Run(ctx context.Context, cfg Config, r Receiver) {
	for delay := 100 * time.Millisecond; ctx.Err() == nil; delay = min(2*delay, 5*time.Second) {
		err := listenOnce(ctx, cfg, r, func() { delay = 100 * time.Millisecond })
		r.Disconnected(ctx)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, errRetired) {
			cfg.Log.InfoContext(ctx, "jobc worker: notification listener reconnecting with the worker's other connections")
			continue
		}
		cfg.Log.WarnContext(ctx, "jobc worker: notification listener lost its connection; reconnecting",
			"err", dberr.Describe(err), "in", delay.String())
		cfg.Stalled(ctx, err)
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
}

// listenOnce LISTENs on a dedicated connection: a connection that waits for
// notifications for the worker's whole life must not hold one of a pool's, or several
// workers sharing a small pool would starve each other.
//
// A connection that only waits never notices on its own that the network stopped
// delivering, nor that its server was demoted while the new primary's notifications go
// to other listeners. So it waits at most cfg.Check at a time, pings (bounded by
// cfg.StatementTimeout) when nothing came, and gives up as soon as the worker retires
// its other connections.
func listenOnce(ctx context.Context, cfg Config, r Receiver, connected func()) error {
	retired := cfg.Retired()
	// Connecting and LISTENing are bounded like any hot statement; waiting is not.
	setupCtx, cancelSetup := context.WithTimeout(ctx, cfg.StatementTimeout)
	defer cancelSetup()
	conn, err := pgx.ConnectConfig(setupCtx, cfg.ConnConfig())
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
	r.Connected(ctx)
	// Retiring the worker's connections ends this one too (see errRetired).
	connCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	go func() {
		select {
		case <-retired:
			stop(errRetired)
		case <-connCtx.Done():
		}
	}()
	for {
		n, err := waitForNotification(connCtx, conn, cfg.Check)
		switch {
		case err != nil:
			if ctx.Err() == nil && errors.Is(context.Cause(connCtx), errRetired) {
				return errRetired
			}
			return err
		case n == nil: // nothing for a while: is anyone there?
			pingCtx, cancel := context.WithTimeout(connCtx, cfg.StatementTimeout)
			err := conn.Ping(pingCtx)
			cancel()
			if err != nil {
				if ctx.Err() == nil && errors.Is(context.Cause(connCtx), errRetired) {
					return errRetired
				}
				return fmt.Errorf("ping after %s without notifications: %w", cfg.Check, err)
			}
			continue
		}
		r.Notified(ctx, n)
	}
}

// waitForNotification waits up to d for a notification on conn. It returns nil, nil
// when d passed without one: the connection stays usable, since pgx only interrupts
// the read.
func waitForNotification(ctx context.Context, conn *pgx.Conn, d time.Duration) (*pgconn.Notification, error) {
	waitCtx, cancel := context.WithTimeoutCause(ctx, d, errIdle)
	defer cancel()
	n, err := conn.WaitForNotification(waitCtx)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(waitCtx), errIdle) && !conn.IsClosed() {
		return nil, nil
	}
	return n, err
}
