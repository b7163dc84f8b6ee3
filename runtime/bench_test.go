package runtime_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// BenchmarkClaimFinish measures the worker's hot path: claim a batch, run a no-op
// handler, record the outcomes. b.N jobs are enqueued first (untimed); the timer covers
// the worker burning them down. `go test -bench ClaimFinish -benchtime 20000x ./runtime/`.
func BenchmarkClaimFinish(b *testing.B) { claimFinish(b, nil) }

// BenchmarkClaimFinishFlow is BenchmarkClaimFinish for a kind under flow control
// (jobc_claim_flow claims its jobs): the kind one key, with a concurrency limit that
// never holds a job back, so that it measures what the flow claim costs beside the
// plain one.
// `go test -bench 'ClaimFinish' -benchtime 20000x -benchmem ./runtime/`.
func BenchmarkClaimFinishFlow(b *testing.B) {
	claimFinish(b, &runtime.Flow{Concurrency: 100000})
}

func claimFinish(b *testing.B, flow *runtime.Flow) {
	pool := pgtest.NewSchema(b, migrated)
	ctx := context.Background()
	jt, err := runtime.NewJobType(runtime.JobType{
		Kind: "noop", Queue: "bench", Priority: 5, MaxAttempts: 3, Flow: flow,
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: emailSchema}},
	})
	if err != nil {
		b.Fatal(err)
	}
	const chunk = 10000
	for i := 0; i < b.N; i += chunk {
		ps := make([]emailPayload, min(chunk, b.N-i))
		for j := range ps {
			ps[j] = emailPayload{N: i + j, Email: "bench@example.com"}
		}
		if _, err := runtime.EnqueueMany(ctx, pool, jt, ps); err != nil {
			b.Fatal(err)
		}
	}
	done := make(chan struct{}, b.N)
	w := runtime.NewWorker(pool, runtime.Config{
		Queues:       map[string]runtime.QueueConfig{"bench": {MaxWorkers: 100}},
		Logger:       slog.New(slog.DiscardHandler),
		PollInterval: 100 * time.Millisecond,
	})
	if err := runtime.Handle(w, jt, func(context.Context, *runtime.Job, emailPayload) error {
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
	// Run returns once every outcome is recorded.
	stop()
	if err := <-finished; err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
	var left int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM jobc_jobs`).Scan(&left); err != nil || left != 0 {
		b.Fatalf("%d jobs left unfinished (%v)", left, err)
	}
}
