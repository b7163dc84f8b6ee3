package jobcprom_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	jobcprom "github.com/jobc-dev/jobc/contrib/prometheus"
	"github.com/jobc-dev/jobc/internal/testkit"
	"github.com/jobc-dev/jobc/runtime"
)

// BenchmarkBurnDownHooks measures what the WorkerCollector costs a worker burning down
// a backlog of no-op jobs, against the same worker without hooks:
//
//	go run ./internal/cmd/withpostgres -- sh -c 'cd contrib/prometheus && go test -run ^$ -bench BurnDownHooks -benchtime 20000x -count 5 .'
func BenchmarkBurnDownHooks(b *testing.B) {
	b.Run("off", func(b *testing.B) { testkit.BurnDown(b, nil, nil) })
	b.Run("prometheus", func(b *testing.B) {
		c := jobcprom.NewWorkerCollector(jobcprom.WorkerOptions{})
		prometheus.NewRegistry().MustRegister(c)
		testkit.BurnDown(b, []runtime.Hook{c}, nil)
	})
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
