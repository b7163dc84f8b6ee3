package jobcprom_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
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

// TestDBCollectorLimits: the scrape carries each kind's and queue's flow control: the
// limits in force, the jobs waiting and running under them, their keys, and the
// share of the concurrency they use; an operator's override shows in them at the
// next read.
func TestDBCollectorLimits(t *testing.T) {
	t.Parallel()
	pool := testkit.MigratedSchema(t)
	ctx := context.Background()
	jt, err := runtime.NewJobType(runtime.JobType{
		Kind: "resize", Queue: "images", Priority: 5, MaxAttempts: 1, WriteVersion: 1,
		Versions:  []runtime.Version{{Number: 1, Schema: `{"type":"object","required":["n"],"properties":{"n":{"type":"integer"}}}`}},
		Flow:      &runtime.Flow{By: []string{"n"}, Concurrency: 1},
		QueueFlow: &runtime.Flow{Rate: runtime.Rate{Limit: 100, Per: time.Minute}},
	})
	if err != nil {
		t.Fatal(err)
	}
	const ttl = 100 * time.Millisecond
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(jobcprom.NewDBCollector(pool, jobcprom.DBOptions{TTL: ttl}))
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	release := make(chan struct{})
	cfg := testkit.Config()
	cfg.Queues = map[string]runtime.QueueConfig{"images": {MaxWorkers: 8}}
	w := runtime.NewWorker(pool, cfg)
	if err := runtime.Handle(w, jt, func(ctx context.Context, _ *runtime.Job, _ payload) error {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	testkit.RunWorker(t, w)
	t.Cleanup(func() { close(release) }) // before the worker stops
	for _, n := range []int{1, 1, 2} {
		if _, err := runtime.Enqueue(ctx, pool, jt, payload{N: n}); err != nil {
			t.Fatal(err)
		}
	}

	kind := func(name string) string { return name + `{name="resize",scope="kind"}` }
	queue := func(name string) string { return name + `{name="images",scope="queue"}` }
	var got map[string]float64
	scrapeUntil := func(what string, want map[string]float64) {
		t.Helper()
		testkit.WaitFor(t, what, cfg.PollInterval, 20*cfg.LeaseDuration, func() bool {
			time.Sleep(ttl) // a fresh read each time
			got = testkit.Scrape(t, srv.URL)
			for series, v := range want {
				if got[series] != v {
					return false
				}
			}
			return true
		}, func() string {
			var b strings.Builder
			for series := range want {
				fmt.Fprintf(&b, "%s=%v ", series, got[series])
			}
			return b.String()
		})
	}
	// One job per key runs; the second job of key 1 waits.
	scrapeUntil("a job per key running", map[string]float64{
		kind("jobc_limit_running_jobs"): 2, kind("jobc_limit_waiting_jobs"): 1, kind("jobc_limit_keys"): 2,
		kind("jobc_limit_concurrency"): 1, kind("jobc_limit_utilisation"): 1,
		queue("jobc_limit_running_jobs"): 2, queue("jobc_limit_waiting_jobs"): 1,
		queue("jobc_limit_rate_starts"): 100, queue("jobc_limit_rate_period_seconds"): 60,
	})
	for _, absent := range []string{kind("jobc_limit_rate_starts"), kind("jobc_limit_rate_period_seconds"),
		queue("jobc_limit_concurrency"), queue("jobc_limit_utilisation")} {
		if v, ok := got[absent]; ok {
			t.Errorf("%s = %v: a limit that sets none has no such series", absent, v)
		}
	}

	if err := runtime.SetLimit(ctx, pool, runtime.LimitChange{Scope: runtime.LimitKind, Name: "resize", Concurrency: 2, By: "test"}); err != nil {
		t.Fatal(err)
	}
	scrapeUntil("the override in force", map[string]float64{
		kind("jobc_limit_concurrency"): 2, kind("jobc_limit_running_jobs"): 3, kind("jobc_limit_waiting_jobs"): 0,
		kind("jobc_limit_utilisation"): 0.75,
	})
}

// TestDBCollectorWorkflows: the scrape counts running workflows by name with the age
// of the oldest, their steps by state, and failed workflows; completed ones are not
// read.
func TestDBCollectorWorkflows(t *testing.T) {
	t.Parallel()
	pool := testkit.MigratedSchema(t)
	ctx := context.Background()
	step := testkit.NumberJobType(t, "wf_step", "wf")
	object := []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}}
	wt := runtime.MustWorkflowType(runtime.WorkflowType{Name: "approve", InputWriteVersion: 1, InputVersions: object,
		Signals: []runtime.Signal{{Name: "ok", WriteVersion: 1, Versions: object}},
		Steps: []runtime.Step{
			{Name: "gate", Wait: &runtime.Wait{Signal: "ok"}},
			{Name: "work", Job: step, After: []string{"gate"}, Map: map[string]string{"n": "input.n"}},
		}})
	var ids []runtime.WorkflowID
	for range 3 {
		id, err := runtime.StartWorkflow(ctx, pool, wt, map[string]int{"n": 1})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := runtime.SignalWorkflow(ctx, pool, wt, ids[0], "ok", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if err := runtime.CancelWorkflow(ctx, pool, ids[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE jobc_workflows SET state = 'failed' WHERE id = $1`, ids[1]); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(jobcprom.NewDBCollector(pool, jobcprom.DBOptions{Timeout: 5 * time.Second}))
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	got := testkit.Scrape(t, srv.URL)
	for series, want := range map[string]float64{
		`jobc_workflows{state="running",workflow="approve"}`:                    2,
		`jobc_workflows{state="failed",workflow="approve"}`:                     1,
		`jobc_workflow_steps{state="completed",step="gate",workflow="approve"}`: 1,
		`jobc_workflow_steps{state="running",step="gate",workflow="approve"}`:   1,
		`jobc_workflow_steps{state="running",step="work",workflow="approve"}`:   1,
		`jobc_workflow_steps{state="waiting",step="work",workflow="approve"}`:   1,
	} {
		if v, ok := got[series]; !ok || v != want {
			t.Errorf("%s = %v (present: %v), want %v", series, v, ok, want)
		}
	}
	if age, ok := got[`jobc_workflow_oldest_running_age_seconds{workflow="approve"}`]; !ok || age <= 0 {
		t.Errorf("the oldest running workflow's age: %v (present: %v), want more than 0", age, ok)
	}
}
