package jobcotel

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/relay"
)

// Name is the instrumentation scope of the tracer and the meter.
const Name = "github.com/jobc-dev/jobc/contrib/otel"

// MetadataKey is the job metadata key holding the enqueuing span's W3C trace context
// (an object of traceparent and, when set, tracestate).
const MetadataKey = "otel_trace_context"

// Attribute keys of the messaging semantic conventions, and jobc's own.
const (
	keySystem        = attribute.Key("messaging.system")
	keyDestination   = attribute.Key("messaging.destination.name")
	keyOperationName = attribute.Key("messaging.operation.name")
	keyOperationType = attribute.Key("messaging.operation.type")
	keyMessageID     = attribute.Key("messaging.message.id")
	keyBatchCount    = attribute.Key("messaging.batch.message_count")
	keyErrorType     = attribute.Key("error.type")
	keyKind          = attribute.Key("jobc.job.kind")
	keyAttempt       = attribute.Key("jobc.job.attempt")
	keyOutcome       = attribute.Key("jobc.job.outcome")
	keyRelayOutcome  = attribute.Key("jobc.relay.outcome")
	keyClass         = attribute.Key("jobc.job.error_class")
)

var (
	systemJobc   = keySystem.String("jobc")
	consumerSpan = trace.WithSpanKind(trace.SpanKindConsumer)
)

// Options configure an Instrumentation; zero fields take the global providers.
type Options struct {
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// Propagator carries the trace context in job metadata; default W3C trace context.
	Propagator propagation.TextMapPropagator
}

// Instrumentation traces and measures jobc: an EnqueueHook, a Middleware and a Hook.
type Instrumentation struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator

	sent       metric.Int64Counter
	consumed   metric.Int64ObservableCounter
	process    metric.Float64Histogram
	finished   metric.Int64ObservableCounter
	wait       metric.Float64Histogram
	rescued    metric.Int64Counter
	relayed    metric.Int64Counter
	reconnects metric.Int64Counter
	relayLag   metric.Float64Gauge

	// The hot path's series, built on a kind's first job: a job then costs one lookup
	// in each of its three calls and no allocation for its labels. The two counters of
	// the hot path total here and the meter reads the totals when it collects (observe),
	// so a job adds to them without the SDK's work per measurement.
	kinds    sync.Map // kindKey -> *kindSeries
	outcomes sync.Map // outcomeKey -> *outcomeSeries
}

// kindKey labels what a start and a handler's span record: the job's queue and kind.
type kindKey struct{ queue, kind string }

// kindSeries is what jobs of one kindKey record on their start and in their span.
type kindSeries struct {
	consumed    atomic.Int64
	consumedSet metric.MeasurementOption
	wait        metric.MeasurementOption
	spanName    string
	spanAttrs   trace.SpanStartOption // the span's attributes but the job's own
}

// outcomeKey labels what an attempt's end records.
type outcomeKey struct{ queue, kind, outcome, class string }

// outcomeSeries is what attempts of one outcomeKey record when they end.
type outcomeSeries struct {
	finished    atomic.Int64
	finishedSet metric.MeasurementOption
	process     metric.MeasurementOption
}

var (
	_ runtime.Hook        = (*Instrumentation)(nil)
	_ runtime.Middleware  = (*Instrumentation)(nil)
	_ runtime.EnqueueHook = (*Instrumentation)(nil)
)

// New returns an Instrumentation recording to the providers of opts.
func New(opts Options) (*Instrumentation, error) {
	if opts.TracerProvider == nil {
		opts.TracerProvider = otel.GetTracerProvider()
	}
	if opts.MeterProvider == nil {
		opts.MeterProvider = otel.GetMeterProvider()
	}
	if opts.Propagator == nil {
		opts.Propagator = propagation.TraceContext{}
	}
	m := opts.MeterProvider.Meter(Name)
	in := &Instrumentation{tracer: opts.TracerProvider.Tracer(Name), prop: opts.Propagator}
	var errs [9]error
	in.sent, errs[0] = m.Int64Counter("messaging.client.sent.messages", metric.WithUnit("{message}"),
		metric.WithDescription("Jobs enqueued."))
	in.consumed, errs[1] = m.Int64ObservableCounter("messaging.client.consumed.messages", metric.WithUnit("{message}"),
		metric.WithDescription("Jobs handed to a handler (one per attempt)."))
	in.process, errs[2] = m.Float64Histogram("messaging.process.duration", metric.WithUnit("s"),
		metric.WithDescription("Time a handler took per attempt."),
		metric.WithExplicitBucketBoundaries(.005, .01, .025, .05, .075, .1, .25, .5, .75, 1, 2.5, 5, 7.5, 10))
	in.finished, errs[3] = m.Int64ObservableCounter("jobc.jobs.finished", metric.WithUnit("{job}"),
		metric.WithDescription("Attempts finished, by outcome and error class."))
	in.wait, errs[4] = m.Float64Histogram("jobc.job.wait", metric.WithUnit("s"),
		metric.WithDescription("Time jobs were available before their claim."),
		metric.WithExplicitBucketBoundaries(.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600))
	in.rescued, errs[5] = m.Int64Counter("jobc.jobs.rescued", metric.WithUnit("{job}"),
		metric.WithDescription("Jobs whose lease had expired that a rescuer returned, failed or cancelled."))
	in.relayed, errs[6] = m.Int64Counter("jobc.relay.events", metric.WithUnit("{event}"),
		metric.WithDescription("Events a relay claimed, by outcome: published, retried, failed, lost (taken over after the lease expired)."))
	in.relayLag, errs[7] = m.Float64Gauge("jobc.relay.lag", metric.WithUnit("s"),
		metric.WithDescription("Age of the outbox's oldest unpublished event, as a relay last read it; 0 when none is pending."))
	in.reconnects, errs[8] = m.Int64Counter("jobc.worker.reconnects", metric.WithUnit("{reconnect}"),
		metric.WithDescription("Times a worker closed all of its own database connections to open new ones: their server turned read-only or was shutting down, a connection broke, or the server was silent for a statement timeout."))
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if _, err := m.RegisterCallback(in.observe, in.consumed, in.finished); err != nil {
		return nil, err
	}
	return in, nil
}

// observe reports the totals of the hot path's counters to the meter.
func (in *Instrumentation) observe(_ context.Context, o metric.Observer) error {
	in.kinds.Range(func(_, v any) bool {
		s := v.(*kindSeries)
		o.ObserveInt64(in.consumed, s.consumed.Load(), s.consumedSet)
		return true
	})
	in.outcomes.Range(func(_, v any) bool {
		s := v.(*outcomeSeries)
		o.ObserveInt64(in.finished, s.finished.Load(), s.finishedSet)
		return true
	})
	return nil
}

// kind returns the series of jobs of queue and kind, building them on first use.
func (in *Instrumentation) kind(queue, kind string) *kindSeries {
	k := kindKey{queue, kind}
	if s, ok := in.kinds.Load(k); ok {
		return s.(*kindSeries)
	}
	base, process := kindAttributes(queue, kind)
	s, _ := in.kinds.LoadOrStore(k, &kindSeries{
		consumedSet: metric.WithAttributeSet(attribute.NewSet(process...)),
		wait:        metric.WithAttributeSet(attribute.NewSet(base...)),
		spanName:    "process " + queue,
		spanAttrs:   trace.WithAttributes(process...),
	})
	return s.(*kindSeries)
}

// kindAttributes returns the attributes of jobs of queue and kind (base), and of their
// processing (base and the messaging operation), each a list of its own.
func kindAttributes(queue, kind string) (base, process []attribute.KeyValue) {
	base = []attribute.KeyValue{systemJobc, keyDestination.String(queue), keyKind.String(kind)}
	process = append(base[:len(base):len(base)], keyOperationName.String("process"), keyOperationType.String("process"))
	return base, process
}

// outcome returns the series of attempts that ended so, building them on first use.
func (in *Instrumentation) outcome(k outcomeKey) *outcomeSeries {
	if s, ok := in.outcomes.Load(k); ok {
		return s.(*outcomeSeries)
	}
	base, process := kindAttributes(k.queue, k.kind)
	if k.class != "" {
		process = append(process, keyErrorType.String(k.class))
	}
	finished := append(base, keyOutcome.String(k.outcome), keyClass.String(k.class))
	s, _ := in.outcomes.LoadOrStore(k, &outcomeSeries{
		finishedSet: metric.WithAttributeSet(attribute.NewSet(finished...)),
		process:     metric.WithAttributeSet(attribute.NewSet(process...)),
	})
	return s.(*outcomeSeries)
}

// OnEvent records the metrics of e.
func (in *Instrumentation) OnEvent(ctx context.Context, e runtime.Event) {
	switch e.Kind {
	case runtime.EventStart:
		s := in.kind(e.Queue, e.JobKind)
		s.consumed.Add(1)
		in.wait.Record(ctx, e.Wait.Seconds(), s.wait)
	case runtime.EventFinish:
		s := in.outcome(outcomeKey{e.Queue, e.JobKind, e.Outcome, e.ErrorClass})
		s.finished.Add(1)
		in.process.Record(ctx, e.RunTime.Seconds(), s.process)
	case runtime.EventRescue:
		in.rescued.Add(ctx, int64(e.Count), metric.WithAttributes(systemJobc, keyDestination.String(e.Queue)))
	case runtime.EventReconnect:
		in.reconnects.Add(ctx, 1, metric.WithAttributes(systemJobc))
	case runtime.EventMaintenance:
		// A relay's (relay.Config.Hooks): a batch, or the outbox's stats.
		switch r := e.Result.(type) {
		case relay.BatchResult:
			for _, o := range []struct {
				name string
				n    int
			}{{"published", r.Published}, {"retried", r.Retried}, {"failed", r.Failed}, {"lost", r.Lost}} {
				if o.n > 0 {
					in.relayed.Add(ctx, int64(o.n), metric.WithAttributes(systemJobc, keyRelayOutcome.String(o.name)))
				}
			}
		case relay.Stats:
			if e.Err == nil {
				in.relayLag.Record(ctx, r.Lag.Seconds(), metric.WithAttributes(systemJobc))
			}
		}
	}
}

// WrapEnqueue runs the insert in a producer span and stores the span's trace context
// in the jobs' metadata.
func (in *Instrumentation) WrapEnqueue(ctx context.Context, e *runtime.EnqueueRequest, insert func(ctx context.Context) error) error {
	attrs := []attribute.KeyValue{systemJobc, keyDestination.String(e.Queue), keyKind.String(e.Kind),
		keyOperationName.String("enqueue"), keyOperationType.String("send")}
	if e.Count > 1 {
		attrs = append(attrs, keyBatchCount.Int(e.Count))
	}
	ctx, span := in.tracer.Start(ctx, "enqueue "+e.Queue, trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(attrs...))
	defer span.End()
	carrier := propagation.MapCarrier{}
	in.prop.Inject(ctx, carrier)
	if len(carrier) > 0 {
		e.Metadata[MetadataKey] = map[string]string(carrier)
	}
	err := insert(ctx)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		return err
	}
	if len(e.IDs) == 1 {
		span.SetAttributes(keyMessageID.String(strconv.FormatInt(e.IDs[0], 10)))
	}
	in.sent.Add(ctx, int64(e.Count), metric.WithAttributes(systemJobc, keyDestination.String(e.Queue), keyKind.String(e.Kind),
		keyOperationName.String("enqueue"), keyOperationType.String("send")))
	return nil
}

// WrapHandler runs the handler in a consumer span, child of the span that enqueued the
// job when its metadata carries one.
func (in *Instrumentation) WrapHandler(ctx context.Context, job *runtime.Job, next func(ctx context.Context) error) error {
	ctx = in.prop.Extract(ctx, metadataCarrier(job.Metadata))
	s := in.kind(job.Queue, job.Kind)
	ctx, span := in.tracer.Start(ctx, s.spanName, consumerSpan, s.spanAttrs)
	// The job's own attributes only on a span that records: an unsampled job costs no
	// attribute list. (A sampler sees the kind's attributes, which it may sample by.)
	if span.IsRecording() {
		span.SetAttributes(keyMessageID.String(strconv.FormatInt(job.ID, 10)), keyAttempt.Int(job.Attempt))
	}
	defer span.End()
	err := next(ctx)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	return err
}

// traceContext is the trace context WrapEnqueue stores in job metadata, read into a
// struct rather than a map: one fewer allocation per job.
type traceContext struct {
	Traceparent string `json:"traceparent"`
	Tracestate  string `json:"tracestate,omitempty"`
}

// Get, Set and Keys make a traceContext a propagation.TextMapCarrier.
func (c *traceContext) Get(key string) string {
	switch key {
	case "traceparent":
		return c.Traceparent
	case "tracestate":
		return c.Tracestate
	}
	return ""
}

func (c *traceContext) Set(key, value string) {
	switch key {
	case "traceparent":
		c.Traceparent = value
	case "tracestate":
		c.Tracestate = value
	}
}

func (c *traceContext) Keys() []string { return []string{"traceparent", "tracestate"} }

// metadataCarrier reads the trace context stored by WrapEnqueue from job metadata; a
// job enqueued without it (or with unreadable metadata) starts a trace of its own. It
// scans for the two strings rather than decoding the whole metadata, which would cost
// more than the span itself; their values (hex digits, dashes, list members) need no
// unescaping, and anything unexpected falls back to decoding.
func metadataCarrier(meta json.RawMessage) propagation.TextMapCarrier {
	at := bytes.Index(meta, []byte(`"`+MetadataKey+`"`))
	if at < 0 {
		return &traceContext{}
	}
	obj := meta[at:]
	var tc traceContext
	var ok bool
	if tc.Traceparent, ok = stringAfter(obj, "traceparent"); ok {
		if ts, found := stringAfter(obj, "tracestate"); found {
			tc.Tracestate = ts
		}
		return &tc
	}
	var md struct {
		Trace traceContext `json:"otel_trace_context"`
	}
	if json.Unmarshal(meta, &md) != nil {
		return &traceContext{}
	}
	return &md.Trace
}

// stringAfter returns the string value of key in b, when it is a plain one (no escapes).
func stringAfter(b []byte, key string) (string, bool) {
	i := bytes.Index(b, []byte(`"`+key+`"`))
	if i < 0 {
		return "", false
	}
	b = bytes.TrimLeft(b[i+len(key)+2:], " \t\n\r")
	if len(b) == 0 || b[0] != ':' {
		return "", false
	}
	b = bytes.TrimLeft(b[1:], " \t\n\r")
	if len(b) == 0 || b[0] != '"' {
		return "", false
	}
	end := bytes.IndexByte(b[1:], '"')
	if end < 0 || bytes.IndexByte(b[1:end+1], '\\') >= 0 {
		return "", false
	}
	return string(b[1 : end+1]), true
}
