package jobcprom

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/relay"
)

// DBCollector exports what the database holds: jobs by queue, kind and state, each
// queue's oldest available age and pause, the live workers, and the outbox's pending
// and failed events with the relay lag (relay.ReadStats). It reads through the
// runtime's functions (runtime.ListQueueStats, runtime.CountUnfinishedByVersion,
// runtime.ListWorkers) when a scrape finds its last read older than DBOptions.TTL, so
// any number of scrapers cost at most one read per TTL, and never a query per job.
// When a read fails, the scrape carries jobc_database_up 0 and none of the other
// database gauges (rather than stale ones that would hide a growing backlog).
type DBCollector struct {
	dbtx runtime.DBTX
	opts DBOptions

	mu      sync.Mutex // one read at a time; guards the cache
	readAt  time.Time
	metrics []prometheus.Metric

	jobs, oldest, paused, workers, up, readTime *prometheus.Desc
	events, relayLag                            *prometheus.Desc
}

var _ prometheus.Collector = (*DBCollector)(nil)

// DBOptions tunes a DBCollector; the zero value selects the defaults.
type DBOptions struct {
	// TTL is how long one read serves scrapes; default 10s.
	TTL time.Duration
	// Timeout bounds one read; default 5s.
	Timeout time.Duration
	// Logger receives failed reads; default slog.Default().
	Logger *slog.Logger
	// ConstLabels are added to every series.
	ConstLabels prometheus.Labels
}

// NewDBCollector returns a collector reading through dbtx, typically a pool.
func NewDBCollector(dbtx runtime.DBTX, opts DBOptions) *DBCollector {
	if opts.TTL <= 0 {
		opts.TTL = 10 * time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	cl := opts.ConstLabels
	return &DBCollector{
		dbtx: dbtx, opts: opts,
		jobs:     prometheus.NewDesc("jobc_jobs", "Unfinished jobs by queue, kind and state (available, scheduled, running).", []string{"queue", "kind", "state"}, cl),
		oldest:   prometheus.NewDesc("jobc_queue_oldest_available_age_seconds", "How long the oldest available job of the queue has been due; 0 when none is available.", []string{"queue"}, cl),
		paused:   prometheus.NewDesc("jobc_queue_paused", "1 when the queue is paused fleet-wide.", []string{"queue"}, cl),
		workers:  prometheus.NewDesc("jobc_workers", "Live workers (heartbeat within three leases).", nil, cl),
		up:       prometheus.NewDesc("jobc_database_up", "1 when the last read of the database gauges succeeded.", nil, cl),
		readTime: prometheus.NewDesc("jobc_database_read_seconds", "How long the last read of the database gauges took.", nil, cl),
		events:   prometheus.NewDesc("jobc_events", "Events in the outbox not yet published (pending) or failed for good (failed).", []string{"state"}, cl),
		relayLag: prometheus.NewDesc("jobc_relay_lag_seconds", "Age of the oldest unpublished event of the outbox: how far the relays are behind; 0 when none is pending.", nil, cl),
	}
}

// Describe sends the descriptors of every series the collector exports.
func (c *DBCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.jobs, c.oldest, c.paused, c.workers, c.up, c.readTime, c.events, c.relayLag} {
		ch <- d
	}
}

// Collect sends the cached gauges, reading them again first when they are older
// than the TTL.
func (c *DBCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	if time.Since(c.readAt) >= c.opts.TTL {
		c.metrics = c.read(context.Background())
		c.readAt = time.Now()
	}
	metrics := c.metrics
	c.mu.Unlock()
	for _, m := range metrics {
		ch <- m
	}
}

// read returns the gauges as the database has them now, or jobc_database_up 0.
func (c *DBCollector) read(ctx context.Context) []prometheus.Metric {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	began := time.Now()
	out, err := c.gauges(ctx)
	took := time.Since(began)
	if err != nil {
		c.opts.Logger.WarnContext(ctx, "jobcprom: reading the database gauges failed", slog.String("took", took.String()), slog.Any("err", err))
		return []prometheus.Metric{prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 0)}
	}
	return append(out,
		prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 1),
		prometheus.MustNewConstMetric(c.readTime, prometheus.GaugeValue, took.Seconds()))
}

func (c *DBCollector) gauges(ctx context.Context) ([]prometheus.Metric, error) {
	stats, err := runtime.ListQueueStats(ctx, c.dbtx)
	if err != nil {
		return nil, err
	}
	counts, err := runtime.CountUnfinishedByVersion(ctx, c.dbtx, 0)
	if err != nil {
		return nil, err
	}
	workers, err := runtime.ListWorkers(ctx, c.dbtx, 0)
	if err != nil {
		return nil, err
	}
	outbox, err := relay.ReadStats(ctx, c.dbtx)
	if err != nil {
		return nil, err
	}
	out := []prometheus.Metric{
		prometheus.MustNewConstMetric(c.events, prometheus.GaugeValue, float64(outbox.Pending), "pending"),
		prometheus.MustNewConstMetric(c.events, prometheus.GaugeValue, float64(outbox.Failed), "failed"),
		prometheus.MustNewConstMetric(c.relayLag, prometheus.GaugeValue, outbox.Lag.Seconds()),
	}
	for _, s := range stats {
		paused := 0.0
		if s.Paused {
			paused = 1
		}
		out = append(out,
			prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, s.OldestAvailableAge.Seconds(), s.Queue),
			prometheus.MustNewConstMetric(c.paused, prometheus.GaugeValue, paused, s.Queue))
	}
	// CountUnfinishedByVersion counts per payload version: sum the versions.
	type key struct{ queue, kind, state string }
	byKey := map[key]int64{}
	var order []key
	for _, vc := range counts {
		k := key{vc.Queue, vc.Kind, string(vc.State)}
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
		}
		byKey[k] += vc.Jobs
	}
	for _, k := range order {
		m, err := prometheus.NewConstMetric(c.jobs, prometheus.GaugeValue, float64(byKey[k]), k.queue, k.kind, k.state)
		if err != nil {
			return nil, fmt.Errorf("jobc_jobs{queue=%q,kind=%q}: %w", k.queue, k.kind, err)
		}
		out = append(out, m)
	}
	return append(out, prometheus.MustNewConstMetric(c.workers, prometheus.GaugeValue, float64(len(workers)))), nil
}
