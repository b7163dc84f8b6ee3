//go:build unix

package chaostest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/internal/cmd/testworker/chaosjob"
	"github.com/jobc-dev/jobc/runtime"
)

// workerOpts are a worker process's settings. withTestDefaults fills every interval
// the tests derive waits from, so each process runs with settings its test knows.
type workerOpts struct {
	id                string
	connString        string // DATABASE_URL
	queue             string // default chaosjob.DefaultQueue
	concurrency       int
	lease             time.Duration
	rescueInterval    time.Duration
	pruneInterval     time.Duration
	schedulerInterval time.Duration
	poll              time.Duration
	grace             time.Duration
	statementTimeout  time.Duration
	maxSleep          time.Duration
	limits            chaosjob.Limits // flow control; producers must enqueue with the same (enqueueLimited)
}

// withTestDefaults fills zero settings with values that keep tests quick, and the
// others the runtime would default with the runtime's own rules, spelled out, so that
// waits can be derived from them.
func (o workerOpts) withTestDefaults() workerOpts {
	if o.concurrency == 0 {
		o.concurrency = 4
	}
	if o.poll == 0 {
		o.poll = 200 * time.Millisecond
	}
	if o.lease == 0 {
		o.lease = 5 * time.Second
	}
	if o.grace == 0 {
		o.grace = 5 * time.Second
	}
	if o.schedulerInterval == 0 {
		o.schedulerInterval = 100 * time.Millisecond
	}
	if o.rescueInterval == 0 {
		o.rescueInterval = max(o.lease/2, time.Second) // runtime.Config's default
	}
	if o.pruneInterval == 0 {
		o.pruneInterval = time.Minute // runtime.Config's default
	}
	if o.statementTimeout == 0 {
		o.statementTimeout = min(max(o.lease/4, time.Second), 10*time.Second) // runtime.Config's default
	}
	return o
}

// How long tests wait. Every wait is the sum of the intervals that govern what is
// awaited (leases, polls, rescues, job durations), multiplied by slowdown: on a busy
// machine a process may get the CPU seconds late, and the suite must pass there too,
// while a wait a few times the governing interval still fails soon when something is
// broken. Starting and exiting a process, which no interval governs, have allowances of
// their own. A wait that times out fails with the state it saw (see waitFor).
const (
	slowdown     = 5
	processStart = 20 * time.Second // exec, connect, check the schema, register: seconds on a loaded machine
	processExit  = 5 * time.Second  // closing connections and exiting, after Run has returned
)

// within returns base plus slowdown times the sum of intervals.
func within(base time.Duration, intervals ...time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range intervals {
		sum += d
	}
	return base + slowdown*sum
}

// stopSlack is how long after its grace period a worker may take to exit: Run returns
// within ShutdownGrace plus three StatementTimeouts (runtime.Config documents it), and
// the process then exits.
func (o workerOpts) stopSlack() time.Duration {
	return 3*o.statementTimeout + processExit
}

func (o workerOpts) args() []string {
	args := []string{
		"-id", o.id,
		"-concurrency", strconv.Itoa(o.concurrency),
		"-log-level", "info",
	}
	if o.queue != "" {
		args = append(args, "-queue", o.queue)
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"-lease", o.lease}, {"-rescue-interval", o.rescueInterval}, {"-prune-interval", o.pruneInterval},
		{"-scheduler-interval", o.schedulerInterval}, {"-poll", o.poll}, {"-grace", o.grace},
		{"-statement-timeout", o.statementTimeout}, {"-max-sleep", o.maxSleep}} {
		if d.v > 0 {
			args = append(args, d.flag, d.v.String())
		}
	}
	return append(args, o.limitArgs()...)
}

// limitArgs are the flags that give the worker o.limits.
func (o workerOpts) limitArgs() []string {
	l := o.limits
	var args []string
	for _, n := range []struct {
		flag string
		v    int
	}{{"-concurrency-by-key", l.Concurrency}, {"-queue-concurrency", l.QueueConcurrency}} {
		if n.v != 0 {
			args = append(args, n.flag, strconv.Itoa(n.v))
		}
	}
	for _, r := range []struct {
		flag string
		v    runtime.Rate
	}{{"-rate-by-key", l.Rate}, {"-queue-rate", l.QueueRate}} {
		if !r.v.IsZero() {
			args = append(args, r.flag, r.v.String())
		}
	}
	if l.Sequence {
		args = append(args, "-sequence-by-key")
	}
	return args
}

// workerProc is a running testworker process.
type workerProc struct {
	id     string
	opts   workerOpts // with the test defaults filled in
	grace  time.Duration
	cmd    *exec.Cmd
	stderr *logBuffer
	exited chan struct{} // closed once the process has exited and waitErr is set

	waitErr error
}

// showLogsEnv, when set, logs every worker's stderr tail even when its test passes.
const showLogsEnv = "CHAOSTEST_WORKER_LOGS"

// startWorker starts a testworker process. When the test ends, a process still running
// is killed, and if the test failed (or showLogsEnv is set), the tail of its stderr is
// logged.
func startWorker(t *testing.T, o workerOpts) *workerProc {
	t.Helper()
	o = o.withTestDefaults()
	if o.id == "" || o.connString == "" {
		t.Fatalf("startWorker: id %q and connString are required", o.id)
	}
	p := &workerProc{id: o.id, opts: o, grace: o.grace, stderr: &logBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(binaries.worker, o.args()...)
	p.cmd.Env = append(os.Environ(), "DATABASE_URL="+o.connString)
	p.cmd.Stdout = p.stderr
	p.cmd.Stderr = p.stderr
	p.cmd.SysProcAttr = workerSysProcAttr()
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start worker %s: %v", o.id, err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		if !p.hasExited() {
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() || os.Getenv(showLogsEnv) != "" {
			t.Logf("worker %s (pid %d) %s; last lines of its stderr:\n%s", p.id, p.pid(), p.exitDescription(), p.stderr.tail(40))
		}
	})
	return p
}

func (p *workerProc) pid() int { return p.cmd.Process.Pid }

func (p *workerProc) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// exitDescription says how the process ended, or that it still runs.
func (p *workerProc) exitDescription() string {
	if !p.hasExited() {
		return "is still running"
	}
	if p.waitErr == nil {
		return "exited with status 0"
	}
	return "ended: " + p.waitErr.Error()
}

// signal sends sig to the process.
func (p *workerProc) signal(sig syscall.Signal) error {
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("send %v to worker %s: %w", sig, p.id, err)
	}
	return nil
}

// wait waits up to timeout for the process to exit and reports how it ended: exitErr
// is nil for status 0, an *exec.ExitError otherwise.
func (p *workerProc) wait(timeout time.Duration) (exitErr error, exited bool) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.exited:
		return p.waitErr, true
	case <-t.C:
		return nil, false
	}
}

// stop sends SIGTERM and checks that the process exits with status 0 within its grace
// period plus slack. It returns how long the exit took, and an error that says what
// went wrong. It may be called from any goroutine.
func (p *workerProc) stop(slack time.Duration) (time.Duration, error) {
	began := time.Now()
	if err := p.signal(syscall.SIGTERM); err != nil {
		return 0, err
	}
	limit := p.grace + slack
	exitErr, exited := p.wait(limit)
	took := time.Since(began)
	switch {
	case !exited:
		return took, fmt.Errorf("worker %s did not exit within %s of SIGTERM (grace %s)", p.id, limit, p.grace)
	case exitErr != nil:
		return took, fmt.Errorf("worker %s after SIGTERM: %w, want exit status 0", p.id, exitErr)
	}
	return took, nil
}

// kill sends SIGKILL and waits for the process to die.
func (p *workerProc) kill(t *testing.T) {
	t.Helper()
	if err := p.signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	exitErr, exited := p.wait(processExit)
	var ee *exec.ExitError
	if !exited || !errors.As(exitErr, &ee) || !isSignal(ee, syscall.SIGKILL) {
		t.Fatalf("worker %s after SIGKILL: exited %v, %v; want killed by SIGKILL", p.id, exited, exitErr)
	}
}

func isSignal(err *exec.ExitError, sig syscall.Signal) bool {
	ws, ok := err.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

// logBuffer collects a process's output, keeping the newest maxLogBytes.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

const maxLogBytes = 1 << 20

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if over := b.buf.Len() - maxLogBytes; over > 0 {
		b.buf.Next(over)
	}
	return len(p), nil
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tail returns the last n lines.
func (b *logBuffer) tail(n int) string {
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("[... %d earlier lines]", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return "\t" + strings.Join(lines, "\n\t")
}
