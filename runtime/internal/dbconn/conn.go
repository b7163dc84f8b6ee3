// Package dbconn configures the worker's connections: socket timeouts so that a dead
// link breaks them, a name in pg_stat_activity, no JIT; and Health, which retires a
// pool's connections after a failover or a stall so that new ones find the primary.
package dbconn

import (
	"context"
	"net"
	"time"

	"github.com/jackc/pgx/v5"
)

// Socket settings of the worker's connections. A network that stops delivering
// packets without resetting connections (a dead link, a silent firewall, a host that
// froze) leaves a connection waiting for an answer that never comes; statement
// timeouts bound the worker's statements, and these bound the connections themselves:
// unanswered data breaks a connection after tcpUserTimeout, an idle connection whose
// peer went away breaks after keepAliveIdle + keepAliveCount*keepAliveInterval, and
// opening one gives up after defaultConnectTimeout unless the connection string sets
// connect_timeout.
const (
	defaultConnectTimeout = 10 * time.Second
	keepAliveIdle         = 10 * time.Second
	keepAliveInterval     = 5 * time.Second
	keepAliveCount        = 3
	tcpUserTimeout        = 20 * time.Second
)

// Name sets application_name to "jobc worker <id>" unless the connection string
// set one, so that pg_stat_activity and the server's logs say whose connection it is.
func Name(cfg *pgx.ConnConfig, workerID string) {
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = "jobc worker " + workerID
	}
}

// NoJIT turns JIT compilation off on one of the worker's connections. Every statement
// the worker runs reads and writes a handful of rows, and JIT never pays for itself on
// those; but PostgreSQL compiles a statement whose estimated cost passes
// jit_above_cost (100,000 by default), and the generic plan of a claim is estimated
// from the table's size, not from the 100 rows it takes. With a large backlog the
// claim's generic plan passes the threshold, each claim then spends far longer
// compiling than working, and a burn-down crawls (bench/README.md, the 2026-12-01
// night results). The application's own connections keep the server's setting.
func NoJIT(cfg *pgx.ConnConfig) {
	cfg.RuntimeParams["jit"] = "off"
}

// Configure applies the socket settings to cfg. It wraps the dial function already
// there (pgx's default, or the application's own) rather than replacing it, and only
// tunes TCP connections: a unix socket has nothing in between to fail.
func Configure(cfg *pgx.ConnConfig) {
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = defaultConnectTimeout
	}
	dial := cfg.DialFunc
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if tcp, ok := c.(*net.TCPConn); ok {
			// Best effort: a socket that refuses an option still works as before.
			_ = tcp.SetKeepAliveConfig(net.KeepAliveConfig{
				Enable: true, Idle: keepAliveIdle, Interval: keepAliveInterval, Count: keepAliveCount,
			})
			_ = setUserTimeout(tcp, tcpUserTimeout)
		}
		return c, nil
	}
}
