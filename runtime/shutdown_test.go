package runtime_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// TestRunReturnsWhenTheDatabaseIsGone: the server stops while handlers run; then Run's
// context is cancelled. Run must return within ShutdownGrace plus its documented bound
// (a StatementTimeout to drain outcomes, one to deregister, and one of slack), even
// though no outcome can be written, and say which outcomes it gave up on.
func TestRunReturnsWhenTheDatabaseIsGone(t *testing.T) {
	t.Parallel()
	cluster, pool := newClusterDB(t)
	ctx := t.Context()
	jt := emailType(t, nil)
	// Jobs 0 and 1 finish once the server is gone: their outcomes wait to be written.
	// Jobs 2 and 3 run until the grace period is over: they are to be released.
	var ids []int64
	for n := range 4 {
		id, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: n, Email: "x@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id.ID)
	}
	logs := &syncBuffer{}
	cfg := testConfig(map[string]runtime.QueueConfig{"email": {MaxWorkers: 4}})
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	cfg.LeaseDuration = 8 * time.Second // longer than the whole shutdown: no lease runs out
	cfg.StatementTimeout = time.Second
	cfg.ShutdownGrace = time.Second
	w := runtime.NewWorker(pool, cfg)
	finish := make(chan struct{})
	var started atomic.Int32
	if err := runtime.Handle(w, jt, func(ctx context.Context, job *runtime.Job, p emailPayload) error {
		started.Add(1)
		if p.N < 2 {
			<-finish
			return nil
		}
		<-ctx.Done()
		return context.Cause(ctx)
	}); err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	waitFor(t, "four running handlers", 10*cfg.LeaseDuration, func() bool { return started.Load() == 4 })

	if err := cluster.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	close(finish)
	began := time.Now()
	cancel()
	bound := cfg.ShutdownGrace + 3*cfg.StatementTimeout
	select {
	case err := <-done:
		took := time.Since(began)
		if err != nil {
			t.Errorf("Run returned %v, want nil after a shutdown", err)
		}
		t.Logf("Run returned %s after its context was cancelled (grace %s, bound %s)", took.Round(time.Millisecond), cfg.ShutdownGrace, bound)
		if took > bound {
			t.Errorf("Run took %s to return, want at most grace %s + 3 × StatementTimeout %s; log:\n%s", took, cfg.ShutdownGrace, cfg.StatementTimeout, logs)
		}
	case <-time.After(2 * bound):
		t.Fatalf("Run had not returned %s after its context was cancelled (bound %s); %d handlers started; log:\n%s", 2*bound, bound, started.Load(), logs)
	}
	gaveUp := lines(logs.String(), "stopped retrying outcomes")
	for _, id := range ids {
		if !mentionsJob(gaveUp, id) {
			t.Errorf("no log line says the outcome of job %d was given up; those that do:\n%s", id, strings.Join(gaveUp, "\n"))
		}
	}
}

// TestOutcomeRetriesStopAtLeaseExpiry: while the server is down, the worker retries an
// outcome only as long as the job's lease lasts, then leaves the job to the rescuer and
// says so; once the server is back, the job is rescued and runs again, on attempt 2.
func TestOutcomeRetriesStopAtLeaseExpiry(t *testing.T) {
	t.Parallel()
	cluster, pool := newClusterDB(t)
	ctx := t.Context()
	jt := emailType(t, nil)
	enq, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "x@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	id := enq.ID
	logs := &syncBuffer{}
	cfg := testConfig(map[string]runtime.QueueConfig{"email": {MaxWorkers: 1}})
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	cfg.LeaseDuration = 3 * time.Second
	cfg.RescueInterval = 200 * time.Millisecond
	cfg.StatementTimeout = 500 * time.Millisecond
	w := runtime.NewWorker(pool, cfg)
	finish := make(chan struct{})
	attempts := make(chan int, 10)
	if err := runtime.Handle(w, jt, func(ctx context.Context, job *runtime.Job, p emailPayload) error {
		attempts <- job.Attempt
		if job.Attempt == 1 {
			<-finish
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	select {
	case a := <-attempts:
		if a != 1 {
			t.Fatalf("first handler call on attempt %d, want 1", a)
		}
	case <-time.After(10 * cfg.LeaseDuration):
		t.Fatalf("the handler did not start within %s", 10*cfg.LeaseDuration)
	}
	if err := cluster.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	close(finish)

	// The lease was taken or last extended at most LeaseDuration before now; one more
	// attempt may be under way when it runs out, and the retry wait ends at the expiry.
	bound := cfg.LeaseDuration + 2*cfg.StatementTimeout
	deadline := time.Now().Add(bound)
	for !mentionsJob(lines(logs.String(), "leases have expired"), id) {
		if time.Now().After(deadline) {
			t.Fatalf("no log line said, within %s of the server stopping, that job %d's outcome was given up at lease expiry; log:\n%s", bound, id, logs)
		}
		time.Sleep(cfg.PollInterval)
	}
	if n := len(lines(logs.String(), "recording outcomes failed; retrying")); n == 0 {
		t.Errorf("the worker gave up without retrying first; log:\n%s", logs)
	}

	if err := cluster.Start(ctx); err != nil {
		t.Fatal(err)
	}
	pool.Reset()
	wait := 5 * (cfg.LeaseDuration + cfg.RescueInterval + cfg.PollInterval)
	select {
	case a := <-attempts:
		if a != 2 {
			t.Errorf("after the restart the handler ran attempt %d, want 2", a)
		}
	case <-time.After(wait):
		t.Fatalf("the job was not rescued and run again within %s of the server's return; log:\n%s", wait, logs)
	}
	var state string
	var attempt int
	waitFor(t, "the rescued job to complete", wait, func() bool {
		err := pool.QueryRow(ctx, `SELECT state::text, attempt FROM jobc_jobs_finished WHERE id = $1`, id).Scan(&state, &attempt)
		return err == nil && state == "completed"
	})
	if attempt != 2 {
		t.Errorf("job %d completed on attempt %d, want 2 (the attempt whose outcome was lost counts)", id, attempt)
	}
}

// newClusterDB starts a throwaway cluster for the test alone (the test stops it) and
// returns it with a pool on its migrated postgres database.
func newClusterDB(t *testing.T) (*pgtest.Cluster, *pgxpool.Pool) {
	t.Helper()
	cluster, err := pgtest.StartCluster(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := cluster.Destroy(ctx); err != nil {
			t.Error(err)
		}
	})
	pool, err := pgxpool.New(t.Context(), cluster.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := migrated(t.Context(), pool); err != nil {
		t.Fatal(err)
	}
	return cluster, pool
}

// syncBuffer is a bytes.Buffer for a logger that goroutines share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// lines returns the lines of log that contain s.
func lines(log, s string) []string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}

// mentionsJob reports whether one of the text-handler lines lists id in its job_ids.
func mentionsJob(lines []string, id int64) bool {
	for _, l := range lines {
		_, rest, ok := strings.Cut(l, "job_ids=")
		if !ok {
			continue
		}
		list, _, _ := strings.Cut(strings.TrimLeft(rest, `"[`), "]")
		for _, f := range strings.Fields(list) {
			if f == fmt.Sprint(id) {
				return true
			}
		}
	}
	return false
}

// TestStopDuringClaims: a worker asked to stop while it claims leaves no job leased to
// itself once Run returns. The server may commit a claim as the stop comes; had the
// stop cut the claim short, the worker would exit without knowing of its jobs, which
// would wait out their leases and run again with the attempt counted, a
// lease_expired error recorded (TestRollingDeploy saw it once). Each round stops a
// busy worker a few milliseconds after its first job finished, while claims follow
// each other; before the fix one stop in four left jobs leased.
func TestStopDuringClaims(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewSchema(t, migrated)
	ctx := t.Context()
	jt := emailType(t, nil)
	const rounds, backlog = 16, 300
	for round := range rounds {
		payloads := make([]emailPayload, backlog)
		for n := range payloads {
			payloads[n] = emailPayload{N: n, Email: "x@example.com"}
		}
		if _, err := runtime.EnqueueMany(ctx, pool, jt, payloads); err != nil {
			t.Fatal(err)
		}
		cfg := testConfig(map[string]runtime.QueueConfig{"email": {MaxWorkers: 4}})
		cfg.ID = fmt.Sprintf("stopping-%d", round)
		var log syncBuffer
		cfg.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
		w := runtime.NewWorker(pool, cfg)
		if err := runtime.Handle(w, jt, func(context.Context, *runtime.Job, emailPayload) error { return nil }); err != nil {
			t.Fatal(err)
		}
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- w.Run(runCtx) }()
		waitFor(t, "the worker's first job to finish", 100*cfg.PollInterval, func() bool {
			return countRows(t, pool, `SELECT count(*) FROM jobc_jobs_finished`) > 0
		})
		time.Sleep(time.Duration(round%8) * time.Millisecond)
		stop()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		var leased []int64
		if err := pool.QueryRow(ctx, `SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM jobc_jobs WHERE state = 'running' AND lease_owner = $1`,
			cfg.ID).Scan(&leased); err != nil {
			t.Fatal(err)
		}
		if len(leased) > 0 {
			t.Errorf("round %d: jobs %v are still leased to %s, which has stopped; its log, but for its completed jobs:\n%s",
				round, leased, cfg.ID, strings.Join(slices.DeleteFunc(strings.Split(log.String(), "\n"), func(l string) bool {
					return strings.Contains(l, "jobc job completed")
				}), "\n"))
		}
		if _, err := pool.Exec(ctx, `DELETE FROM jobc_jobs; DELETE FROM jobc_jobs_finished`); err != nil {
			t.Fatal(err)
		}
	}
}
