package jobcotel_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

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
	if v, want := attr(consumer.Attributes(), "messaging.message.id"), fmt.Sprint(enq.ID); v != want {
		t.Errorf("process span messaging.message.id = %q, want the job's id %s", v, want)
	}
	if v := attr(consumer.Attributes(), "jobc.job.attempt"); v != "1" {
		t.Errorf("process span jobc.job.attempt = %q, want 1", v)
	}

	_, counts := collect(t, reader)
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

// TestHotPathMetrics: what the hooks record for starts and ends of attempts, read the
// way an exporter reads them: each series with its attributes, totals that keep
// growing across collections, and two Instrumentations on one meter provider (a
// worker's and a relay's, say) adding up rather than overwriting each other.
func TestHotPathMetrics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	in, err := jobcotel.New(jobcotel.Options{MeterProvider: mp, TracerProvider: sdktrace.NewTracerProvider()})
	if err != nil {
		t.Fatal(err)
	}
	start := func(in *jobcotel.Instrumentation, queue, kind string) {
		in.OnEvent(ctx, runtime.Event{Kind: runtime.EventStart, Queue: queue, JobKind: kind, Attempt: 1, Wait: 20 * time.Millisecond})
	}
	finish := func(in *jobcotel.Instrumentation, queue, kind, outcome, class string) {
		in.OnEvent(ctx, runtime.Event{Kind: runtime.EventFinish, Queue: queue, JobKind: kind, Attempt: 1,
			Outcome: outcome, ErrorClass: class, RunTime: 3 * time.Millisecond})
	}
	for range 3 {
		start(in, "email", "welcome")
	}
	start(in, "pdf", "render")
	finish(in, "email", "welcome", runtime.OutcomeCompleted, "")
	finish(in, "email", "welcome", runtime.OutcomeCompleted, "")
	finish(in, "email", "welcome", runtime.OutcomeRetried, "transient")
	finish(in, "pdf", "render", runtime.OutcomeFailed, "permanent")

	// The series of the hot path's instruments, each named with its attributes.
	var (
		consumed  = []string{"messaging.operation.name=process", "messaging.operation.type=process", "messaging.system=jobc"}
		welcome   = []string{"messaging.destination.name=email", "jobc.job.kind=welcome"}
		render    = []string{"messaging.destination.name=pdf", "jobc.job.kind=render"}
		consumedW = series("messaging.client.consumed.messages", welcome, consumed)
		waitW     = series("jobc.job.wait", welcome, "messaging.system=jobc")
		completed = series("jobc.jobs.finished", welcome, "messaging.system=jobc", "jobc.job.outcome=completed", "jobc.job.error_class=")
		processW  = series("messaging.process.duration", welcome, consumed)
	)
	want := map[string]int64{
		consumedW: 3,
		series("messaging.client.consumed.messages", render, consumed): 1,
		waitW: 3,
		series("jobc.job.wait", render, "messaging.system=jobc"): 1,
		completed: 2,
		series("jobc.jobs.finished", welcome, "messaging.system=jobc", "jobc.job.outcome=retried", "jobc.job.error_class=transient"): 1,
		series("jobc.jobs.finished", render, "messaging.system=jobc", "jobc.job.outcome=failed", "jobc.job.error_class=permanent"):   1,
		processW: 2,
		series("messaging.process.duration", welcome, consumed, "error.type=transient"): 1,
		series("messaging.process.duration", render, consumed, "error.type=permanent"):  1,
	}
	checkSeries(t, "first collection", reader, want)

	// A second Instrumentation on the same provider, and more of the same series.
	other, err := jobcotel.New(jobcotel.Options{MeterProvider: mp, TracerProvider: sdktrace.NewTracerProvider()})
	if err != nil {
		t.Fatal(err)
	}
	start(other, "email", "welcome")
	start(in, "email", "welcome")
	finish(other, "email", "welcome", runtime.OutcomeCompleted, "")
	want[consumedW] += 2
	want[waitW] += 2
	want[completed]++
	want[processW]++
	checkSeries(t, "second collection", reader, want)
}

// A worker's reconnects (runtime.EventReconnect) are counted.
func TestReconnectsCounted(t *testing.T) {
	t.Parallel()
	reader := sdkmetric.NewManualReader()
	in, err := jobcotel.New(jobcotel.Options{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
		TracerProvider: sdktrace.NewTracerProvider()})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		in.OnEvent(context.Background(), runtime.Event{Kind: runtime.EventReconnect, Err: errors.New("conn closed")})
	}
	checkSeries(t, "after two reconnects", reader, map[string]int64{series("jobc.worker.reconnects", "messaging.system=jobc"): 2})
}

// series names an instrument's series: name{key=value,...}, the attributes sorted;
// each of attrs is a "key=value" string or a list of them.
func series(name string, attrs ...any) string {
	var kv []string
	for _, a := range attrs {
		switch a := a.(type) {
		case string:
			kv = append(kv, a)
		case []string:
			kv = append(kv, a...)
		}
	}
	sort.Strings(kv)
	return name + "{" + strings.Join(kv, ",") + "}"
}

// checkSeries collects once and compares every series of the hot path's four
// instruments, by name and attributes, with want: a counter's value, a histogram's
// count.
func checkSeries(t *testing.T, when string, reader *sdkmetric.ManualReader, want map[string]int64) {
	t.Helper()
	got, _ := collect(t, reader)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s = %d, want %d", when, k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected series %s = %d", when, k, v)
		}
	}
}

// collect reads the meter once, as an exporter does, and returns each series' value (a
// counter's sum, a histogram's count) by series (see series) and by instrument. The
// counters must be monotonic, cumulative sums.
func collect(t *testing.T, reader *sdkmetric.ManualReader) (bySeries, byName map[string]int64) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	bySeries, byName = map[string]int64{}, map[string]int64{}
	add := func(name string, s attribute.Set, v int64) {
		var kv []string
		for _, a := range s.ToSlice() {
			kv = append(kv, string(a.Key)+"="+a.Value.String())
		}
		bySeries[series(name, kv)] += v
		byName[name] += v
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				if !d.IsMonotonic || d.Temporality != metricdata.CumulativeTemporality {
					t.Errorf("%s is monotonic %v, %s; want a monotonic cumulative sum", m.Name, d.IsMonotonic, d.Temporality)
				}
				for _, p := range d.DataPoints {
					add(m.Name, p.Attributes, p.Value)
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					add(m.Name, p.Attributes, int64(p.Count))
				}
			}
		}
	}
	return bySeries, byName
}
