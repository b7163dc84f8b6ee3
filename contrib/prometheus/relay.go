package jobcprom

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/relay"
)

// RelayCollector counts what a relay did: a runtime.Hook for relay.Config.Hooks and a
// prometheus.Collector of the resulting series. The relay lag, a property of the whole
// outbox rather than of one relay, is DBCollector's jobc_relay_lag_seconds.
type RelayCollector struct {
	events  *prometheus.CounterVec
	batches *prometheus.HistogramVec
}

var (
	_ runtime.Hook         = (*RelayCollector)(nil)
	_ prometheus.Collector = (*RelayCollector)(nil)
)

// NewRelayCollector returns a collector with the given constant labels; register it,
// and pass it to the relay's Config.Hooks.
func NewRelayCollector(constLabels prometheus.Labels) *RelayCollector {
	return &RelayCollector{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "jobc_relay_events_total",
			Help:        "Events this process's relay claimed, by outcome: published (the broker confirmed), retried, failed (for good), lost (another relay took them over after the lease expired).",
			ConstLabels: constLabels,
		}, []string{"outcome"}),
		batches: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:        "jobc_relay_batch_seconds",
			Help:        "Time one batch took, claim to record, by result (ok, or error when a statement failed).",
			Buckets:     prometheus.DefBuckets,
			ConstLabels: constLabels,
		}, []string{"result"}),
	}
}

// OnEvent counts a relay batch; other events pass. It does not block.
func (c *RelayCollector) OnEvent(_ context.Context, e runtime.Event) {
	if e.Kind != runtime.EventMaintenance || e.Service != "relay" {
		return
	}
	res, _ := e.Result.(relay.BatchResult)
	for outcome, n := range map[string]int{"published": res.Published, "retried": res.Retried, "failed": res.Failed, "lost": res.Lost} {
		if n > 0 {
			c.events.WithLabelValues(outcome).Add(float64(n))
		}
	}
	result := "ok"
	if e.Err != nil {
		result = "error"
	}
	c.batches.WithLabelValues(result).Observe(e.RunTime.Seconds())
}

// Describe implements prometheus.Collector.
func (c *RelayCollector) Describe(ch chan<- *prometheus.Desc) {
	c.events.Describe(ch)
	c.batches.Describe(ch)
}

// Collect implements prometheus.Collector.
func (c *RelayCollector) Collect(ch chan<- prometheus.Metric) {
	c.events.Collect(ch)
	c.batches.Collect(ch)
}
