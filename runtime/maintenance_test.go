package runtime_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

// TestStarvationBound: under a continuous stream of urgent jobs on a single slot, a
// low-priority job still starts within the starvation bound (plus one scheduler tick
// and a claim).
func TestStarvationBound(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := emailType(t, nil)
	low, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 0, Email: "low@example.com"}, runtime.WithPriority(9))
	if err != nil {
		t.Fatal(err)
	}
	enqueuedAt := time.Now()
	stopFlood := make(chan struct{})
	var flood sync.WaitGroup
	flood.Add(1)
	go func() { // keep urgent work waiting at all times
		defer flood.Done()
		for i := 1; ; i++ {
			select {
			case <-stopFlood:
				return
			case <-time.After(5 * time.Millisecond):
			}
			if _, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: i, Email: "urgent@example.com"}, runtime.WithPriority(1)); err != nil {
				return
			}
		}
	}()
	defer func() { close(stopFlood); flood.Wait() }()
	// Let urgent work pile up first.
	waitFor(t, "a backlog of urgent jobs", 5*time.Second, func() bool {
		return countRows(t, pool, `SELECT count(*) FROM jobc_jobs WHERE priority = 1`) >= 20
	})

	const bound = 500 * time.Millisecond
	cfg := testConfig(map[string]runtime.QueueConfig{"email": {MaxWorkers: 1}})
	cfg.StarvationBound = bound
	cfg.FetchBatch = 1
	w := runtime.NewWorker(pool, cfg)
	var lowStarted atomic.Int64
	if err := runtime.Handle(w, jt, func(_ context.Context, job *runtime.Job, p emailPayload) error {
		if p.N == 0 {
			lowStarted.Store(time.Now().UnixNano())
		}
		time.Sleep(10 * time.Millisecond) // slower than the flood: urgent work never runs out
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	waitFor(t, "the low-priority job to start", 15*time.Second, func() bool { return lowStarted.Load() != 0 })
	waited := time.Unix(0, lowStarted.Load()).Sub(enqueuedAt)
	if waited > bound+3*time.Second {
		t.Errorf("low-priority job started after %s, bound %s", waited, bound)
	}
	if urgent := countRows(t, pool, `SELECT count(*) FROM jobc_jobs WHERE priority = 1 AND state = 'available'`); urgent == 0 {
		t.Errorf("the urgent backlog ran dry, so the test proved nothing about starvation")
	}
	waitFor(t, "the low-priority job to complete", 10*time.Second, func() bool {
		info, err := runtime.GetJob(ctx, pool, low.ID)
		return err == nil && info.State == runtime.StateCompleted
	})
}

// TestGracefulShutdownReleasesLeases: a handler still running when the grace period
// ends is cancelled and its job given back at once, without counting the attempt.
func TestGracefulShutdownReleasesLeases(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := emailType(t, nil)
	e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(nil)
	cfg.ShutdownGrace = 200 * time.Millisecond
	w := runtime.NewWorker(pool, cfg)
	started := make(chan struct{})
	if err := runtime.Handle(w, jt, func(ctx context.Context, _ *runtime.Job, _ emailPayload) error {
		close(started)
		<-ctx.Done()
		return ctx.Err()
	}); err != nil {
		t.Fatal(err)
	}
	stop := startWorker(t, w)
	<-started
	begin := time.Now()
	stop()
	if d := time.Since(begin); d < 200*time.Millisecond || d > 3*time.Second {
		t.Errorf("shutdown took %s with a 200ms grace", d)
	}
	info, err := runtime.GetJob(ctx, pool, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if info.State != runtime.StateAvailable || info.Attempt != 0 || len(info.Errors) != 0 {
		t.Errorf("after shutdown: state %s attempt %d errors %v; want available, 0, none", info.State, info.Attempt, info.Errors)
	}
}

// TestRescueExpiredLease: a job whose worker vanished (its lease expired) runs again on
// a live worker, with the attempt counted and "lease expired" recorded; one out of
// attempts fails. The rescuer's rules are tested directly in rescuer_test.go; this
// shows that a running worker rescues.
func TestRescueExpiredLease(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := emailType(t, func(jt *runtime.JobType) { jt.MaxAttempts = 2 })
	a, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "a@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 2, Email: "b@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	// A worker that died while holding both: a on its first attempt, b on its last.
	if _, err := pool.Exec(ctx, `UPDATE jobc_jobs SET state = 'running', lease_owner = 'ghost',
		lease_expires_at = now() - interval '1 second', attempt = CASE WHEN id = $1 THEN 1 ELSE 2 END`, a.ID); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(nil)
	cfg.RescueInterval = 50 * time.Millisecond
	w := runtime.NewWorker(pool, cfg)
	if err := runtime.Handle(w, jt, func(context.Context, *runtime.Job, emailPayload) error { return nil }); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	waitFor(t, "rescue", 10*time.Second, func() bool {
		ia, errA := runtime.GetJob(ctx, pool, a.ID)
		ib, errB := runtime.GetJob(ctx, pool, b.ID)
		return errA == nil && errB == nil && ia.State == runtime.StateCompleted && ib.State == runtime.StateFailed
	})
	ia, _ := runtime.GetJob(ctx, pool, a.ID)
	ib, _ := runtime.GetJob(ctx, pool, b.ID)
	if ia.Attempt != 2 || len(ia.Errors) != 1 || ia.Errors[0].Class != "lease_expired" || ia.Errors[0].Worker != "ghost" {
		t.Errorf("rescued job: attempt %d errors %+v", ia.Attempt, ia.Errors)
	}
	if len(ib.Errors) != 1 || ib.Errors[0].Class != "lease_expired" {
		t.Errorf("failed job: errors %+v", ib.Errors)
	}
}

// TestWorkerStartsEveryService: Run starts every maintenance service, the opt-in and
// per-type ones only when configured.
func TestWorkerStartsEveryService(t *testing.T) {
	t.Parallel()
	scheduled := emailType(t, func(jt *runtime.JobType) {
		jt.Kind, jt.Queue = "report", "reports"
		jt.Schedule = &runtime.Schedule{Cron: "@hourly", Timezone: "UTC"}
		jt.Versions = []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}}
	})
	for _, tc := range []struct {
		name string
		tune func(*runtime.Config)
		want []string
	}{
		{"defaults", func(*runtime.Config) {}, []string{"scheduler", "rescuer", "pruner", "registry pruner", "unhandled jobs reporter",
			"vacuumer", "starvation ager", "periodic report"}},
		{"upgrades, no starvation bound, no vacuumer", func(c *runtime.Config) {
			c.UpgradePayloads, c.StarvationBound, c.VacuumDeadRows = true, -1, -1
		},
			[]string{"scheduler", "rescuer", "pruner", "registry pruner", "unhandled jobs reporter", "periodic report", "upgrader send_email"}},
	} {
		cfg := testConfig(nil)
		tc.tune(&cfg)
		w := runtime.NewWorker(nil, cfg)
		if err := runtime.Handle(w, versionedType(t), func(context.Context, *runtime.Job, emailPayloadV2) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if err := runtime.Handle(w, scheduled, func(context.Context, *runtime.Job, map[string]any) error { return nil }); err != nil {
			t.Fatal(err)
		}
		got, err := runtime.MaintenanceServicesForTest(w)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: services %q, want %q", tc.name, got, tc.want)
		}
	}
}
