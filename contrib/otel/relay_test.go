package jobcotel_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	jobcotel "github.com/jobc-dev/jobc/contrib/otel"
	"github.com/jobc-dev/jobc/internal/testkit"
	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/relay"
)

// poisonOne confirms every message but event id's, which it fails for good. (Not
// the first of each batch: the relay's two claimers may split the events into two
// batches, and then two would fail.)
type poisonOne struct{ id int64 }

func (p poisonOne) Publish(_ context.Context, msgs []relay.Message) []error {
	errs := make([]error, len(msgs))
	for i, m := range msgs {
		if m.ID == p.id {
			errs[i] = relay.Poison(errors.New("too large"))
		}
	}
	return errs
}

func (poisonOne) Close() error { return nil }

// TestRelayMetrics: in a relay's hooks, the instrumentation counts the events by
// outcome and records the relay lag the relay reads.
func TestRelayMetrics(t *testing.T) {
	t.Parallel()
	pool := testkit.MigratedSchema(t)
	reader := sdkmetric.NewManualReader()
	in, err := jobcotel.New(jobcotel.Options{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
	if err != nil {
		t.Fatal(err)
	}
	et := runtime.MustEventType(runtime.EventType{Name: "order_paid", Subject: "orders.paid", Relay: true, WriteVersion: 1,
		Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}}})
	ps, err := runtime.PublishMany(t.Context(), pool, et, []map[string]int{{"n": 1}, {"n": 2}, {"n": 3}, {"n": 4}})
	if err != nil {
		t.Fatal(err)
	}
	// Every event a minute old; the last one not due for an hour, so it stays pending
	// and the lag is its age whenever the relay reads it.
	if _, err := pool.Exec(t.Context(), `UPDATE jobc_events SET created_at = now() - interval '1 minute'`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(t.Context(), `UPDATE jobc_events SET available_at = now() + interval '1 hour' WHERE id = $1`, ps[3].ID); err != nil {
		t.Fatal(err)
	}
	cfg := relay.Config{Sink: poisonOne{id: ps[0].ID}, Events: []*runtime.EventType{et}, Hooks: []runtime.Hook{in}, Logger: testkit.Config().Logger,
		PollInterval: 10 * time.Millisecond, StatsInterval: time.Hour} // one stats read, at the start
	r, err := relay.New(pool, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan error)
	go func() { ran <- r.Run(ctx) }()
	counts := map[string]int64{}
	var lag float64
	testkit.WaitFor(t, "the relay's batch counted", cfg.PollInterval, 500*cfg.PollInterval, func() bool {
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		clear(counts)
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				switch d := m.Data.(type) {
				case metricdata.Sum[int64]:
					for _, p := range d.DataPoints {
						o, _ := p.Attributes.Value("jobc.relay.outcome")
						counts[m.Name+"/"+o.AsString()] += p.Value
					}
				case metricdata.Gauge[float64]:
					for _, p := range d.DataPoints {
						lag = p.Value
					}
				}
			}
		}
		return counts["jobc.relay.events/published"] == 2 && counts["jobc.relay.events/failed"] == 1 && lag > 0
	}, func() string { return fmt.Sprintf("counts %v, lag %v", counts, lag) })
	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if lag < 60 || lag > 120 {
		t.Errorf("jobc.relay.lag = %v, want about 60s (the events' age when the relay read the stats)", lag)
	}
}
