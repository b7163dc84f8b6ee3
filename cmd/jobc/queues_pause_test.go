//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/cmd/testworker/chaosjob"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// TestQueuePauseAcrossWorkerProcesses is the incident of issue 9 with three worker
// processes: `jobc queues pause` lets the running job finish and stops every claim
// within one poll interval; the pause holds while a worker restarts; `jobc queues
// resume` starts the work again at once.
func TestQueuePauseAcrossWorkerProcesses(t *testing.T) {
	pool := pgtest.NewSchema(t, nil)
	url := pgtest.SchemaConnString(t, pgtest.SchemaOf(pool))
	ctx := t.Context()
	if _, err := runtime.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `
		CREATE TABLE handled (job_id bigint, n int, worker text, attempt int, at timestamptz DEFAULT now(),
		run bigserial, ended_at timestamptz);
		CREATE TABLE handled_done (job_id bigint, n int, worker text, attempt int, at timestamptz DEFAULT now());`); err != nil {
		t.Fatal(err)
	}
	bin := buildTestWorker(t)
	// The workers poll rarely, so that only the pause's and resume's notifications can
	// explain a reaction much faster than a poll.
	const poll = time.Second
	start := func(id string) *workerProc { return startWorkerProc(t, bin, url, id, poll) }
	procs := []*workerProc{start("w1"), start("w2"), start("w3")}
	waitFor(t, "three live workers", slowdown*(time.Second+poll), func() (bool, string) {
		ws, err := runtime.ListWorkers(ctx, pool, 0)
		return err == nil && len(ws) == 3, fmt.Sprintf("%d live workers (%v)", len(ws), err)
	})

	// A long job is running when the pause comes: it finishes.
	long := enqueueChaos(t, pool, chaosjob.Payload{N: 0, SleepMS: (2 * poll).Milliseconds()})
	waitFor(t, "the long job to start", slowdown*poll, func() (bool, string) {
		n := count(t, pool, `SELECT count(*) FROM handled WHERE job_id = $1`, long)
		return n == 1, jobStates(t, pool, []int64{long})
	})
	out, errOut, code := jobc(t, "queues", "pause", chaosjob.DefaultQueue, "--database-url", url)
	if code != 0 {
		t.Fatalf("queues pause: exit %d: %s%s", code, out, errOut)
	}
	paused := time.Now()
	time.Sleep(poll) // "within one poll interval": from here on, no worker claims
	var waiting []int64
	for n := 1; n <= 6; n++ {
		waiting = append(waiting, enqueueChaos(t, pool, chaosjob.Payload{N: int64(n)}))
	}
	waitFor(t, "the running job to finish", slowdown*2*poll, func() (bool, string) {
		return allInState(t, pool, []int64{long}, runtime.StateCompleted), jobStates(t, pool, []int64{long})
	})
	noClaims := func(what string) {
		t.Helper()
		// Three poll intervals: each worker would have polled (and been woken by the
		// enqueue notifications) several times over.
		for end := time.Now().Add(3 * poll); time.Now().Before(end); time.Sleep(poll / 10) {
			if n := count(t, pool, `SELECT count(*) FROM handled WHERE job_id <> $1`, long); n != 0 {
				t.Fatalf("%s: %d job(s) claimed from the paused queue (%s after the pause):%s", what, n, time.Since(paused).Round(time.Millisecond), jobStates(t, pool, waiting))
			}
		}
	}
	noClaims("paused queue")

	// A worker that restarts keeps out of the paused queue.
	if err := procs[0].stop(); err != nil {
		t.Fatal(err)
	}
	procs[0] = start("w1")
	began := time.Now()
	waitFor(t, "the restarted worker to be live", slowdown*(time.Second+poll), func() (bool, string) {
		ws, err := runtime.ListWorkers(ctx, pool, 0)
		for _, w := range ws {
			if w.ID == "w1" && w.StartedAt.After(began.Add(-time.Second)) && w.PID == procs[0].cmd.Process.Pid {
				return true, ""
			}
		}
		return false, fmt.Sprintf("workers %+v (%v)", ws, err)
	})
	noClaims("paused queue after a worker restart")

	out, errOut, code = jobc(t, "queues", "--json", "--database-url", url)
	var qs []queueJSON
	if code != 0 || json.Unmarshal([]byte(out), &qs) != nil || len(qs) != 1 || !qs[0].Paused || qs[0].Available != int64(len(waiting)) || qs[0].Workers != 3 {
		t.Errorf("queues --json while paused: exit %d\n%s%s\nwant %s paused with %d available and 3 workers", code, out, errOut, chaosjob.DefaultQueue, len(waiting))
	}

	out, errOut, code = jobc(t, "queues", "resume", chaosjob.DefaultQueue, "--database-url", url)
	if code != 0 {
		t.Fatalf("queues resume: exit %d: %s%s", code, out, errOut)
	}
	resumed := time.Now()
	// At once: well within one poll interval (the notification wakes the workers).
	waitFor(t, "the waiting jobs to complete after resume", slowdown*poll, func() (bool, string) {
		return allInState(t, pool, waiting, runtime.StateCompleted), jobStates(t, pool, waiting)
	})
	var first time.Time
	if err := pool.QueryRow(ctx, `SELECT min(at) FROM handled WHERE job_id <> $1`, long).Scan(&first); err != nil {
		t.Fatal(err)
	}
	t.Logf("first claim %s after resume (poll interval %s)", first.Sub(resumed).Round(time.Millisecond), poll)
	if d := first.Sub(resumed); d >= poll {
		t.Errorf("the first job after resume started %s later, not sooner than the poll interval %s: the workers were not woken", d, poll)
	}
	for _, p := range procs {
		if err := p.stop(); err != nil {
			t.Error(err)
		}
	}
}

func enqueueChaos(t *testing.T, pool *pgxpool.Pool, p chaosjob.Payload) int64 {
	t.Helper()
	jt, err := chaosjob.NewJobType(chaosjob.DefaultQueue, chaosjob.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := runtime.Enqueue(t.Context(), pool, jt, p)
	if err != nil {
		t.Fatal(err)
	}
	return e.ID
}

func count(t *testing.T, pool *pgxpool.Pool, query string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(t.Context(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// buildTestWorker builds internal/cmd/testworker (see its doc) from the repository root.
func buildTestWorker(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "testworker")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./internal/cmd/testworker")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build testworker: %v\n%s", err, out)
	}
	return bin
}

// workerProc is a running testworker process.
type workerProc struct {
	id     string
	cmd    *exec.Cmd
	mu     sync.Mutex
	log    bytes.Buffer
	exited chan error
}

func (p *workerProc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.Write(b)
}

// startWorkerProc starts a testworker serving chaosjob.DefaultQueue; the test's end
// kills it if it still runs, and a failed test logs its output.
func startWorkerProc(t *testing.T, bin, url, id string, poll time.Duration) *workerProc {
	t.Helper()
	p := &workerProc{id: id, exited: make(chan error, 1)}
	p.cmd = exec.Command(bin, "-id", id, "-concurrency", "2", "-poll", poll.String(), "-grace", "5s", "-log-level", "info")
	p.cmd.Env = append(os.Environ(), "DATABASE_URL="+url)
	p.cmd.Stdout, p.cmd.Stderr = p, p
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // dies with the test binary
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start worker %s: %v", id, err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		if t.Failed() {
			p.mu.Lock()
			t.Logf("worker %s (pid %s) output:\n%s", id, strconv.Itoa(p.cmd.Process.Pid), p.log.String())
			p.mu.Unlock()
		}
	})
	return p
}

// stop ends the worker gracefully and checks that it exits 0 within its grace period.
func (p *workerProc) stop() error {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("stop worker %s: %w", p.id, err)
	}
	select {
	case err := <-p.exited:
		if err != nil {
			return fmt.Errorf("worker %s after SIGTERM: %w, want exit status 0", p.id, err)
		}
		return nil
	case <-time.After(slowdown * 5 * time.Second):
		return fmt.Errorf("worker %s did not exit within %s of SIGTERM", p.id, slowdown*5*time.Second)
	}
}
