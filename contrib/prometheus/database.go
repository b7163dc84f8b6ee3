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
// queue's oldest available age and pause, the live workers, the flow control of each
// kind and queue (the limits in force, the jobs waiting and running under them, their
// keys and how much of the concurrency they use), and the outbox's pending and failed
// events with the relay lag (relay.ReadStats). It reads through the runtime's
// functions (runtime.ListQueueStats, runtime.CountUnfinishedByVersion,
// runtime.ListWorkers, runtime.ListLimits) when a scrape finds its last read older than DBOptions.TTL, so
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
	workflows, workflowAge, workflowSteps       *prometheus.Desc
	// Flow control, by scope (kind or queue) and name.
	limitWaiting, limitRunning, limitKeys, limitConcurrency, limitRate, limitRatePeriod, limitUtilisation *prometheus.Desc
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
		workflows: prometheus.NewDesc("jobc_workflows", "Running workflows, and failed ones retention keeps, by workflow name and state.",
			[]string{"workflow", "state"}, cl),
		workflowAge: prometheus.NewDesc("jobc_workflow_oldest_running_age_seconds", "How long the oldest running workflow of the name has run.",
			[]string{"workflow"}, cl),
		workflowSteps: prometheus.NewDesc("jobc_workflow_steps", "The steps of running workflows by workflow name, step and state (waiting, running, completed, failed, cancelled).",
			[]string{"workflow", "step", "state"}, cl),
		events:   prometheus.NewDesc("jobc_events", "Events in the outbox not yet published (pending) or failed for good (failed).", []string{"state"}, cl),
		relayLag: prometheus.NewDesc("jobc_relay_lag_seconds", "Age of the oldest unpublished event of the outbox: how far the relays are behind; 0 when none is pending.", nil, cl),

		limitWaiting: prometheus.NewDesc("jobc_limit_waiting_jobs", "Available jobs under the flow control of a kind or queue: work held back by limits, or waiting its turn.", limitLabels, cl),
		limitRunning: prometheus.NewDesc("jobc_limit_running_jobs", "Running jobs under the flow control of a kind or queue.", limitLabels, cl),
		limitKeys:    prometheus.NewDesc("jobc_limit_keys", "Flow keys (by-field values) with available or running jobs, of a kind or queue.", limitLabels, cl),
		limitConcurrency: prometheus.NewDesc("jobc_limit_concurrency", "The concurrency limit in force (the operator's override, else the spec's): running jobs per key; absent without one.",
			limitLabels, cl),
		limitRate: prometheus.NewDesc("jobc_limit_rate_starts", "The rate limit in force: starts per key in any window of jobc_limit_rate_period_seconds; absent without one.",
			limitLabels, cl),
		limitRatePeriod: prometheus.NewDesc("jobc_limit_rate_period_seconds", "The window of the rate limit in force; absent without one.", limitLabels, cl),
		limitUtilisation: prometheus.NewDesc("jobc_limit_utilisation",
			"Running jobs over what the concurrency limit in force allows (per key with work when the limit has by fields; a sequence allows one per key): 1 when at the limit; absent without a concurrency limit or a sequence.",
			limitLabels, cl),
	}
}

// Describe sends the descriptors of every series the collector exports.
func (c *DBCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.jobs, c.oldest, c.paused, c.workers, c.up, c.readTime, c.events, c.relayLag,
		c.workflows, c.workflowAge, c.workflowSteps,
		c.limitWaiting, c.limitRunning, c.limitKeys, c.limitConcurrency, c.limitRate, c.limitRatePeriod, c.limitUtilisation} {
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
	limits, err := runtime.ListLimits(ctx, c.dbtx)
	if err != nil {
		return nil, err
	}
	workflows, steps, err := runtime.CountWorkflows(ctx, c.dbtx)
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
	for _, w := range workflows {
		out = append(out, prometheus.MustNewConstMetric(c.workflows, prometheus.GaugeValue, float64(w.Workflows), w.Workflow, string(w.State)))
		if w.State == runtime.WorkflowRunning {
			out = append(out, prometheus.MustNewConstMetric(c.workflowAge, prometheus.GaugeValue, w.OldestRunning.Seconds(), w.Workflow))
		}
	}
	for _, s := range steps {
		out = append(out, prometheus.MustNewConstMetric(c.workflowSteps, prometheus.GaugeValue, float64(s.Steps), s.Workflow, s.Step, string(s.State)))
	}
	for _, l := range limits {
		ms, err := c.limitGauges(l)
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
	}
	return append(out, prometheus.MustNewConstMetric(c.workers, prometheus.GaugeValue, float64(len(workers)))), nil
}

// limitLabels name a limit: its scope (kind or queue) and the kind's or queue's name.
var limitLabels = []string{"scope", "name"}

// allowedRunning is how many jobs l lets run at once now: its concurrency (one for a
// sequence) per key that has work when it has by fields, else for the kind or queue
// as a whole; 0 when it sets no concurrency.
func allowedRunning(l runtime.Limit) int64 {
	perKey := int64(l.Effective.Concurrency)
	if l.Sequence {
		perKey = 1
	}
	if len(l.By) == 0 {
		return perKey
	}
	return perKey * max(l.Keys, 1)
}

// limitGauges are the series of one kind's or queue's flow control.
func (c *DBCollector) limitGauges(l runtime.Limit) ([]prometheus.Metric, error) {
	type gauge struct {
		desc  *prometheus.Desc
		value float64
	}
	gs := []gauge{{c.limitWaiting, float64(l.Waiting)}, {c.limitRunning, float64(l.Running)}, {c.limitKeys, float64(l.Keys)}}
	if n := l.Effective.Concurrency; n > 0 {
		gs = append(gs, gauge{c.limitConcurrency, float64(n)})
	}
	if r := l.Effective.Rate; !r.IsZero() {
		gs = append(gs, gauge{c.limitRate, float64(r.Limit)}, gauge{c.limitRatePeriod, r.Per.Seconds()})
	}
	if allowed := allowedRunning(l); allowed > 0 {
		gs = append(gs, gauge{c.limitUtilisation, float64(l.Running) / float64(allowed)})
	}
	out := make([]prometheus.Metric, len(gs))
	for i, g := range gs {
		m, err := prometheus.NewConstMetric(g.desc, prometheus.GaugeValue, g.value, string(l.Scope), l.Name)
		if err != nil {
			return nil, fmt.Errorf("limit %s %q: %w", l.Scope, l.Name, err)
		}
		out[i] = m
	}
	return out, nil
}
