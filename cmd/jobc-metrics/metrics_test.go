package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/jobc-dev/jobc/cmd/internal/clitest"
	jobcprom "github.com/jobc-dev/jobc/contrib/prometheus"
	"github.com/jobc-dev/jobc/internal/testkit"
	"github.com/jobc-dev/jobc/runtime"
)

// syncBuffer is an io.Writer the test reads while the command writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestMetricsEndpoints scrapes `jobc metrics` and a running worker's endpoint: while
// the queue is paused, jobc metrics shows the jobs waiting and the oldest-available
// age growing; after a resume the worker's counter says every job completed, and the
// waiting jobs are gone from jobc metrics.
func TestMetricsEndpoints(t *testing.T) {
	pool, url := clitest.MigratedDB(t)
	ctx := t.Context()
	jt, err := runtime.NewJobType(runtime.JobType{
		Kind: "thumbnail", Queue: "images", Priority: 5, MaxAttempts: 1, WriteVersion: 1,
		Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := runtime.PauseQueue(ctx, pool, "images"); err != nil {
		t.Fatal(err)
	}
	const n = 6
	for range n {
		if _, err := runtime.Enqueue(ctx, pool, jt, map[string]any{}); err != nil {
			t.Fatal(err)
		}
	}

	const ttl = 200 * time.Millisecond
	var out, errOut syncBuffer
	cmdCtx, stop := context.WithCancel(ctx)
	exited := make(chan int, 1)
	go func() {
		exited <- run(cmdCtx, []string{"metrics", "--addr", "127.0.0.1:0", "--ttl", ttl.String(), "--database-url", url}, &out, &errOut)
	}()
	defer func() {
		stop()
		if code := <-exited; code != 0 {
			t.Errorf("jobc metrics exited %d: %s", code, errOut.String())
		}
	}()
	addr := regexp.MustCompile(`http://(\S+)/metrics`)
	clitest.WaitFor(t, "jobc metrics to listen", 10*time.Second, func() (bool, string) {
		return addr.MatchString(out.String()), out.String() + errOut.String()
	})
	fleet := "http://" + addr.FindStringSubmatch(out.String())[1] + "/metrics"

	coll := jobcprom.NewWorkerCollector(jobcprom.WorkerOptions{})
	reg := prometheus.NewRegistry()
	reg.MustRegister(coll)
	workerSrv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer workerSrv.Close()
	cfg := runtime.Config{
		Logger: slog.New(slog.DiscardHandler), PollInterval: 50 * time.Millisecond,
		LeaseDuration: 5 * time.Second, Hooks: []runtime.Hook{coll},
	}
	w := runtime.NewWorker(pool, cfg)
	if err := runtime.Handle(w, jt, func(context.Context, *runtime.Job, map[string]any) error { return nil }); err != nil {
		t.Fatal(err)
	}
	workerCtx, stopWorker := context.WithCancel(ctx)
	workerDone := make(chan error, 1)
	go func() { workerDone <- w.Run(workerCtx) }()
	defer func() {
		stopWorker()
		if err := <-workerDone; err != nil {
			t.Errorf("worker: %v", err)
		}
	}()

	available := `jobc_jobs{kind="thumbnail",queue="images",state="available"}`
	oldest := `jobc_queue_oldest_available_age_seconds{queue="images"}`
	paused := `jobc_queue_paused{queue="images"}`
	var first map[string]float64
	clitest.WaitFor(t, "the worker in jobc metrics", 20*cfg.LeaseDuration, func() (bool, string) {
		time.Sleep(ttl)
		first = testkit.Scrape(t, fleet)
		return first["jobc_workers"] == 1, fmt.Sprint(first)
	})
	if first[available] != n || first[paused] != 1 {
		t.Fatalf("paused: %s=%v %s=%v, want %d available and paused 1", available, first[available], paused, first[paused], n)
	}
	time.Sleep(max(ttl, 4*cfg.PollInterval)) // the worker polls meanwhile: it must not claim
	later := testkit.Scrape(t, fleet)
	if later[available] != n || later[oldest]-first[oldest] < ttl.Seconds() {
		t.Fatalf("still paused: %s=%v, oldest %v then %v; want %d available and the age grown by %s",
			available, later[available], first[oldest], later[oldest], n, ttl)
	}

	if err := runtime.ResumeQueue(ctx, pool, "images"); err != nil {
		t.Fatal(err)
	}
	completed := `jobc_jobs_finished_total{class="",kind="thumbnail",outcome="completed",queue="images"}`
	clitest.WaitFor(t, "the worker's counter to say every job completed", 20*cfg.LeaseDuration, func() (bool, string) {
		got := testkit.Scrape(t, workerSrv.URL)
		return got[completed] == n, fmt.Sprint(got)
	})
	clitest.WaitFor(t, "jobc metrics to show none waiting", 20*cfg.LeaseDuration, func() (bool, string) {
		time.Sleep(ttl)
		got := testkit.Scrape(t, fleet)
		_, waiting := got[available]
		return !waiting && got[oldest] == 0 && got[paused] == 0, fmt.Sprint(got)
	})
}

// TestMetricsUsage: bad flags are usage errors (exit 2), and nothing is served.
func TestMetricsUsage(t *testing.T) {
	for _, args := range [][]string{
		{"metrics", "extra"},
		{"metrics", "--ttl", "0s", "--database-url", "postgres://unused"},
		{"metrics", "--nope"},
	} {
		if _, errOut, code := jobc(t, args...); code != 2 {
			t.Errorf("jobc %v: exit %d, want 2 (%s)", args, code, errOut)
		}
	}
}
