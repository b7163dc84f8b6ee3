package jobcprom_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	jobcprom "github.com/jobc-dev/jobc/contrib/prometheus"
	"github.com/jobc-dev/jobc/internal/testkit"
	"github.com/jobc-dev/jobc/runtime"
)

// TestDBCollectorWhilePaused: while a queue is paused its jobs wait, the scrape says
// so (paused 1, the jobs available) and the oldest-available age grows from one read
// to the next; reads are cached for the TTL; after a resume the jobs are worked.
func TestDBCollectorWhilePaused(t *testing.T) {
	t.Parallel()
	pool := testkit.MigratedSchema(t)
	ctx := context.Background()
	jt := testkit.NumberJobType(t, "resize", "images")
	const ttl = 200 * time.Millisecond
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(jobcprom.NewDBCollector(pool, jobcprom.DBOptions{TTL: ttl, Timeout: 5 * time.Second}))
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	if err := runtime.PauseQueue(ctx, pool, "images"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := runtime.Enqueue(ctx, pool, jt, payload{N: i}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := testkit.Config()
	w := runtime.NewWorker(pool, cfg)
	if err := runtime.Handle(w, jt, func(context.Context, *runtime.Job, payload) error { return nil }); err != nil {
		t.Fatal(err)
	}
	testkit.RunWorker(t, w)

	oldest := series("jobc_queue_oldest_available_age_seconds", "queue", "images")
	available := series("jobc_jobs", "kind", "resize", "queue", "images", "state", "available")
	paused := series("jobc_queue_paused", "queue", "images")
	var first map[string]float64
	testkit.WaitFor(t, "the worker in the registry", cfg.PollInterval, 20*cfg.LeaseDuration, func() bool {
		time.Sleep(ttl) // a fresh read each time
		first = testkit.Scrape(t, srv.URL)
		return first["jobc_workers"] == 1
	}, func() string { return fmt.Sprint(first) })
	if first[paused] != 1 || first[available] != 3 || first["jobc_database_up"] != 1 {
		t.Fatalf("paused queue: %s=%v %s=%v up=%v, want paused 1 and 3 available", paused, first[paused], available, first[available], first["jobc_database_up"])
	}
	if cached := testkit.Scrape(t, srv.URL); cached[oldest] != first[oldest] {
		t.Errorf("a scrape within the TTL read again: oldest %v then %v", first[oldest], cached[oldest])
	}
	// Several poll intervals: a worker that claimed from the paused queue would have.
	time.Sleep(max(ttl, 4*cfg.PollInterval))
	later := testkit.Scrape(t, srv.URL)
	if later[available] != 3 {
		t.Fatalf("paused queue: %s=%v, want all 3 still available", available, later[available])
	}
	if grown := later[oldest] - first[oldest]; grown < ttl.Seconds() {
		t.Errorf("the oldest available age went from %v to %v: want it grown by at least %s", first[oldest], later[oldest], ttl)
	}

	if err := runtime.ResumeQueue(ctx, pool, "images"); err != nil {
		t.Fatal(err)
	}
	var after map[string]float64
	testkit.WaitFor(t, "the queue drained after resume", cfg.PollInterval, 20*cfg.LeaseDuration, func() bool {
		time.Sleep(ttl)
		after = testkit.Scrape(t, srv.URL)
		_, waiting := after[available]
		return !waiting && after[paused] == 0 && after[oldest] == 0
	}, func() string { return fmt.Sprint(after) })
}

// TestDBCollectorRelayLag: the scrape carries the outbox's pending and failed events
// and the relay lag, the age of the oldest pending event.
func TestDBCollectorRelayLag(t *testing.T) {
	t.Parallel()
	pool := testkit.MigratedSchema(t)
	ctx := context.Background()
	et := runtime.MustEventType(runtime.EventType{Name: "order_paid", Subject: "orders.paid", Relay: true, WriteVersion: 1,
		Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}}})
	var ids []int64
	for range 3 {
		p, err := runtime.Publish(ctx, pool, et, map[string]int{"n": 1})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	if _, err := pool.Exec(ctx, `UPDATE jobc_events SET created_at = now() - interval '90 seconds' WHERE id = $1`, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE jobc_events SET state = 'failed' WHERE id = $1`, ids[2]); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(jobcprom.NewDBCollector(pool, jobcprom.DBOptions{}))
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	got := testkit.Scrape(t, srv.URL)
	lag := got["jobc_relay_lag_seconds"]
	if got[`jobc_events{state="pending"}`] != 2 || got[`jobc_events{state="failed"}`] != 1 || lag < 90 || lag > 90+60 {
		t.Errorf("outbox series: pending %v, failed %v, lag %v; want 2, 1 and about 90s", got[`jobc_events{state="pending"}`], got[`jobc_events{state="failed"}`], lag)
	}
}
