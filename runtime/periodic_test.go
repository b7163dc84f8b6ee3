package runtime_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// TestPeriodicEnqueuerRunOnce: three nodes' enqueuers of an every-second job run at
// once; each occurrence is enqueued exactly once, with the schema's defaults as its
// payload, and a run with no new occurrence due enqueues nothing.
func TestPeriodicEnqueuerRunOnce(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := emailType(t, func(jt *runtime.JobType) {
		jt.Schedule = &runtime.Schedule{Cron: "@every 1s", Timezone: "UTC"}
		jt.Versions = []runtime.Version{{Number: 1, Schema: `{"type":"object","properties":{"n":{"type":"integer","default":7},"email":{"type":"string","default":"report@example.com"}}}`}}
	})
	var mu sync.Mutex
	clock := time.Now().Truncate(time.Second).Add(500 * time.Millisecond)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	type outcome struct {
		occurrence time.Time
		id         int64
		duplicate  bool
		err        error
	}
	var nodes []func() outcome
	for range 3 {
		p, err := runtime.NewPeriodicEnqueuerForTest(pool, jt, now)
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, func() outcome {
			r, err := p.RunOnce(ctx)
			return outcome{r.Occurrence, r.JobID, r.Duplicate, err}
		})
	}
	// runAll runs every node's enqueuer at once and checks that exactly one enqueued
	// the occurrence due at want, the others finding the same job.
	runAll := func(want time.Time) {
		t.Helper()
		outs := make([]outcome, len(nodes))
		var wg sync.WaitGroup
		for i, run := range nodes {
			wg.Go(func() { outs[i] = run() })
		}
		wg.Wait()
		inserted := 0
		for i, o := range outs {
			if o.err != nil {
				t.Fatalf("node %d: %v", i, o.err)
			}
			if !o.occurrence.Equal(want) || o.id != outs[0].id {
				t.Errorf("node %d: occurrence %s job %d; want %s, job %d like node 0", i, o.occurrence, o.id, want, outs[0].id)
			}
			if !o.duplicate {
				inserted++
			}
		}
		if inserted != 1 {
			t.Errorf("occurrence %s inserted by %d nodes, want 1", want, inserted)
		}
	}
	first := clock.Truncate(time.Second)
	runAll(first)
	for _, run := range nodes {
		if o := run(); o.err != nil || !o.occurrence.IsZero() {
			t.Errorf("a run with no new occurrence due: %+v; want none", o)
		}
	}
	mu.Lock()
	clock = clock.Add(time.Second)
	mu.Unlock()
	runAll(first.Add(time.Second))
	mu.Lock()
	clock = clock.Add(3 * time.Second) // two occurrences missed: only the latest is enqueued, as cron does
	mu.Unlock()
	runAll(first.Add(4 * time.Second))

	rows, err := pool.Query(ctx, `SELECT metadata, payload FROM jobc_jobs_all`)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for rows.Next() {
		var meta, payload json.RawMessage
		if err := rows.Scan(&meta, &payload); err != nil {
			t.Fatal(err)
		}
		var m map[string]string
		_ = json.Unmarshal(meta, &m)
		seen[m["jobc_occurrence"]]++
		var p emailPayload
		if err := json.Unmarshal(payload, &p); err != nil || p.N != 7 || p.Email != "report@example.com" {
			t.Errorf("payload %s; want the schema defaults n=7, email report@example.com", payload)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 {
		t.Errorf("occurrences %v; want 3", seen)
	}
	for occ, n := range seen {
		if occ == "" || n != 1 {
			t.Errorf("occurrence %q enqueued %d times", occ, n)
		}
	}
}

// TestPeriodicJobRunsOnWorkers: a worker runs the periodic enqueuer of a scheduled job
// type and its handler gets the occurrences, with the schema's defaults.
func TestPeriodicJobRunsOnWorkers(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	jt := emailType(t, func(jt *runtime.JobType) {
		jt.Schedule = &runtime.Schedule{Cron: "@every 1s", Timezone: "UTC"}
		jt.Versions = []runtime.Version{{Number: 1, Schema: `{"type":"object","properties":{"n":{"type":"integer","default":7},"email":{"type":"string","default":"report@example.com"}}}`}}
	})
	got := make(chan emailPayload, 10)
	cfg := testConfig(nil)
	w := runtime.NewWorker(pool, cfg)
	if err := runtime.Handle(w, jt, func(_ context.Context, _ *runtime.Job, p emailPayload) error {
		got <- p
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	// The enqueuer looks every SchedulerInterval; an every-second occurrence is due
	// within a second of the start, and the scheduler promotes it at once.
	wait := time.Second + 10*cfg.SchedulerInterval + 5*cfg.PollInterval + 5*time.Second
	select {
	case p := <-got:
		if p.N != 7 || p.Email != "report@example.com" {
			t.Errorf("handler got %+v, want the schema defaults", p)
		}
	case <-time.After(wait):
		t.Fatalf("no occurrence handled within %s; jobs: %d unfinished, %d finished", wait,
			countRows(t, pool, `SELECT count(*) FROM jobc_jobs`), countRows(t, pool, `SELECT count(*) FROM jobc_jobs_finished`))
	}
}
