package netfault_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/internal/netfault"
)

// echoServer accepts connections and writes every line back.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

func startProxy(t *testing.T, target string) *netfault.Proxy {
	t.Helper()
	p, err := netfault.Listen("tcp", target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}

func dial(t *testing.T, p *netfault.Proxy) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, bufio.NewReader(c)
}

func roundTrip(t *testing.T, c net.Conn, r *bufio.Reader, line string) {
	t.Helper()
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := r.ReadString('\n')
	if err != nil || got != line+"\n" {
		t.Fatalf("echo of %q: got %q, %v", line, got, err)
	}
}

// silence asserts that nothing arrives on c for a while: no data, no end of stream,
// no reset, only the read deadline.
func silence(t *testing.T, c net.Conn, r *bufio.Reader, d time.Duration) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(d))
	got, err := r.ReadString('\n')
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("blackholed connection delivered %q, %v; want nothing until the read deadline", got, err)
	}
}

func TestBlackholeHoldsTrafficAndHealDeliversIt(t *testing.T) {
	t.Parallel()
	p := startProxy(t, echoServer(t))
	c, r := dial(t, p)
	roundTrip(t, c, r, "before")

	p.Blackhole()
	if !p.Blackholed() {
		t.Fatal("Blackholed() = false after Blackhole")
	}
	if _, err := io.WriteString(c, "during\n"); err != nil {
		t.Fatalf("write to a blackholed connection failed: %v (the proxy must not close or reset it)", err)
	}
	silence(t, c, r, 300*time.Millisecond)

	// A connection opened during the blackhole is established, and as silent.
	c2, r2 := dial(t, p)
	if _, err := io.WriteString(c2, "new\n"); err != nil {
		t.Fatal(err)
	}
	silence(t, c2, r2, 300*time.Millisecond)

	p.Heal()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if got, err := r.ReadString('\n'); err != nil || got != "during\n" {
		t.Fatalf("after Heal the held line came back as %q, %v; want %q", got, err, "during\n")
	}
	_ = c2.SetReadDeadline(time.Now().Add(10 * time.Second))
	if got, err := r2.ReadString('\n'); err != nil || got != "new\n" {
		t.Fatalf("after Heal the new connection's line came back as %q, %v", got, err)
	}
	roundTrip(t, c, r, "after")
	if n := p.Accepted(); n != 2 {
		t.Fatalf("Accepted() = %d, want 2", n)
	}
}

func TestCloseEndsConnections(t *testing.T) {
	t.Parallel()
	p := startProxy(t, echoServer(t))
	c, r := dial(t, p)
	roundTrip(t, c, r, "hello")
	p.Blackhole() // Close must not wait for a Heal
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := r.ReadString('\n'); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read after Close: %v; want the connection closed", err)
	}
}
