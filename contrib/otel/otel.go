package jobcotel

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"sync"

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

var systemJobc = keySystem.String("jobc")

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

	sent     metric.Int64Counter
	consumed metric.Int64Counter
	process  metric.Float64Histogram
	finished metric.Int64Counter
	wait     metric.Float64Histogram
	rescued  metric.Int64Counter
	relayed  metric.Int64Counter
	relayLag metric.Float64Gauge

	// attrs caches the attribute sets of the hot path by their labels, so that a job
	// costs no allocation for them after its first of a kind.
	attrs sync.Map // labels -> metric.MeasurementOption
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
	var errs [8]error
	in.sent, errs[0] = m.Int64Counter("messaging.client.sent.messages", metric.WithUnit("{message}"),
		metric.WithDescription("Jobs enqueued."))
	in.consumed, errs[1] = m.Int64Counter("messaging.client.consumed.messages", metric.WithUnit("{message}"),
		metric.WithDescription("Jobs handed to a handler (one per attempt)."))
	in.process, errs[2] = m.Float64Histogram("messaging.process.duration", metric.WithUnit("s"),
		metric.WithDescription("Time a handler took per attempt."),
		metric.WithExplicitBucketBoundaries(.005, .01, .025, .05, .075, .1, .25, .5, .75, 1, 2.5, 5, 7.5, 10))
	in.finished, errs[3] = m.Int64Counter("jobc.jobs.finished", metric.WithUnit("{job}"),
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
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return in, nil
}

type labels struct {
	what                        uint8 // which instrument the set is for
	queue, kind, outcome, class string
}

const (
	forConsumed uint8 = iota
	forProcess
	forFinished
	forWait
)

// set returns the cached measurement option for l, building it on first use.
func (in *Instrumentation) set(l labels) metric.MeasurementOption {
	if o, ok := in.attrs.Load(l); ok {
		return o.(metric.MeasurementOption)
	}
	kv := []attribute.KeyValue{systemJobc, keyDestination.String(l.queue), keyKind.String(l.kind)}
	switch l.what {
	case forConsumed, forProcess:
		kv = append(kv, keyOperationName.String("process"), keyOperationType.String("process"))
		if l.what == forProcess && l.class != "" {
			kv = append(kv, keyErrorType.String(l.class))
		}
	case forFinished:
		kv = append(kv, keyOutcome.String(l.outcome), keyClass.String(l.class))
	}
	o, _ := in.attrs.LoadOrStore(l, metric.WithAttributeSet(attribute.NewSet(kv...)))
	return o.(metric.MeasurementOption)
}

// OnEvent records the metrics of e.
func (in *Instrumentation) OnEvent(ctx context.Context, e runtime.Event) {
	switch e.Kind {
	case runtime.EventStart:
		in.consumed.Add(ctx, 1, in.set(labels{what: forConsumed, queue: e.Queue, kind: e.JobKind}))
		in.wait.Record(ctx, e.Wait.Seconds(), in.set(labels{what: forWait, queue: e.Queue, kind: e.JobKind}))
	case runtime.EventFinish:
		in.process.Record(ctx, e.RunTime.Seconds(), in.set(labels{what: forProcess, queue: e.Queue, kind: e.JobKind, class: e.ErrorClass}))
		in.finished.Add(ctx, 1, in.set(labels{what: forFinished, queue: e.Queue, kind: e.JobKind, outcome: e.Outcome, class: e.ErrorClass}))
	case runtime.EventRescue:
		in.rescued.Add(ctx, int64(e.Count), metric.WithAttributes(systemJobc, keyDestination.String(e.Queue)))
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
	ctx, span := in.tracer.Start(ctx, "process "+job.Queue, trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(systemJobc, keyDestination.String(job.Queue), keyKind.String(job.Kind),
			keyOperationName.String("process"), keyOperationType.String("process"),
			keyMessageID.String(strconv.FormatInt(job.ID, 10)), keyAttempt.Int(job.Attempt)))
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
