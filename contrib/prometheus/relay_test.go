package jobcprom_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	jobcprom "github.com/jobc-dev/jobc/contrib/prometheus"
	"github.com/jobc-dev/jobc/internal/testkit"
	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/relay"
)

// poisonFirst confirms every message but the first, which it fails for good.
type poisonFirst struct{}

func (poisonFirst) Publish(_ context.Context, msgs []relay.Message) []error {
	errs := make([]error, len(msgs))
	errs[0] = relay.Poison(errors.New("too large"))
	return errs
}

func (poisonFirst) Close() error { return nil }

// TestRelayCollector: a relay batch's outcomes are counted by the collector in its hooks.
func TestRelayCollector(t *testing.T) {
	t.Parallel()
	pool := testkit.MigratedSchema(t)
	et := runtime.MustEventType(runtime.EventType{Name: "order_paid", Subject: "orders.paid", Relay: true, WriteVersion: 1,
		Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}}})
	if _, err := runtime.PublishMany(t.Context(), pool, et, []map[string]int{{"n": 1}, {"n": 2}, {"n": 3}}); err != nil {
		t.Fatal(err)
	}
	c := jobcprom.NewRelayCollector(nil)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	r, err := relay.New(pool, relay.Config{Sink: poisonFirst{}, Events: []*runtime.EventType{et}, Hooks: []runtime.Hook{c}, Logger: testkit.Config().Logger})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	got := testkit.Scrape(t, srv.URL)
	if got[`jobc_relay_events_total{outcome="published"}`] != 2 || got[`jobc_relay_events_total{outcome="failed"}`] != 1 || got[`jobc_relay_batch_seconds_count{result="ok"}`] != 1 {
		t.Errorf("relay series: %v; want 2 published, 1 failed, 1 batch", got)
	}
}
