package dbconn

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// Health retires a pool's connections when one of them shows that its server can
// no longer serve writes or stopped answering. Connections carry the generation they
// were opened in; a failure moves the pool to the next generation, and the pool's hooks
// close connections of older ones instead of handing them out again. The zero value is
// ready for Install.
type Health struct {
	// Set by Install, before any pool uses the hooks.
	dataKey string // where a connection's generation is kept in its CustomData; names h
	lostKey string // where a connection whose failure said it is lost is marked
	// owned is set for the worker's own pools. Their statements are small, bounded by
	// the worker's Config.StatementTimeout and retried, so a timeout (of a statement, an
	// acquire or the listener's ping) when nothing else answered (quiet, below) says
	// that the server or the network stalled. A stall seen
	// outside a statement (Stalled: an acquire, the listener's ping) also abandons the
	// generation's busy connections at once: the listener waits on its connection with
	// no timeout of its own, and must not hold on to a dead link. A statement's own
	// failure leaves the statements busy on the other connections to finish, or to
	// fail on their own within their timeouts: one connection that breaks (a backend an
	// operator terminated) says nothing of the others, and cutting them off lost a
	// claim the server had committed on one, its jobs left leased to a worker that
	// never saw them. On an application's pool a timeout is often just a slow query
	// under a request deadline, and its transactions are its own.
	owned    bool
	onRetire func(context.Context, error) // may be nil

	// On owned pools, a timeout says the server stalled only if nothing answered
	// meanwhile: on a loaded machine one statement can wait out its timeout (behind a
	// lock, a slow disk, a CPU shared with the whole fleet) while the others succeed,
	// and retiring every connection for it reopened them all, whose slower statements
	// timed out in turn, until the worker spent its time reconnecting (resets every
	// 0.4–1 s seen in CI, leases expiring behind them). So a timeout (of a statement, an
	// acquire, the listener's ping) retires the generation only if no statement of
	// these pools succeeded within the last quiet, the worker's statement timeout, the
	// longest a statement that timed out can have run.
	quiet time.Duration
	epoch time.Time    // just before Install ran; ok counts from it, on the monotonic clock
	ok    atomic.Int64 // when a statement last succeeded, in nanoseconds since epoch

	// gen is the current generation: written with mu held, read without it on every
	// acquire.
	gen atomic.Uint64

	mu       sync.Mutex
	changed  chan struct{}                // closed when gen moves on
	lastSeen atomic.Pointer[pgxpool.Pool] // the pool seen last, so that seen is cheap
	// pools are the pools that acquired connections with these hooks: the one
	// configured, and pools made from copies of its configuration (a worker's own
	// pools are copies of the application's). Retiring a generation resets them all.
	pools map[*pgxpool.Pool]struct{}
	live  map[*pgx.Conn]uint64 // open pooled connections and their generations
}

// seen records a pool that uses the hooks. It runs on every acquire.
func (h *Health) seen(pool *pgxpool.Pool) {
	if h.lastSeen.Load() == pool {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lastSeen.Store(pool)
	if _, ok := h.pools[pool]; ok {
		return
	}
	if h.pools == nil {
		h.pools = map[*pgxpool.Pool]struct{}{}
	}
	h.pools[pool] = struct{}{}
}

// Current returns the generation and a channel closed when it ends.
func (h *Health) Current() (uint64, <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.gen.Load(), h.changedLocked()
}

func (h *Health) changedLocked() chan struct{} {
	if h.changed == nil {
		h.changed = make(chan struct{})
	}
	return h.changed
}

// retire ends generation gen because a connection of it failed with err, unless the
// generation has ended already. A failover makes every connection of a generation fail
// at about the same time; only the first failure starts a new one.
func (h *Health) retire(ctx context.Context, gen uint64, err error) {
	h.mu.Lock()
	if h.gen.Load() != gen {
		h.mu.Unlock()
		return
	}
	h.retireLocked(ctx, err, false)
}

// Stalled ends the current generation because something other than one of its
// statements — an acquire, the listener — failed with err, if it has connections to
// retire. While the server stays unreachable new connections never open, so repeated
// failures do not retire again and again.
//
// On owned pools a timeout retires nothing while statements succeed (answering): the
// server answers, so only that acquire or that connection was slow.
func (h *Health) Stalled(ctx context.Context, err error) {
	if h.owned && dberr.Timeout(err) && h.answering() {
		return
	}
	h.mu.Lock()
	for _, gen := range h.live {
		if gen == h.gen.Load() {
			h.retireLocked(ctx, err, h.owned)
			return
		}
	}
	h.mu.Unlock()
}

// retireLocked starts a new generation; it is called with h.mu held and releases it.
// Resetting the pools closes their idle connections at once and busy ones when they
// are released; with abandon, busy ones are cut off at once (closing the socket fails
// whatever statement waits on it). The stale checks of the pool hooks catch
// connections that were being opened meanwhile.
func (h *Health) retireLocked(ctx context.Context, err error, abandon bool) {
	close(h.changedLocked())
	h.gen.Add(1)
	h.changed = make(chan struct{})
	pools := make([]*pgxpool.Pool, 0, len(h.pools))
	for p := range h.pools {
		pools = append(pools, p)
	}
	var busy []*pgx.Conn
	if abandon {
		for c := range h.live {
			busy = append(busy, c)
		}
	}
	h.mu.Unlock()
	for _, p := range pools {
		p.Reset()
	}
	for _, c := range busy {
		_ = c.PgConn().Conn().Close() // the pool destroys the connection when it is released
	}
	if h.onRetire != nil {
		h.onRetire(ctx, err)
	}
}

// succeeded notes that a statement of an owned pool succeeded. It runs after every
// statement, so it writes the shared clock at most once a millisecond.
func (h *Health) succeeded() {
	now := int64(time.Since(h.epoch))
	if now-h.ok.Load() >= int64(time.Millisecond) {
		h.ok.Store(now)
	}
}

// answering reports whether a statement of the owned pools succeeded within the last
// quiet.
func (h *Health) answering() bool {
	last := h.ok.Load()
	return last > 0 && time.Since(h.epoch)-time.Duration(last) < h.quiet
}

// stale reports whether conn was opened in an ended generation. Connections opened
// before the hooks were installed have none and are left alone. It runs on every
// acquire.
func (h *Health) stale(conn *pgx.Conn) bool {
	gen, ok := conn.PgConn().CustomData()[h.dataKey].(uint64)
	return ok && gen != h.gen.Load()
}

// opened records a new connection in the current generation.
func (h *Health) opened(conn *pgx.Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	gen := h.gen.Load()
	conn.PgConn().CustomData()[h.dataKey] = gen
	if h.live == nil {
		h.live = map[*pgx.Conn]uint64{}
	}
	h.live[conn] = gen
}

func (h *Health) closed(conn *pgx.Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.live, conn)
}

// Owned configures a Health for the worker's own pools.
type Owned struct {
	// StatementTimeout bounds each of the pools' statements (Config.StatementTimeout).
	// A timeout retires the generation only if no statement succeeded within the last
	// StatementTimeout.
	StatementTimeout time.Duration
	// OnRetire, if not nil, is called when a failure ends a generation.
	OnRetire func(context.Context, error)
}

// Install adds the hooks to cfg: connections record their generation when opened, are
// closed instead of acquired once it has ended, and a tracer watches the errors of
// every statement (and, for owned pools, of every acquire, and which statements
// succeed). owned is nil for an application's pool.
func (h *Health) Install(cfg *pgxpool.Config, owned *Owned) {
	h.mu.Lock()
	if h.dataKey == "" { // a worker installs on each of its pools, with the same settings
		h.dataKey = fmt.Sprintf("jobc.generation.%p", h)
		h.lostKey = h.dataKey + ".lost"
		if owned != nil {
			// A millisecond back, so that the first success is noted (succeeded).
			h.owned, h.onRetire, h.quiet, h.epoch = true, owned.OnRetire, owned.StatementTimeout, time.Now().Add(-time.Millisecond)
		}
	}
	h.mu.Unlock()
	afterConnect := cfg.AfterConnect
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		h.opened(conn)
		if afterConnect != nil {
			return afterConnect(ctx, conn)
		}
		return nil
	}
	beforeClose := cfg.BeforeClose
	cfg.BeforeClose = func(conn *pgx.Conn) {
		h.closed(conn)
		if beforeClose != nil {
			beforeClose(conn)
		}
	}
	prepare := cfg.PrepareConn
	if prepare == nil && cfg.BeforeAcquire != nil { //nolint:staticcheck // an application may still set the deprecated hook: keep honouring it
		beforeAcquire := cfg.BeforeAcquire //nolint:staticcheck // as above
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
	// No AfterRelease hook: pgxpool runs one in a goroutine per release, which costs
	// every statement. Reset already destroys busy connections when they come back.
	tracer := &healthTracer{next: cfg.ConnConfig.Tracer, acquired: h.seen}
	tracer.failed = func(ctx context.Context, conn *pgx.Conn, err error) {
		data := conn.PgConn().CustomData()
		gen, ok := data[h.dataKey].(uint64)
		if !ok || data[h.lostKey] != nil || !dberr.ConnectionLost(ctx, conn, err, owned != nil) {
			return
		}
		// The connection's first such failure is judged; what follows on it (the
		// rollback of the transaction a timeout cut off, which pgx runs on the
		// connection it closed) only repeats it.
		data[h.lostKey] = true
		if owned != nil && dberr.Timeout(err) && h.answering() {
			return // the statement's own connection is closed; the others answer
		}
		h.retire(ctx, gen, err)
	}
	if owned != nil {
		tracer.succeeded = h.succeeded
		tracer.acquireFailed = func(ctx context.Context, err error) {
			// A server that refuses a new connection because it is full (max_connections,
			// a role's connection limit) is not stalled: retiring would cut off the busy
			// connections too, and a claim the server had committed on one was lost, its
			// jobs left to wait out their leases with an attempt spent.
			if !errors.Is(err, context.Canceled) && !dberr.ServerFull(err) {
				h.Stalled(ctx, err)
			}
		}
	}
	cfg.ConnConfig.Tracer = tracer
}
