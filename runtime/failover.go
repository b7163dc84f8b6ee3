package runtime

import (
	"context"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// FollowPrimary makes a pool follow the primary of a multi-host connection string
// (host=a,b target_session_attrs=read-write) through a failover. pgx chooses a host
// only when it opens a connection, so a pool whose primary was demoted keeps its open
// connections to it, and every write fails with SQLSTATE 25006 until they are gone.
// With FollowPrimary, the first statement that fails because its server turned
// read-only, is shutting down, or because its connection broke, retires every
// connection the pool holds: idle ones are closed, busy ones when they are released,
// and new connections pick the primary again. A statement that merely timed out
// (a slow query under a request deadline) costs only its own connection; the worker's
// pools, whose statements are small and bounded, treat a timeout as a stall too.
//
// A Worker does this for its own connections (claims, outcomes, heartbeats,
// maintenance, notifications) by itself. The pool passed to NewWorker belongs to the
// application and the worker leaves it alone; since transactional handlers
// (HandleTx) run on it, call FollowPrimary on its configuration before creating it:
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
	configureConn(cfg.ConnConfig)
	new(connHealth).install(cfg, false, nil)
}

// followPrimary configures the worker's own pool: the settings of FollowPrimary, with
// the retirements logged and seen by the notification listener.
func (w *Worker) followPrimary(cfg *pgxpool.Config) {
	configureConn(cfg.ConnConfig)
	w.health.install(cfg, true, func(ctx context.Context, err error) {
		w.log.WarnContext(ctx, "jobc worker: a database connection failed; reconnecting all of the worker's connections, so that they find the primary again",
			"err", describeDBError(err))
	})
}

// connHealth retires a pool's connections when one of them shows that its server can no
// longer serve writes. Connections carry the generation they were opened in; a
// connection failure moves the pool to the next generation, and the pool's hooks close
// connections of older ones instead of handing them out again. The zero value is
// ready for install.
type connHealth struct {
	// dataKey is where a connection's generation is kept in its CustomData; set by
	// install, before any pool uses the hooks. It names h, since an application pool
	// and the worker's pools copied from it each have their own.
	dataKey string

	mu      sync.Mutex
	gen     uint64
	changed chan struct{} // closed when gen moves on
	// pools are the pools that acquired connections with these hooks: the one
	// configured, and pools made from copies of its configuration (a worker's own
	// pool is a copy of the application's). Retiring a generation resets them all.
	pools map[*pgxpool.Pool]struct{}
}

// seen records a pool that uses the hooks.
func (h *connHealth) seen(pool *pgxpool.Pool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.pools[pool]; ok {
		return
	}
	if h.pools == nil {
		h.pools = map[*pgxpool.Pool]struct{}{}
	}
	h.pools[pool] = struct{}{}
}

// current returns the generation and a channel closed when it ends.
func (h *connHealth) current() (uint64, <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.changed == nil {
		h.changed = make(chan struct{})
	}
	return h.gen, h.changed
}

// retire ends generation gen, unless it has ended already, and reports whether it did.
// A failover makes every connection of the generation fail at about the same time;
// only the first failure starts a new generation. Resetting the pools closes their
// idle connections at once and busy ones when they are released; the stale checks
// of the pool hooks catch connections that were being opened meanwhile.
func (h *connHealth) retire(gen uint64) bool {
	h.mu.Lock()
	if h.gen != gen {
		h.mu.Unlock()
		return false
	}
	h.gen++
	if h.changed != nil {
		close(h.changed)
	}
	h.changed = make(chan struct{})
	pools := make([]*pgxpool.Pool, 0, len(h.pools))
	for p := range h.pools {
		pools = append(pools, p)
	}
	h.mu.Unlock()
	for _, p := range pools {
		p.Reset()
	}
	return true
}

// key is where a connection's generation is kept in its CustomData.
func (h *connHealth) key() string { return h.dataKey }

// stale reports whether conn was opened in an ended generation. Connections opened
// before the hooks were installed have none and are left alone.
func (h *connHealth) stale(conn *pgx.Conn) bool {
	gen, ok := conn.PgConn().CustomData()[h.key()].(uint64)
	if !ok {
		return false
	}
	current, _ := h.current()
	return gen != current
}

// install adds the hooks to cfg: connections record their generation when opened, are
// closed instead of acquired or returned to the pool once it has ended, and a tracer
// watches every statement's error. onRetire, if not nil, is called when a failure ends
// a generation.
//
// timeouts says whether a statement that timed out ends the generation too. On the
// worker's pools it does: their statements are small and bounded by
// Config.StatementTimeout, so a timeout says the server or the network stalled. On an
// application's pool a timeout is often just a slow query under a request deadline,
// and pgx closing that one connection is enough.
func (h *connHealth) install(cfg *pgxpool.Config, timeouts bool, onRetire func(context.Context, error)) {
	h.dataKey = fmt.Sprintf("jobc.generation.%p", h)
	afterConnect := cfg.AfterConnect
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		gen, _ := h.current()
		conn.PgConn().CustomData()[h.key()] = gen
		if afterConnect != nil {
			return afterConnect(ctx, conn)
		}
		return nil
	}
	prepare := cfg.PrepareConn
	if prepare == nil && cfg.BeforeAcquire != nil {
		beforeAcquire := cfg.BeforeAcquire
		prepare = func(ctx context.Context, conn *pgx.Conn) (bool, error) { return beforeAcquire(ctx, conn), nil }
	}
	cfg.PrepareConn = func(ctx context.Context, conn *pgx.Conn) (bool, error) {
		if h.stale(conn) {
			return false, nil // destroyed; the pool acquires another
		}
		if prepare != nil {
			return prepare(ctx, conn)
		}
		return true, nil
	}
	afterRelease := cfg.AfterRelease
	cfg.AfterRelease = func(conn *pgx.Conn) bool {
		if h.stale(conn) {
			return false
		}
		return afterRelease == nil || afterRelease(conn)
	}
	cfg.ConnConfig.Tracer = &healthTracer{next: cfg.ConnConfig.Tracer, acquired: h.seen, failed: func(ctx context.Context, conn *pgx.Conn, err error) {
		gen, ok := conn.PgConn().CustomData()[h.key()].(uint64)
		if !ok || !connectionLost(conn, err, timeouts) {
			return
		}
		if h.retire(gen) && onRetire != nil {
			onRetire(ctx, err)
		}
	}}
}
