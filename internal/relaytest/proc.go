package relaytest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// RelayProc is a relay running as a child process.
type RelayProc struct {
	name   string
	cmd    *exec.Cmd
	stderr *lockedBuffer
	done   chan struct{}
	err    error // Wait's, once done is closed
}

// StartRelay starts the test binary as a relay child (see MaybeRunChild) relaying the
// outbox of database to broker, declaring the event ChaosEventType(prefix); the test's
// cleanup kills it if it still runs.
func StartRelay(t testing.TB, name, database, broker, target, prefix string, s ChildSettings) *RelayProc {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := &RelayProc{name: name, stderr: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(self, "-test.run=^$")
	p.cmd.Env = childEnv(database, broker, target, prefix, s)
	p.cmd.Stdout, p.cmd.Stderr = p.stderr, p.stderr
	p.cmd.SysProcAttr = childSysProcAttr()
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start relay %s: %v", name, err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("relay %s output:\n%s", name, p.stderr.String())
		}
	})
	return p
}

// Kill ends the relay with SIGKILL, mid-batch: its leases are left to expire.
func (p *RelayProc) Kill(t testing.TB) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill relay %s: %v", p.name, err)
	}
	<-p.done
}

// Stop asks the relay to shut down (SIGTERM) and fails the test unless it exits 0
// within wait.
func (p *RelayProc) Stop(t testing.TB, wait time.Duration) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("stop relay %s: %v", p.name, err)
	}
	select {
	case <-p.done:
	case <-time.After(wait):
		// SIGQUIT makes the Go runtime print every goroutine's stack: where it hangs.
		_ = p.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
		}
		t.Fatalf("relay %s did not exit within %s of SIGTERM; output (with its goroutines after SIGQUIT):\n%s", p.name, wait, p.stderr.String())
	}
	if p.err != nil {
		t.Fatalf("relay %s exited with %v; output:\n%s", p.name, p.err, p.stderr.String())
	}
}

// Goroutines ends the relay with SIGQUIT, which makes the Go runtime print every
// goroutine's stack (where a stuck relay hangs), and returns its whole output.
func (p *RelayProc) Goroutines() string {
	_ = p.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
	}
	return p.stderr.String()
}

// Exited reports whether the process has ended, and how.
func (p *RelayProc) Exited() (bool, string) {
	select {
	case <-p.done:
		return true, fmt.Sprintf("exited (%v)", p.err)
	default:
		return false, "running"
	}
}

// Output is what the relay wrote so far.
func (p *RelayProc) Output() string { return p.stderr.String() }

// lockedBuffer is a bytes.Buffer safe for a writing process and a reading test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
