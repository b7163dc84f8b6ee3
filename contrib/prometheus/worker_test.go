package jobcprom_test

import (
	"context"
	"errors"
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

// TestWorkerCollectorCountsJobs scrapes a running worker's endpoint: after N jobs were
// worked, the counters say N, split by outcome and error class.
func TestWorkerCollectorCountsJobs(t *testing.T) {
	t.Parallel()
	pool := testkit.MigratedSchema(t)
	ctx := context.Background()
	jt := testkit.NumberJobType(t, "resize", "images")
	coll := jobcprom.NewWorkerCollector(jobcprom.WorkerOptions{})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(coll)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	const completed, failed = 7, 3
	for i := range completed + failed {
		if _, err := runtime.Enqueue(ctx, pool, jt, payload{N: i}, runtime.WithHooks(coll)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := testkit.Config()
	cfg.ID = fmt.Sprintf("prom-%d", time.Now().UnixNano()) // its connections are named after it
	cfg.Hooks = []runtime.Hook{coll}
	cfg.VacuumDeadRows = 1 // the jobs' dead row versions pass it
	w := runtime.NewWorker(pool, cfg)
	if err := runtime.Handle(w, jt, func(_ context.Context, _ *runtime.Job, p payload) error {
		if p.N >= completed {
			return &runtime.ClassError{Class: "invalid", Err: errors.New("bad image")}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	testkit.RunWorker(t, w)

	// The pruner's first run prepared history's partitions.
	added := series("jobc_history_partitions_total", "action", "added")
	testkit.WaitFor(t, "the pruner's partitions counted", cfg.PollInterval, 20*cfg.LeaseDuration, func() bool {
		return testkit.Scrape(t, srv.URL)[added] > 0
	}, func() string { return fmt.Sprint(testkit.Scrape(t, srv.URL)) })
	done := series("jobc_jobs_finished_total", "class", "", "kind", "resize", "outcome", "completed", "queue", "images")
	bad := series("jobc_jobs_finished_total", "class", "invalid", "kind", "resize", "outcome", "failed", "queue", "images")
	var got map[string]float64
	testkit.WaitFor(t, "the counters to reach the jobs worked", cfg.PollInterval, 20*cfg.LeaseDuration, func() bool {
		got = testkit.Scrape(t, srv.URL)
		return got[done] == completed && got[bad] == failed
	}, func() string { return fmt.Sprint(got) })

	// The vacuumer vacuumed jobc_jobs, and the gauge of its dead row versions is there
	// (what it says depends on the snapshots other tests hold).
	vacuumed := series("jobc_vacuums_total", "result", "vacuumed")
	testkit.WaitFor(t, "a VACUUM counted", cfg.PollInterval, 20*cfg.LeaseDuration, func() bool {
		got = testkit.Scrape(t, srv.URL)
		return got[vacuumed] > 0
	}, func() string { return fmt.Sprint(got) })
	if dead, ok := got[series("jobc_jobs_dead_rows")]; !ok || dead < 0 {
		t.Errorf("jobc_jobs_dead_rows = %v (exported %v), want it exported", dead, ok)
	}

	checks := map[string]float64{
		series("jobc_jobs_enqueued_total", "kind", "resize", "queue", "images"):                                completed + failed,
		series("jobc_job_duration_seconds_count", "kind", "resize", "outcome", "completed", "queue", "images"): completed,
		series("jobc_job_duration_seconds_count", "kind", "resize", "outcome", "failed", "queue", "images"):    failed,
		series("jobc_job_wait_seconds_count", "kind", "resize", "queue", "images"):                             completed + failed,
	}
	// A moment later nothing more was counted: each attempt counts once.
	time.Sleep(2 * cfg.PollInterval)
	got = testkit.Scrape(t, srv.URL)
	checks[done], checks[bad] = completed, failed
	for s, want := range checks {
		if got[s] != want {
			t.Errorf("%s = %v, want %v", s, got[s], want)
		}
	}
	reconnects := series("jobc_worker_reconnects_total")
	if n, ok := got[reconnects]; !ok || n != 0 {
		t.Errorf("%s = %v (exported %v) before any connection broke, want 0", reconnects, n, ok)
	}

	// Its connections terminated (an operator's pg_terminate_backend, a restarted
	// server), the worker opens new ones, which the counter shows, and works on.
	if _, err := pool.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`,
		"jobc worker "+cfg.ID); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "a reconnect counted", cfg.PollInterval, 20*cfg.LeaseDuration, func() bool {
		got = testkit.Scrape(t, srv.URL)
		return got[reconnects] > 0
	}, func() string { return fmt.Sprint(got) })
	if _, err := runtime.Enqueue(ctx, pool, jt, payload{N: 0}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "a job worked after the reconnect", cfg.PollInterval, 20*cfg.LeaseDuration, func() bool {
		got = testkit.Scrape(t, srv.URL)
		return got[done] == completed+1
	}, func() string { return fmt.Sprint(got) })
}
