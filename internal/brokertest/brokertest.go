// Package brokertest finds a message broker for tests the way pgtest finds PostgreSQL:
// the server named by an environment variable (NATS_URL, AMQP_URL) when it is set,
// otherwise a throwaway server started from the local binaries (nats-server with
// JetStream, rabbitmq-server with a node name, ports and data directory of its own) in
// a temporary directory on free ports and stopped when the test ends, otherwise a
// clear error saying how to provide one. Tests that restart their broker always get a
// throwaway one (StartNATS, StartRabbitMQ), as restarting a shared server is not safe.
//
// The package depends on no broker client: readiness is a TCP connection to the
// server's port, and each client's tests bring their own client.
package brokertest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Timeouts of a throwaway server: RabbitMQ boots an Erlang VM, which takes seconds.
const (
	startTimeout = 90 * time.Second
	stopTimeout  = 30 * time.Second
)

// server is a throwaway broker process, started and stopped in its own process group.
type server struct {
	name string   // for messages: nats-server, rabbitmq-server
	argv []string // the command line
	env  []string // added to the environment
	dir  string   // its data and logs
	port int      // the client port, which readiness probes
	log  string   // the file the process writes its output to

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd exits
}

// start runs the server and waits until its port accepts connections.
func (s *server) start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	out, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("brokertest: %s: %w", s.name, err)
	}
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = s.dir, out, out
	cmd.Env = append(os.Environ(), s.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("brokertest: start %s: %w", s.name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); out.Close(); close(done) }()
	s.cmd, s.done = cmd, done

	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
	for {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("brokertest: %s exited before it accepted connections on %s: %s", s.name, addr, tail(s.log))
		case <-ctx.Done():
			return fmt.Errorf("brokertest: %s did not accept connections on %s within %s: %w; its log: %s", s.name, addr, startTimeout, err, tail(s.log))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stop ends the server's process group with SIGTERM, and SIGKILL after stopTimeout.
func (s *server) stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return nil
	}
	pgid := s.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(stopTimeout):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-s.done
		s.cmd = nil
		return fmt.Errorf("brokertest: %s did not stop within %s of SIGTERM; killed it", s.name, stopTimeout)
	}
	// Helpers the server spawned in its group (Erlang's) go with it.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	s.cmd = nil
	return nil
}

// restart stops the server, waits down, and starts it again on the same port with the
// same data: what a broker's clients see when it is redeployed.
func (s *server) restart(ctx context.Context, down time.Duration) error {
	if err := s.stop(); err != nil {
		return err
	}
	select {
	case <-time.After(down):
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.start(ctx)
}

// startServer starts s for the test and stops it when the test ends.
func startServer(t testing.TB, s *server) {
	t.Helper()
	if err := s.start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Error(err)
		}
	})
}

// freePorts returns n TCP ports that were free on 127.0.0.1 a moment ago.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("brokertest: find a free port: %v", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// lookBinary returns the first of candidates (names in PATH or absolute paths) that
// exists, or an error naming env, the variable that selects a server instead.
func lookBinary(env, how string, candidates ...string) (string, error) {
	for _, c := range candidates {
		if filepath.IsAbs(c) {
			if _, err := os.Stat(c); err == nil {
				return c, nil
			}
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("brokertest: no %s binary found (looked for %v); set %s to a running server, or %s", candidates[0], candidates, env, how)
}

// tail returns the end of a log file, for error messages.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	const keep = 2000
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return string(b)
}
