package runtime_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// outcomeCounter is a Hook: it counts finished attempts by outcome, and returns at once.
type outcomeCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *outcomeCounter) OnEvent(_ context.Context, e runtime.Event) {
	if e.Kind != runtime.EventFinish {
		return
	}
	c.mu.Lock()
	c.n[e.Outcome]++
	c.mu.Unlock()
}

// tagger is an EnqueueHook: it adds metadata to every job it sees enqueued, as a
// tracer stores its trace context.
type tagger struct{}

func (tagger) WrapEnqueue(ctx context.Context, e *runtime.EnqueueRequest, insert func(context.Context) error) error {
	e.Metadata["enqueued_by"] = "signup"
	return insert(ctx)
}

// ExampleHook observes a worker with a Hook and producers with an EnqueueHook, and
// probes the worker's readiness.
func ExampleHook() {
	pool, _, cleanup := pgtest.ExampleSchema("hooks", migrated)
	defer cleanup()
	ctx := context.Background()

	// Producers pass their hooks with the enqueue, typically one option kept at start-up.
	hooks := runtime.WithHooks(tagger{})
	job, err := runtime.Enqueue(ctx, pool, welcomeType, welcome{UserID: 7, Email: "grace@example.com"}, hooks)
	if err != nil {
		panic(err)
	}

	counter := &outcomeCounter{n: map[string]int{}}
	w := runtime.NewWorker(pool, runtime.Config{
		Logger: slog.New(slog.DiscardHandler), PollInterval: 50 * time.Millisecond, SchedulerInterval: 50 * time.Millisecond,
		Hooks: []runtime.Hook{counter},
	})
	seen := make(chan string, 1)
	if err := runtime.Handle(w, welcomeType, func(_ context.Context, j *runtime.Job, _ welcome) error {
		seen <- string(j.Metadata)
		return nil
	}); err != nil {
		panic(err)
	}
	probe := httptest.NewServer(w.HealthHandler())
	defer probe.Close()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	fmt.Println("handler saw metadata", <-seen)
	for {
		info, err := runtime.GetJob(ctx, pool, job.ID)
		if err != nil {
			panic(err)
		}
		if info.State == runtime.StateCompleted && w.Health().Healthy {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	resp, err := probe.Client().Get(probe.URL)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println("readiness", resp.StatusCode)
	stop()
	if err := <-done; err != nil {
		panic(err)
	}
	counter.mu.Lock()
	fmt.Println("completed", counter.n[runtime.OutcomeCompleted])
	counter.mu.Unlock()
	// Output:
	// handler saw metadata {"enqueued_by": "signup"}
	// readiness 200
	// completed 1
}
