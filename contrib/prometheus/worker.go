package jobcprom

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobc-dev/jobc/runtime"
)

// WorkerCollector counts a worker's jobs: a runtime.Hook for runtime.Config.Hooks and
// a runtime.EnqueueHook for runtime.WithHooks, and a prometheus.Collector of the
// resulting series. One collector may serve several workers of a process.
type WorkerCollector struct {
	finished   *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	wait       *prometheus.HistogramVec
	rescued    *prometheus.CounterVec
	enqueued   *prometheus.CounterVec
	history    *prometheus.CounterVec
	vacuums    *prometheus.CounterVec
	dead       prometheus.Gauge
	reconnects prometheus.Counter
}

var (
	_ runtime.Hook         = (*WorkerCollector)(nil)
	_ runtime.EnqueueHook  = (*WorkerCollector)(nil)
	_ prometheus.Collector = (*WorkerCollector)(nil)
)

// WorkerOptions tunes a WorkerCollector; the zero value selects the defaults.
type WorkerOptions struct {
	// DurationBuckets are the handler-time histogram's buckets in seconds; default
	// prometheus.DefBuckets (5ms to 10s).
	DurationBuckets []float64
	// WaitBuckets are the wait-time histogram's buckets in seconds; default 5ms to 1h,
	// since a backlog makes jobs wait far longer than they run.
	WaitBuckets []float64
	// ConstLabels are added to every series (e.g. the service's name).
	ConstLabels prometheus.Labels
}

// DefaultWaitBuckets are the wait-time histogram's default buckets, in seconds.
func DefaultWaitBuckets() []float64 {
	return []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600}
}

// NewWorkerCollector returns a collector with no series yet; register it, and pass it
// to the worker's Config.Hooks.
func NewWorkerCollector(opts WorkerOptions) *WorkerCollector {
	if opts.DurationBuckets == nil {
		opts.DurationBuckets = prometheus.DefBuckets
	}
	if opts.WaitBuckets == nil {
		opts.WaitBuckets = DefaultWaitBuckets()
	}
	return &WorkerCollector{
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "jobc_jobs_finished_total",
			Help:        "Attempts of jobs finished by this process, by outcome (completed, retried, failed, cancelled, snoozed, released) and error class (empty for none).",
			ConstLabels: opts.ConstLabels,
		}, []string{"queue", "kind", "outcome", "class"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:        "jobc_job_duration_seconds",
			Help:        "Time the handlers of this process took per attempt, by outcome.",
			Buckets:     opts.DurationBuckets,
			ConstLabels: opts.ConstLabels,
		}, []string{"queue", "kind", "outcome"}),
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:        "jobc_job_wait_seconds",
			Help:        "Time jobs were available before this process claimed them.",
			Buckets:     opts.WaitBuckets,
			ConstLabels: opts.ConstLabels,
		}, []string{"queue", "kind"}),
		rescued: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "jobc_jobs_rescued_total",
			Help:        "Jobs whose lease had expired (their worker vanished) that this process's rescuer returned, failed or cancelled.",
			ConstLabels: opts.ConstLabels,
		}, []string{"queue"}),
		enqueued: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "jobc_jobs_enqueued_total",
			Help:        "Jobs enqueued by this process through runtime.WithHooks (duplicates of a unique job included).",
			ConstLabels: opts.ConstLabels,
		}, []string{"queue", "kind"}),
		history: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jobc_history_partitions_total",
			Help: "Partitions of finished jobs' history this process's pruner added ahead, dropped past retention, " +
				"and deferred: past retention but left for a later run, as the drop waited too long for its lock " +
				"(a long transaction reading history holds it off).",
			ConstLabels: opts.ConstLabels,
		}, []string{"action"}),
		vacuums: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jobc_vacuums_total",
			Help: "Runs of this process's vacuumer that vacuumed jobc_jobs, and that were past the threshold but " +
				"deferred (the last VACUUM was recent for its duration, or another worker was vacuuming).",
			ConstLabels: opts.ConstLabels,
		}, []string{"result"}),
		dead: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "jobc_jobs_dead_rows",
			Help: "Dead row versions in jobc_jobs as PostgreSQL's statistics counted them at this process's last " +
				"vacuumer run (after its VACUUM, if it ran one): what stays while a snapshot is held.",
			ConstLabels: opts.ConstLabels,
		}),
		reconnects: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "jobc_worker_reconnects_total",
			Help: "Times this process's workers closed all of their own database connections to open new ones: " +
				"their server turned read-only or was shutting down, a connection broke, or the server was silent " +
				"for a statement timeout.",
			ConstLabels: opts.ConstLabels,
		}),
	}
}

// OnEvent counts e. It does not block: a counter increment or a histogram observation.
func (c *WorkerCollector) OnEvent(_ context.Context, e runtime.Event) {
	switch e.Kind {
	case runtime.EventStart:
		c.wait.WithLabelValues(e.Queue, e.JobKind).Observe(e.Wait.Seconds())
	case runtime.EventFinish:
		c.finished.WithLabelValues(e.Queue, e.JobKind, e.Outcome, e.ErrorClass).Inc()
		c.duration.WithLabelValues(e.Queue, e.JobKind, e.Outcome).Observe(e.RunTime.Seconds())
	case runtime.EventRescue:
		c.rescued.WithLabelValues(e.Queue).Add(float64(e.Count))
	case runtime.EventMaintenance:
		if r, ok := e.Result.(runtime.PrunerResult); ok {
			c.history.WithLabelValues("added").Add(float64(r.Added))
			c.history.WithLabelValues("dropped").Add(float64(r.Dropped))
			c.history.WithLabelValues("deferred").Add(float64(r.Deferred))
		}
		if r, ok := e.Result.(runtime.VacuumerResult); ok && !r.NotPermitted && e.Err == nil {
			dead := r.Dead
			if r.Vacuumed {
				c.vacuums.WithLabelValues("vacuumed").Inc()
				dead = r.DeadAfter
			} else if r.Deferred {
				c.vacuums.WithLabelValues("deferred").Inc()
			}
			c.dead.Set(float64(dead))
		}
	case runtime.EventReconnect:
		c.reconnects.Inc()
	}
}

// WrapEnqueue counts the jobs of an enqueue that succeeded.
func (c *WorkerCollector) WrapEnqueue(ctx context.Context, e *runtime.EnqueueRequest, insert func(ctx context.Context) error) error {
	err := insert(ctx)
	if err == nil {
		c.enqueued.WithLabelValues(e.Queue, e.Kind).Add(float64(e.Count))
	}
	return err
}

// Describe sends the descriptors of every series the collector exports.
func (c *WorkerCollector) Describe(ch chan<- *prometheus.Desc) {
	c.finished.Describe(ch)
	c.duration.Describe(ch)
	c.wait.Describe(ch)
	c.rescued.Describe(ch)
	c.enqueued.Describe(ch)
	c.history.Describe(ch)
	c.vacuums.Describe(ch)
	c.dead.Describe(ch)
	c.reconnects.Describe(ch)
}

// Collect sends the current value of every series.
func (c *WorkerCollector) Collect(ch chan<- prometheus.Metric) {
	c.finished.Collect(ch)
	c.duration.Collect(ch)
	c.wait.Collect(ch)
	c.rescued.Collect(ch)
	c.enqueued.Collect(ch)
	c.history.Collect(ch)
	c.vacuums.Collect(ch)
	c.dead.Collect(ch)
	c.reconnects.Collect(ch)
}
