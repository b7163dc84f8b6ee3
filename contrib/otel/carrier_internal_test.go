package jobcotel

import "testing"

// TestMetadataCarrier reads the trace context however the metadata is spaced, falls
// back to decoding when a value is escaped, and finds nothing in metadata without one.
func TestMetadataCarrier(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, c := range []struct{ name, meta, parent, state string }{
		{"jsonb spacing", `{"a": 1, "otel_trace_context": {"tracestate": "k=v", "traceparent": "` + tp + `"}}`, tp, "k=v"},
		{"compact", `{"otel_trace_context":{"traceparent":"` + tp + `"}}`, tp, ""},
		{"escaped", `{"otel_trace_context":{"traceparent":"00-4bf9\u0032"}}`, "00-4bf92", ""},
		{"another traceparent key first", `{"traceparent": "x", "otel_trace_context": {"traceparent": "` + tp + `"}}`, tp, ""},
		{"none", `{"traceparent": "x"}`, "", ""},
		{"empty", ``, "", ""},
	} {
		got := metadataCarrier([]byte(c.meta))
		if got.Get("traceparent") != c.parent || got.Get("tracestate") != c.state {
			t.Errorf("%s: traceparent %q tracestate %q, want %q %q", c.name, got.Get("traceparent"), got.Get("tracestate"), c.parent, c.state)
		}
	}
}
