package runtime_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// migrated is a pgtest setup that applies jobc's migrations.
func migrated(ctx context.Context, pool *pgxpool.Pool) error {
	_, err := runtime.Migrate(ctx, pool)
	return err
}

// newDB gives the test its own migrated schema.
func newDB(t *testing.T) *pgxpool.Pool {
	t.Helper()
	return pgtest.NewSchema(t, migrated)
}

// testConfig is a worker configuration with short intervals, so tests do not wait on
// defaults meant for production.
func testConfig(queues map[string]runtime.QueueConfig) runtime.Config {
	return runtime.Config{
		Queues:            queues,
		Logger:            slog.New(slog.DiscardHandler),
		PollInterval:      50 * time.Millisecond,
		SchedulerInterval: 20 * time.Millisecond,
		LeaseDuration:     5 * time.Second,
		ShutdownGrace:     5 * time.Second,
	}
}

// startWorker runs w until the test ends and fails the test if Run returns an error.
func startWorker(t *testing.T, w *runtime.Worker) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker %s: %v", w.ID(), err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func countRows(t *testing.T, pool *pgxpool.Pool, query string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// emailPayload is the payload of the test job type.
type emailPayload struct {
	N     int    `json:"n"`
	Email string `json:"email"`
}

const emailSchema = `{"type":"object","additionalProperties":false,"required":["n","email"],
	"properties":{"n":{"type":"integer","minimum":0},"email":{"type":"string","minLength":3}}}`

// emailType returns a job type for tests; tweak adjusts it before it is compiled.
func emailType(t *testing.T, tweak func(*runtime.JobType)) *runtime.JobType {
	t.Helper()
	jt := runtime.JobType{
		Kind:         "send_email",
		Queue:        "email",
		Priority:     5,
		MaxAttempts:  3,
		Backoff:      runtime.Backoff{Kind: runtime.BackoffConstant, Initial: 10 * time.Millisecond},
		WriteVersion: 1,
		Versions:     []runtime.Version{{Number: 1, Schema: emailSchema}},
	}
	if tweak != nil {
		tweak(&jt)
	}
	out, err := runtime.NewJobType(jt)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
