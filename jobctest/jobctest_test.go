package jobctest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/jobctest"
	"github.com/jobc-dev/jobc/runtime"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type greeting struct {
	Name string `json:"name"`
}

func greetType() *runtime.JobType {
	return runtime.MustJobType(runtime.JobType{
		Kind: "greet", Queue: "default", Priority: 5, MaxAttempts: 1, WriteVersion: 1,
		Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object","required":["name"],"properties":{"name":{"type":"string"}}}`}},
	})
}

func migrated(ctx context.Context, pool *pgxpool.Pool) error {
	_, err := runtime.Migrate(ctx, pool)
	return err
}

func TestRequireEnqueuedSeesTheTransaction(t *testing.T) {
	pool := pgtest.NewSchema(t, migrated)
	ctx := context.Background()
	jt := greetType()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := runtime.Enqueue(ctx, tx, jt, greeting{Name: "Ada"}); err != nil {
		t.Fatal(err)
	}
	greet := jobctest.NewKind[greeting, greeting](jt, func(h func(string) error) jobctest.Handler[greeting] {
		return func(_ context.Context, _ pgx.Tx, _ *runtime.Job, p greeting) error { return h(p.Name) }
	})
	if job := greet.RequireEnqueued(t, tx); job.Payload.Name != "Ada" {
		t.Errorf("payload %+v", job.Payload)
	}
	greet.RequireNotEnqueued(t, pool) // not committed yet
}

func TestWorkRunsEverythingAndReportsOutcomes(t *testing.T) {
	pool := pgtest.NewSchema(t, migrated)
	ctx := context.Background()
	jt := greetType()
	for _, name := range []string{"Ada", "Grace", "fail"} {
		if _, err := runtime.Enqueue(ctx, pool, jt, greeting{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	finished := jobctest.Work(t, pool, func(w *runtime.Worker) error {
		return runtime.Handle(w, jt, func(_ context.Context, _ *runtime.Job, p greeting) error {
			if p.Name == "fail" {
				return errors.New("no")
			}
			return nil
		})
	})
	states := map[runtime.State]int{}
	for _, j := range finished {
		states[j.State]++
	}
	if len(finished) != 3 || states[runtime.StateCompleted] != 2 || states[runtime.StateFailed] != 1 {
		t.Errorf("finished %d jobs: %v", len(finished), states)
	}
	greet := jobctest.NewKind[greeting, greeting](jt, func(h func(string) error) jobctest.Handler[greeting] {
		return func(_ context.Context, _ pgx.Tx, _ *runtime.Job, p greeting) error { return h(p.Name) }
	})
	greet.RequireNotEnqueued(t, pool)
}

// TestFindRefusesToReadAPrefix: with more jobs than one listing returns, Find fails
// rather than deciding on the first page alone.
func TestFindRefusesToReadAPrefix(t *testing.T) {
	pool := pgtest.NewSchema(t, migrated)
	ctx := context.Background()
	jt := greetType()
	payloads := make([]greeting, 10001)
	for i := range payloads {
		payloads[i] = greeting{Name: "Ada"}
	}
	if _, err := runtime.EnqueueMany(ctx, pool, jt, payloads); err != nil {
		t.Fatal(err)
	}
	greet := jobctest.NewKind[greeting, greeting](jt, func(h func(string) error) jobctest.Handler[greeting] {
		return func(_ context.Context, _ pgx.Tx, _ *runtime.Job, p greeting) error { return h(p.Name) }
	})
	jobs, err := greet.Find(ctx, pool)
	if err == nil || !strings.Contains(err.Error(), "more than 10000 jobs match") {
		t.Fatalf("Find over 10,001 jobs: %d jobs, error %v; want the error that more match", len(jobs), err)
	}
}
