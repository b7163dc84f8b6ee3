// Package testkit holds the helpers that tests of several modules share (the runtime's
// adapters in contrib/, the CLI): a migrated schema, a worker configuration with short
// intervals, a worker run for the test's lifetime, a wait that reports what it saw, a
// Prometheus scrape, and dead row versions in jobc_jobs. Applications' own tests use jobctest instead.
package testkit

import (
	"bufio"
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// MigratedSchema returns a pool on a new schema of the package's test database, with
// jobc's migrations applied (see pgtest.NewSchema).
func MigratedSchema(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return pgtest.NewSchema(t, func(ctx context.Context, pool *pgxpool.Pool) error {
		_, err := runtime.Migrate(ctx, pool)
		return err
	})
}

// DeadJobs leaves n dead row versions in pool's jobc_jobs (n jobs of kind
// testkit_dead inserted, then deleted) and has the session that made them report them to PostgreSQL's
// statistics, which report a session's counts at the end of the transaction after
// pg_stat_force_next_flush's.
func DeadJobs(t testing.TB, pool *pgxpool.Pool, n int) {
	t.Helper()
	ctx := t.Context()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts)
		SELECT 'testkit_dead', 'testkit_dead', 'available', 1, 1, '{}', 3 FROM generate_series(1, $1)`, n); err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{`DELETE FROM jobc_jobs WHERE kind = 'testkit_dead'`, `SELECT pg_stat_force_next_flush()`, `SELECT 1`} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
}

// Config has short intervals, so that waits derived from them are short.
func Config() runtime.Config {
	return runtime.Config{
		Logger:            slog.New(slog.DiscardHandler),
		PollInterval:      50 * time.Millisecond,
		SchedulerInterval: 20 * time.Millisecond,
		LeaseDuration:     5 * time.Second,
		ShutdownGrace:     5 * time.Second,
	}
}

// Number is the payload of NumberJobType.
type Number struct {
	N int `json:"n"`
}

// NumberJobType is a job type of the given kind and queue whose payload is a Number,
// with a single attempt.
func NumberJobType(t testing.TB, kind, queue string) *runtime.JobType {
	t.Helper()
	jt, err := runtime.NewJobType(runtime.JobType{
		Kind: kind, Queue: queue, Priority: 5, MaxAttempts: 1, WriteVersion: 1,
		Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object","required":["n"],"properties":{"n":{"type":"integer"}}}`}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return jt
}

// RunWorker runs w until the test ends and fails the test if Run returns an error.
func RunWorker(t testing.TB, w *runtime.Worker) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	})
}

// WaitFor polls cond every tick until it holds or timeout passes, then fails with what
// state reports.
func WaitFor(t testing.TB, what string, tick, timeout time.Duration, cond func() bool, state func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; saw %s", timeout, what, state())
		}
		time.Sleep(tick)
	}
}

// Scrape fetches a Prometheus text exposition from url and returns every sample by its
// series, as written: name{label="value",...}.
func Scrape(t testing.TB, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: %s", url, resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("scrape %s: line %q: %v", url, line, err)
		}
		out[line[:i]] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	return out
}

// BurnDown enqueues b.N no-op jobs (untimed) and times one worker with the given hooks
// and middleware working them all, reporting jobs/s: the adapters' benchmarks compare
// it with and without them.
func BurnDown(b *testing.B, hooks []runtime.Hook, middleware []runtime.Middleware) {
	pool := MigratedSchema(b)
	ctx := context.Background()
	jt := NumberJobType(b, "noop", "bench")
	const chunk = 10000
	for i := 0; i < b.N; i += chunk {
		ps := make([]Number, min(chunk, b.N-i))
		if _, err := runtime.EnqueueMany(ctx, pool, jt, ps); err != nil {
			b.Fatal(err)
		}
	}
	done := make(chan struct{}, b.N)
	cfg := Config()
	cfg.Queues = map[string]runtime.QueueConfig{"bench": {MaxWorkers: 100}}
	cfg.Hooks, cfg.Middleware = hooks, middleware
	w := runtime.NewWorker(pool, cfg)
	if err := runtime.Handle(w, jt, func(context.Context, *runtime.Job, Number) error {
		done <- struct{}{}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	runCtx, stop := context.WithCancel(ctx)
	finished := make(chan error, 1)
	go func() { finished <- w.Run(runCtx) }()
	for range b.N {
		<-done
	}
	stop() // Run returns once every outcome is recorded
	if err := <-finished; err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}
