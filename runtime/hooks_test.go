package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

// recorder is a Hook, Middleware and EnqueueHook that keeps what it saw.
type recorder struct {
	mu       sync.Mutex
	events   []runtime.Event
	wrapped  map[int64]string // job id -> the metadata the middleware saw
	enqueues []runtime.EnqueueRequest
}

func (r *recorder) OnEvent(_ context.Context, e runtime.Event) {
	e.Job = nil // the worker reuses nothing, but a hook must not keep it
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

type ctxKey struct{}

func (r *recorder) WrapHandler(ctx context.Context, job *runtime.Job, next func(ctx context.Context) error) error {
	r.mu.Lock()
	if r.wrapped == nil {
		r.wrapped = map[int64]string{}
	}
	r.wrapped[job.ID] = string(job.Metadata)
	r.mu.Unlock()
	return next(context.WithValue(ctx, ctxKey{}, "wrapped"))
}

func (r *recorder) WrapEnqueue(ctx context.Context, e *runtime.EnqueueRequest, insert func(ctx context.Context) error) error {
	e.Metadata["traced"] = e.Kind
	err := insert(ctx)
	r.mu.Lock()
	r.enqueues = append(r.enqueues, *e)
	r.mu.Unlock()
	return err
}

// TestHooksSeeEveryStep runs jobs that complete and jobs that fail until out of
// attempts, and checks what the hook, the middleware and the enqueue hook saw.
func TestHooksSeeEveryStep(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := emailType(t, nil) // 3 attempts, 10ms constant backoff
	rec := &recorder{}

	const jobs = 4 // even n completes, odd n fails every attempt
	ids := map[int64]int{}
	for i := range jobs {
		e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: i, Email: "a@b.c"}, runtime.WithHooks(rec))
		if err != nil {
			t.Fatal(err)
		}
		ids[e.ID] = i
	}
	cfg := testConfig(nil)
	cfg.Hooks = []runtime.Hook{rec}
	cfg.Middleware = []runtime.Middleware{rec}
	// The jobs wait at least this long between becoming available and their claim.
	idle := 2 * cfg.PollInterval
	time.Sleep(idle)
	w := runtime.NewWorker(pool, cfg)
	var sawCtx sync.Map
	if err := runtime.Handle(w, jt, func(ctx context.Context, job *runtime.Job, p emailPayload) error {
		sawCtx.Store(job.ID, ctx.Value(ctxKey{}))
		if p.N%2 == 1 {
			return &runtime.ClassError{Class: "boom", Err: errors.New("odd")}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	// The maintenance services start after the first claim and report from their first
	// run on, which may come after the last job finished.
	ran := func(service string) bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		for _, e := range rec.events {
			if e.Kind == runtime.EventMaintenance && e.Service == service {
				return true
			}
		}
		return false
	}
	waitFor(t, "every job finished, and the scheduler and the rescuer ran", 10*time.Second, func() bool {
		return countRows(t, pool, `SELECT count(*) FROM jobc_jobs_finished`) == jobs && ran("scheduler") && ran("rescuer")
	})

	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.enqueues) != jobs {
		t.Fatalf("enqueue hook saw %d enqueues, want %d", len(rec.enqueues), jobs)
	}
	for _, e := range rec.enqueues {
		if e.Kind != jt.Kind || e.Queue != jt.Queue || e.Count != 1 || len(e.IDs) != 1 {
			t.Errorf("enqueue request %+v: want kind %s, queue %s, one id", e, jt.Kind, jt.Queue)
		}
	}
	for id := range ids {
		var md map[string]any
		if err := json.Unmarshal([]byte(rec.wrapped[id]), &md); err != nil || md["traced"] != "send_email" {
			t.Errorf("job %d: the middleware saw metadata %s (%v), want the enqueue hook's key", id, rec.wrapped[id], err)
		}
		if v, _ := sawCtx.Load(id); v != "wrapped" {
			t.Errorf("job %d: the handler's context has %v, want the middleware's value", id, v)
		}
	}
	byJob := map[int][]string{}
	starts, claims, claimed := 0, 0, 0
	services := map[string]bool{}
	for _, e := range rec.events {
		if e.Worker != w.ID() {
			t.Errorf("event %s: worker %q, want %q", e.Kind, e.Worker, w.ID())
		}
		switch e.Kind {
		case runtime.EventClaim:
			claims++
			claimed += e.Count
		case runtime.EventStart:
			starts++
			if e.Attempt == 1 && e.Wait < idle {
				t.Errorf("job %s attempt 1 waited %s, want at least %s", e.JobKind, e.Wait, idle)
			}
		case runtime.EventFinish:
			if e.RunTime <= 0 {
				t.Errorf("finish event with run time %s", e.RunTime)
			}
			byJob[e.Attempt] = append(byJob[e.Attempt], fmt.Sprintf("%s/%s", e.Outcome, e.ErrorClass))
		case runtime.EventMaintenance:
			services[e.Service] = true
		}
	}
	// Two jobs complete at attempt 1; two are retried at attempts 1 and 2, fail at 3.
	want := map[int][]string{
		1: {"completed/", "completed/", "retried/boom", "retried/boom"},
		2: {"retried/boom", "retried/boom"},
		3: {"failed/boom", "failed/boom"},
	}
	for attempt, outcomes := range want {
		got := slices.Clone(byJob[attempt])
		slices.Sort(got)
		if !slices.Equal(got, outcomes) {
			t.Errorf("attempt %d finished as %v, want %v", attempt, got, outcomes)
		}
	}
	if starts != 8 || claimed != 8 || claims == 0 {
		t.Errorf("saw %d starts and %d claims of %d jobs, want 8 starts and 8 claimed", starts, claims, claimed)
	}
	if !services["scheduler"] || !services["rescuer"] {
		t.Errorf("maintenance events came from %v, want the scheduler and the rescuer among them", services)
	}
}

// TestHealthHandler: a running worker reports healthy with 200, a stopped one 503 with
// the reason.
func TestHealthHandler(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	jt := emailType(t, nil)
	cfg := testConfig(nil)
	w := runtime.NewWorker(pool, cfg)
	if err := runtime.Handle(w, jt, func(context.Context, *runtime.Job, emailPayload) error { return nil }); err != nil {
		t.Fatal(err)
	}
	probe := func() (int, runtime.HealthReport) {
		rr := httptest.NewRecorder()
		w.HealthHandler().ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/healthz", nil))
		var r runtime.HealthReport
		if err := json.Unmarshal(rr.Body.Bytes(), &r); err != nil {
			t.Fatalf("health body %q: %v", rr.Body.String(), err)
		}
		return rr.Code, r
	}
	if code, r := probe(); code != http.StatusServiceUnavailable || r.Healthy || !slices.Contains(r.Reasons, "not running") {
		t.Fatalf("before Run: %d %+v, want 503 not running", code, r)
	}
	stop := startWorker(t, w)
	// The listener connects within a statement timeout of the start.
	waitFor(t, "a healthy worker", 5*time.Second, func() bool { return w.Health().Healthy })
	if code, r := probe(); code != http.StatusOK || !r.Healthy || len(r.Reasons) != 0 || r.Worker != w.ID() {
		t.Fatalf("running: %d %+v, want 200 healthy with no reasons", code, r)
	}
	// Every connection of the worker says whose it is: the listener and the worker's
	// own pool at least, which opens after the first claim (made on a connection
	// borrowed from the application) within a statement timeout.
	named := `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`
	wait := 10 * (cfg.LeaseDuration / 4) // the warm-up takes at most a StatementTimeout
	for deadline := time.Now().Add(wait); ; time.Sleep(cfg.PollInterval / 5) {
		n := countRows(t, pool, named, "jobc worker "+w.ID())
		if n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections named %q after %s, want the listener's and the worker's own", n, "jobc worker "+w.ID(), wait)
		}
	}
	stop()
	if code, r := probe(); code != http.StatusServiceUnavailable || !slices.Contains(r.Reasons, "not running") {
		t.Fatalf("after stop: %d %+v, want 503 not running", code, r)
	}
}

// TestCompletedJobLogsAtDebug: a completed job logs at Debug, with its time as text
// even in JSON.
func TestCompletedJobLogsAtDebug(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	jt := emailType(t, nil)
	var logs syncLog
	cfg := testConfig(nil)
	cfg.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	w := runtime.NewWorker(pool, cfg)
	if err := runtime.Handle(w, jt, func(context.Context, *runtime.Job, emailPayload) error { return nil }); err != nil {
		t.Fatal(err)
	}
	e, err := runtime.Enqueue(context.Background(), pool, jt, emailPayload{N: 1, Email: "a@b.c"})
	if err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	var rec map[string]any
	waitFor(t, "the completed job's record", 10*time.Second, func() bool {
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, `"jobc job completed"`) {
				return json.Unmarshal([]byte(line), &rec) == nil
			}
		}
		return false
	})
	took, ok := rec["took"].(string)
	if _, err := time.ParseDuration(took); !ok || err != nil || rec["level"] != "DEBUG" || rec["job_id"] != float64(e.ID) {
		t.Errorf("record %v: want level DEBUG, job_id %d and took as a duration text", rec, e.ID)
	}
}

// syncLog is a log destination the test reads while the worker writes.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestHookSeesSnooze: a snooze is a finish with outcome snoozed and no error class, and
// the job's next run is seen again.
func TestHookSeesSnooze(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	jt := emailType(t, nil)
	rec := &recorder{}
	cfg := testConfig(nil)
	cfg.Hooks = []runtime.Hook{rec}
	w := runtime.NewWorker(pool, cfg)
	var calls sync.Map
	if err := runtime.Handle(w, jt, func(_ context.Context, job *runtime.Job, _ emailPayload) error {
		if _, again := calls.LoadOrStore(job.ID, true); !again {
			return runtime.Snooze(cfg.SchedulerInterval)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := runtime.Enqueue(context.Background(), pool, jt, emailPayload{N: 1, Email: "a@b.c"}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	outcomes := func() []string {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		var out []string
		for _, e := range rec.events {
			if e.Kind == runtime.EventFinish {
				out = append(out, e.Outcome+"/"+e.ErrorClass)
			}
		}
		return out
	}
	waitFor(t, "two finish events", 10*time.Second, func() bool { return len(outcomes()) == 2 })
	if got := outcomes(); !slices.Equal(got, []string{"snoozed/", "completed/"}) {
		t.Errorf("finish events %v, want snoozed then completed", got)
	}
}

// TestHookSeesRescuesByQueue: the rescuer's rescues reach hooks as one EventRescue per
// queue, with that queue's count.
func TestHookSeesRescuesByQueue(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	a := emailType(t, func(jt *runtime.JobType) { jt.Kind, jt.Queue = "rescue_a", "rescue_a" })
	b := emailType(t, func(jt *runtime.JobType) { jt.Kind, jt.Queue = "rescue_b", "rescue_b" })
	for i, jt := range []*runtime.JobType{a, b, b} {
		if _, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: i, Email: "a@example.com"}); err != nil {
			t.Fatal(err)
		}
	}
	// A worker that vanished holding all three.
	if _, err := pool.Exec(ctx, `UPDATE jobc_jobs SET state = 'running', attempt = 1, lease_owner = 'ghost',
		lease_expires_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	cfg := testConfig(nil)
	cfg.Hooks = []runtime.Hook{rec}
	cfg.RescueInterval = 20 * time.Millisecond
	w := runtime.NewWorker(pool, cfg)
	if err := runtime.Handle(w, a, func(context.Context, *runtime.Job, emailPayload) error { return nil }); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	rescued := func() map[string]int {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		out := map[string]int{}
		for _, e := range rec.events {
			if e.Kind == runtime.EventRescue {
				out[e.Queue] += e.Count
			}
		}
		return out
	}
	deadline := time.Now().Add(100 * cfg.RescueInterval)
	for rescued()["rescue_b"] < 2 || rescued()["rescue_a"] < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("after %s, rescue events by queue %v; want rescue_a: 1, rescue_b: 2", 100*cfg.RescueInterval, rescued())
		}
		time.Sleep(cfg.RescueInterval)
	}
	if got := rescued(); got["rescue_a"] != 1 || got["rescue_b"] != 2 || len(got) != 2 {
		t.Errorf("rescue events by queue %v; want rescue_a: 1, rescue_b: 2", got)
	}
}
