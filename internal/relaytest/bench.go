package relaytest

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/relay"
)

// BenchConfig is the relay configuration of the throughput benchmarks.
func BenchConfig(sink relay.Sink) relay.Config {
	return relay.Config{Sink: sink, Logger: slog.New(slog.DiscardHandler), BatchSize: 1000, Concurrency: 4, PollInterval: 5 * time.Millisecond}
}

// BenchRelay measures relay throughput: b.N events of about 100 bytes, each ordered by
// one of keys customers, are published before the timer starts; the timer runs while a
// relay with cfg publishes them all, and the result is reported as events/s.
//
// Keys shape the figure: with many keys (most events the only pending one of theirs)
// every event a claim reads is claimable; with few keys and a deep backlog each, a
// claim takes one event per key, and one that runs while other batches are in flight
// finds the keys held by them.
func BenchRelay(b *testing.B, pool *pgxpool.Pool, subject string, cfg relay.Config, keys int) {
	b.Helper()
	ctx := b.Context()
	et := runtime.MustEventType(runtime.EventType{Name: "bench_event", Subject: subject, OrderingKey: []string{"key"}, Relay: true,
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}}})
	type payload struct {
		Key   string `json:"key"`
		N     int    `json:"n"`
		Note  string `json:"note"`
		Total int    `json:"total_cents"`
	}
	const chunk = 5000
	for start := 0; start < b.N; start += chunk {
		ps := make([]payload, min(chunk, b.N-start))
		for i := range ps {
			n := start + i
			ps[i] = payload{Key: fmt.Sprintf("customer-%d", n%keys), N: n, Note: "a payload of a realistic size, for a fair count", Total: n * 7}
		}
		if _, err := runtime.PublishMany(ctx, pool, et, ps); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE jobc_events"); err != nil {
		b.Fatal(err)
	}
	if cfg.Events == nil {
		cfg.Events = []*runtime.EventType{et}
	}
	r, err := relay.New(pool, cfg)
	if err != nil {
		b.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	b.ResetTimer()
	began := time.Now()
	go func() { done <- r.Run(runCtx) }()
	// The end is polled with the cheapest question, whether any event is pending (one
	// probe of a partial index): ReadStats counts the pending events, and doing that
	// every PollInterval kept a PostgreSQL backend busy most of the run, taking CPU
	// from the relay, the database and the broker it measures.
	for {
		var pending bool
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM jobc_events WHERE state = 'pending')`).Scan(&pending); err != nil {
			b.Fatal(err)
		}
		if !pending {
			break
		}
		time.Sleep(cfg.PollInterval)
	}
	took := time.Since(began)
	b.StopTimer()
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	var published int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM jobc_events WHERE state = 'published'`).Scan(&published); err != nil {
		b.Fatal(err)
	}
	if published != b.N {
		b.Fatalf("%d of %d events published", published, b.N)
	}
	b.ReportMetric(float64(b.N)/took.Seconds(), "events/s")
}
