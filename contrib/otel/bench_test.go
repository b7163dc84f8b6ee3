package jobcotel_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

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
//
// "sdk" is the floor under it: the calls into the OpenTelemetry SDK that any adapter
// recording the same telemetry makes for a job (a span with the same attributes, child
// of the enqueuing span, and the two histograms), with everything else precomputed.
func BenchmarkPerJob(b *testing.B) {
	ctx := context.Background()
	newProviders := func() (*sdktrace.TracerProvider, *sdkmetric.MeterProvider) {
		return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(discardSpans{})),
			sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	}
	// adapter runs the hot path for jobs enqueued under traceparent.
	adapter := func(b *testing.B, traceparent string) {
		tp, mp := newProviders()
		in, err := jobcotel.New(jobcotel.Options{TracerProvider: tp, MeterProvider: mp})
		if err != nil {
			b.Fatal(err)
		}
		job := &runtime.Job{ID: 42, Kind: "noop", Queue: "bench", Attempt: 1,
			Metadata: []byte(`{"otel_trace_context":{"traceparent":"` + traceparent + `"}}`)}
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
	b.Run("adapter", func(b *testing.B) { adapter(b, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01") })
	// A job whose enqueuing trace was not sampled (flags 00): the SDK's default sampler
	// follows the parent and the span does not record, as for most jobs under a
	// sampler that keeps a fraction of traces.
	b.Run("adapter-unsampled", func(b *testing.B) { adapter(b, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00") })
	b.Run("sdk", func(b *testing.B) {
		tp, mp := newProviders()
		tracer, meter := tp.Tracer("floor"), mp.Meter("floor")
		wait, err := meter.Float64Histogram("wait")
		if err != nil {
			b.Fatal(err)
		}
		process, err := meter.Float64Histogram("process")
		if err != nil {
			b.Fatal(err)
		}
		set := metric.WithAttributeSet(attribute.NewSet(attribute.String("messaging.system", "jobc"),
			attribute.String("messaging.destination.name", "bench"), attribute.String("jobc.job.kind", "noop")))
		parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1},
			TraceFlags: trace.FlagsSampled, Remote: true})
		parentCtx := trace.ContextWithRemoteSpanContext(ctx, parent)
		kind := trace.WithSpanKind(trace.SpanKindConsumer)
		attrs := trace.WithAttributes(attribute.String("messaging.system", "jobc"),
			attribute.String("messaging.destination.name", "bench"), attribute.String("jobc.job.kind", "noop"),
			attribute.String("messaging.operation.name", "process"), attribute.String("messaging.operation.type", "process"),
			attribute.String("messaging.message.id", "42"), attribute.Int("jobc.job.attempt", 1))
		b.ReportAllocs()
		for b.Loop() {
			wait.Record(ctx, 0.003, set)
			_, span := tracer.Start(parentCtx, "process bench", kind, attrs)
			span.End()
			process.Record(ctx, 0.001, set)
		}
	})
}
