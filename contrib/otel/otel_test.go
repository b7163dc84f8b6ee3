package jobcotel_test

import (
	"context"
	"fmt"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	jobcotel "github.com/jobc-dev/jobc/contrib/otel"
	"github.com/jobc-dev/jobc/internal/testkit"
	"github.com/jobc-dev/jobc/runtime"
)

// TestHandlerSpanContinuesEnqueuingTrace: a request span enqueues a job; the handler's
// own span, in another goroutine of a worker, belongs to the request's trace, through
// the producer span stored in the job's metadata and the worker's consumer span.
func TestHandlerSpanContinuesEnqueuingTrace(t *testing.T) {
	t.Parallel()
	pool := testkit.MigratedSchema(t)
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	in, err := jobcotel.New(jobcotel.Options{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	jt := testkit.NumberJobType(t, "render", "pdf")

	reqCtx, request := tp.Tracer("app").Start(context.Background(), "POST /invoices")
	enq, err := runtime.Enqueue(reqCtx, pool, jt, payload{N: 1}, runtime.WithHooks(in))
	if err != nil {
		t.Fatal(err)
	}
	request.End()

	cfg := testkit.Config()
	cfg.Hooks = []runtime.Hook{in}
	cfg.Middleware = []runtime.Middleware{in}
	w := runtime.NewWorker(pool, cfg)
	handled := make(chan trace.SpanContext, 1)
	if err := runtime.Handle(w, jt, func(ctx context.Context, _ *runtime.Job, _ payload) error {
		_, span := tp.Tracer("app").Start(ctx, "render invoice")
		defer span.End()
		handled <- span.SpanContext()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	testkit.RunWorker(t, w)
	var handlerSC trace.SpanContext
	select {
	case handlerSC = <-handled:
	case <-t.Context().Done():
		t.Fatal("the handler did not run")
	}
	testkit.WaitFor(t, "the job completed", cfg.PollInterval, 20*cfg.LeaseDuration, func() bool {
		info, err := runtime.GetJob(context.Background(), pool, enq.ID)
		return err == nil && info.State == runtime.StateCompleted
	}, func() string {
		info, err := runtime.GetJob(context.Background(), pool, enq.ID)
		return fmt.Sprint(info, err)
	})
	byName := map[string]sdktrace.ReadOnlySpan{}
	testkit.WaitFor(t, "four ended spans", cfg.PollInterval, 20*cfg.LeaseDuration, func() bool {
		for _, s := range spans.Ended() {
			byName[s.Name()] = s
		}
		return len(byName) == 4
	}, func() string { return fmt.Sprint(len(spans.Ended()), " spans") })

	req, producer, consumer, handler := byName["POST /invoices"], byName["enqueue pdf"], byName["process pdf"], byName["render invoice"]
	if req == nil || producer == nil || consumer == nil || handler == nil {
		t.Fatalf("spans %v: want the request, enqueue pdf, process pdf and the handler's", byName)
	}
	traceID := req.SpanContext().TraceID()
	for _, s := range []sdktrace.ReadOnlySpan{producer, consumer, handler} {
		if s.SpanContext().TraceID() != traceID {
			t.Errorf("span %q is in trace %s, want the request's %s", s.Name(), s.SpanContext().TraceID(), traceID)
		}
	}
	if handlerSC.TraceID() != traceID {
		t.Errorf("the handler saw trace %s, want %s", handlerSC.TraceID(), traceID)
	}
	parentOf := map[string]sdktrace.ReadOnlySpan{"enqueue pdf": req, "process pdf": producer, "render invoice": consumer}
	for name, parent := range parentOf {
		if got := byName[name].Parent().SpanID(); got != parent.SpanContext().SpanID() {
			t.Errorf("span %q has parent %s, want %q (%s)", name, got, parent.Name(), parent.SpanContext().SpanID())
		}
	}
	if producer.SpanKind() != trace.SpanKindProducer || consumer.SpanKind() != trace.SpanKindConsumer {
		t.Errorf("kinds: enqueue %s, process %s; want producer, consumer", producer.SpanKind(), consumer.SpanKind())
	}
	if v := attr(consumer.Attributes(), "messaging.system"); v != "jobc" {
		t.Errorf("process span messaging.system = %q, want jobc", v)
	}
	if v := attr(consumer.Attributes(), "messaging.destination.name"); v != "pdf" {
		t.Errorf("process span messaging.destination.name = %q, want pdf", v)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					counts[m.Name] += p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					counts[m.Name] += int64(p.Count)
				}
			}
		}
	}
	for name, want := range map[string]int64{
		"messaging.client.sent.messages": 1, "messaging.client.consumed.messages": 1,
		"messaging.process.duration": 1, "jobc.jobs.finished": 1, "jobc.job.wait": 1,
	} {
		if counts[name] != want {
			t.Errorf("%s counted %d, want %d (all: %v)", name, counts[name], want, counts)
		}
	}
}

func attr(kvs []attribute.KeyValue, key string) string {
	for _, kv := range kvs {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return ""
}
