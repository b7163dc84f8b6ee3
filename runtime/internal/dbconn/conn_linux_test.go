package dbconn

import (
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The worker's sockets get keepalives and a user timeout, so that a link that stops
// delivering breaks them; the connect timeout of the connection string is kept.
func TestConfigureConnSocketOptions(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg, err := pgx.ParseConfig("host=127.0.0.1 port=5432 user=x")
	if err != nil {
		t.Fatal(err)
	}
	Configure(cfg)
	if cfg.ConnectTimeout != defaultConnectTimeout {
		t.Errorf("ConnectTimeout = %s without connect_timeout, want %s", cfg.ConnectTimeout, defaultConnectTimeout)
	}
	c, err := cfg.DialFunc(t.Context(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ level, opt, value int }{
		"SO_KEEPALIVE":     {syscall.SOL_SOCKET, syscall.SO_KEEPALIVE, 1},
		"TCP_KEEPIDLE":     {syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE, int(keepAliveIdle / time.Second)},
		"TCP_KEEPINTVL":    {syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL, int(keepAliveInterval / time.Second)},
		"TCP_KEEPCNT":      {syscall.IPPROTO_TCP, syscall.TCP_KEEPCNT, keepAliveCount},
		"TCP_USER_TIMEOUT": {syscall.IPPROTO_TCP, tcpUserTimeoutOpt, int(tcpUserTimeout / time.Millisecond)},
	}
	for name, w := range want {
		var got int
		var gerr error
		if err := raw.Control(func(fd uintptr) { got, gerr = syscall.GetsockoptInt(int(fd), w.level, w.opt) }); err != nil {
			t.Fatal(err)
		}
		if gerr != nil || got != w.value {
			t.Errorf("%s = %d, %v; want %d", name, got, gerr, w.value)
		}
	}

	kept, err := pgx.ParseConfig("host=127.0.0.1 port=5432 user=x connect_timeout=3")
	if err != nil {
		t.Fatal(err)
	}
	Configure(kept)
	if kept.ConnectTimeout != 3*time.Second {
		t.Errorf("ConnectTimeout = %s with connect_timeout=3, want 3s", kept.ConnectTimeout)
	}
}
