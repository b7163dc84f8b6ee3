package jobcotel_test

import (
	"context"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	jobcotel "github.com/jobc-dev/jobc/contrib/otel"
	"github.com/jobc-dev/jobc/internal/testkit"
	"github.com/jobc-dev/jobc/runtime"
)

// BenchmarkBurnDownHooks measures what the Instrumentation (metrics and a consumer span per job) costs a worker burning down
// a backlog of no-op jobs, against the same worker without hooks:
//
//	go run ./internal/cmd/withpostgres -- sh -c 'cd contrib/otel && go test -run ^$ -bench BurnDownHooks -benchtime 20000x -count 5 .'
func BenchmarkBurnDownHooks(b *testing.B) {
	b.Run("off", func(b *testing.B) { testkit.BurnDown(b, nil, nil) })
	b.Run("otel", func(b *testing.B) {
		// Recording providers, as in production: spans end in a processor, metrics
		// aggregate for a reader.
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(discardSpans{}))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		in, err := jobcotel.New(jobcotel.Options{TracerProvider: tp, MeterProvider: mp})
		if err != nil {
			b.Fatal(err)
		}
		testkit.BurnDown(b, []runtime.Hook{in}, []runtime.Middleware{in})
	})
}

// discardSpans is a span processor that drops ended spans, standing in for an exporter.
type discardSpans struct{}

func (discardSpans) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (discardSpans) OnEnd(sdktrace.ReadOnlySpan)                     {}
func (discardSpans) Shutdown(context.Context) error                  { return nil }
func (discardSpans) ForceFlush(context.Context) error                { return nil }

// BenchmarkPerJob is the Instrumentation's cost per job on the worker's hot path: the
// consumer span around the handler (reading the trace context from the metadata) and
// the start and finish events. Compare with a job's time in BenchmarkBurnDownHooks.
func BenchmarkPerJob(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(discardSpans{}))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	in, err := jobcotel.New(jobcotel.Options{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	job := &runtime.Job{ID: 42, Kind: "noop", Queue: "bench", Attempt: 1,
		Metadata: []byte(`{"otel_trace_context":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}`)}
	start := runtime.Event{Kind: runtime.EventStart, Queue: "bench", JobKind: "noop", Attempt: 1, Wait: 3 * time.Millisecond}
	finish := start
	finish.Kind, finish.Outcome, finish.RunTime = runtime.EventFinish, runtime.OutcomeCompleted, time.Millisecond
	noop := func(context.Context) error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		in.OnEvent(ctx, start)
		if err := in.WrapHandler(ctx, job, noop); err != nil {
			b.Fatal(err)
		}
		in.OnEvent(ctx, finish)
	}
}
