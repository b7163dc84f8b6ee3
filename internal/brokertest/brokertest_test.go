package brokertest

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"
)

// TestNATSRestart: the throwaway nats-server speaks the NATS protocol on its port,
// before and after a restart.
func TestNATSRestart(t *testing.T) {
	t.Parallel()
	n := StartNATS(t)
	greet := func() string {
		c, err := net.DialTimeout("tcp", strings.TrimPrefix(n.URL, "nats://"), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			t.Fatalf("read the server's greeting: %v", err)
		}
		return line
	}
	if g := greet(); !strings.HasPrefix(g, "INFO ") || !strings.Contains(g, `"jetstream":true`) {
		t.Fatalf("greeting %q: want INFO with jetstream", g)
	}
	if err := n.Restart(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	if g := greet(); !strings.HasPrefix(g, "INFO ") {
		t.Fatalf("greeting after the restart %q: want INFO", g)
	}
}

// TestRabbitMQStart: the throwaway node answers the AMQP 0-9-1 protocol header with a
// method frame (connection.start) on its own port.
func TestRabbitMQStart(t *testing.T) {
	t.Parallel()
	r := StartRabbitMQ(t)
	addr := strings.TrimSuffix(strings.TrimPrefix(r.URL, "amqp://guest:guest@"), "/")
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("AMQP\x00\x00\x09\x01")); err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, 1)
	if _, err := c.Read(frame); err != nil {
		t.Fatalf("read connection.start: %v", err)
	}
	if frame[0] != 1 {
		t.Fatalf("first frame type %d, want 1 (method)", frame[0])
	}
}
