package runtime

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime/internal/dbconn"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// FollowPrimary makes a pool follow the primary of a multi-host connection string
// (host=a,b target_session_attrs=read-write) through a failover. pgx chooses a host
// only when it opens a connection, so a pool whose primary was demoted keeps its open
// connections to it, and every write fails with SQLSTATE 25006 until they are gone.
// With FollowPrimary, the first statement that fails because its server turned
// read-only, is shutting down, or because its connection broke, retires every
// connection the pool holds: idle ones are closed, busy ones when they are released,
// and new connections pick the primary again. A statement that merely timed out
// (a slow query under a request deadline) costs only its own connection.
//
// A Worker does more for its own connections (claims, outcomes, heartbeats,
// maintenance, notifications), whose statements are small, bounded and retried: a
// timeout, a failed acquire or a failed listener ping retires them too, unless another
// of its statements succeeded within the last Config.StatementTimeout (then the server
// answers, and only that statement was slow), and after a failed acquire or ping busy
// ones are abandoned at once rather than when they return.
// A statement's own failure leaves the statements busy on the others to finish or fail
// within their timeouts: one broken connection says nothing of the rest, and a claim
// cut off after the server committed it would leave its jobs waiting out their leases. The pool passed to NewWorker
// belongs to the application and the worker leaves it alone; since transactional
// handlers (HandleTx) run on it, call FollowPrimary on its configuration before
// creating it:
//
//	cfg, err := pgxpool.ParseConfig(dsn) // host=a,b target_session_attrs=read-write
//	runtime.FollowPrimary(cfg)
//	pool, err := pgxpool.NewWithConfig(ctx, cfg)
//
// FollowPrimary also sets TCP keepalives, a TCP user timeout and a connect timeout
// (unless the connection string has connect_timeout) on the pool's connections, so
// that a network that stops delivering packets breaks them instead of hanging. It
// keeps every hook and tracer already in cfg and still calls them.
func FollowPrimary(cfg *pgxpool.Config) {
	dbconn.Configure(cfg.ConnConfig)
	new(dbconn.Health).Install(cfg, nil)
}

// followPrimary configures one of the worker's own pools: the settings of
// FollowPrimary, stricter (see dbconn.Health), with the retirements logged and seen
// by the notification listener.
func (w *Worker) followPrimary(cfg *pgxpool.Config) {
	dbconn.Configure(cfg.ConnConfig)
	w.health.Install(cfg, &dbconn.Owned{
		StatementTimeout: w.cfg.StatementTimeout,
		OnRetire: func(ctx context.Context, err error) {
			w.log.WarnContext(ctx, "jobc worker: a database connection failed; reconnecting all of the worker's connections, so that they find the primary again",
				"err", dberr.Describe(err))
			w.emit(ctx, Event{Kind: EventReconnect, Err: err})
		},
	})
}
