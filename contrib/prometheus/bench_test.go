package jobcprom_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	jobcprom "github.com/jobc-dev/jobc/contrib/prometheus"
	"github.com/jobc-dev/jobc/runtime"
)

// BenchmarkBurnDownHooks measures what the WorkerCollector costs a worker burning down
// a backlog of no-op jobs, against the same worker without hooks:
//
//	go run ./internal/cmd/withpostgres -- sh -c 'cd contrib/prometheus && go test -run ^$ -bench BurnDownHooks -benchtime 20000x -count 5 .'
func BenchmarkBurnDownHooks(b *testing.B) {
	b.Run("off", func(b *testing.B) { burnDown(b, nil) })
	b.Run("prometheus", func(b *testing.B) {
		c := jobcprom.NewWorkerCollector(jobcprom.WorkerOptions{})
		prometheus.NewRegistry().MustRegister(c)
		burnDown(b, []runtime.Hook{c})
	})
}

// burnDown enqueues b.N jobs (untimed) and times one worker working them all.
func burnDown(b *testing.B, hooks []runtime.Hook) {
	pool := newDB(b)
	ctx := context.Background()
	jt := jobType(b, "noop", "bench")
	const chunk = 10000
	for i := 0; i < b.N; i += chunk {
		ps := make([]payload, min(chunk, b.N-i))
		if _, err := runtime.EnqueueMany(ctx, pool, jt, ps); err != nil {
			b.Fatal(err)
		}
	}
	done := make(chan struct{}, b.N)
	cfg := testConfig()
	cfg.Queues = map[string]runtime.QueueConfig{"bench": {MaxWorkers: 100}}
	cfg.Hooks = hooks
	w := runtime.NewWorker(pool, cfg)
	if err := runtime.Handle(w, jt, func(context.Context, *runtime.Job, payload) error {
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

// BenchmarkOnEvent is the collector's cost per job on the worker's hot path: the start
// and finish events of one attempt. Compare with a job's time in BenchmarkBurnDownHooks.
func BenchmarkOnEvent(b *testing.B) {
	c := jobcprom.NewWorkerCollector(jobcprom.WorkerOptions{})
	ctx := context.Background()
	start := runtime.Event{Kind: runtime.EventStart, Queue: "bench", JobKind: "noop", Attempt: 1, Wait: 3 * time.Millisecond}
	finish := start
	finish.Kind, finish.Outcome, finish.RunTime = runtime.EventFinish, runtime.OutcomeCompleted, time.Millisecond
	b.ReportAllocs()
	for b.Loop() {
		c.OnEvent(ctx, start)
		c.OnEvent(ctx, finish)
	}
}
