package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime"
)

// replaceType is a debounced job type: unique by email while waiting, on_conflict replace.
func replaceType(t *testing.T) *runtime.JobType {
	t.Helper()
	return uniqueType(t, runtime.Unique{
		Fields:     []string{"email"},
		While:      []runtime.State{runtime.StateAvailable, runtime.StateScheduled},
		OnConflict: runtime.OnConflictReplace,
	})
}

// jobPayload returns a job's payload and metadata, decoded.
func jobPayload(t *testing.T, pool *pgxpool.Pool, id int64) (*runtime.JobInfo, emailPayload, map[string]any) {
	t.Helper()
	info, err := runtime.GetJob(context.Background(), pool, id)
	if err != nil {
		t.Fatalf("job %d: %v", id, err)
	}
	var p emailPayload
	if err := json.Unmarshal(info.Payload, &p); err != nil {
		t.Fatalf("job %d payload %s: %v", id, info.Payload, err)
	}
	var m map[string]any
	if err := json.Unmarshal(info.Metadata, &m); err != nil {
		t.Fatalf("job %d metadata %s: %v", id, info.Metadata, err)
	}
	return info, p, m
}

// TestUniqueReplaceSequential: 1,000 enqueues of one key while the job waits leave one
// job, with the last payload and metadata; every enqueue after the first says Replaced.
func TestUniqueReplaceSequential(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := replaceType(t)
	const n = 1000
	var first runtime.Enqueued
	for i := range n {
		e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: i, Email: "k@example.com"},
			runtime.WithMetadata(map[string]any{"n": i}))
		if err != nil {
			t.Fatalf("enqueue %d: %v", i, err)
		}
		if i == 0 {
			first = e
			if e.Duplicate || e.Replaced {
				t.Fatalf("first enqueue: %+v, want an insert", e)
			}
			continue
		}
		if e.ID != first.ID || !e.Replaced || e.Duplicate {
			t.Fatalf("enqueue %d: %+v, want job %d replaced", i, e, first.ID)
		}
	}
	if c := countRows(t, pool, `SELECT count(*) FROM jobc_jobs`); c != 1 {
		t.Fatalf("%d jobs, want 1", c)
	}
	info, p, m := jobPayload(t, pool, first.ID)
	if p.N != n-1 || m["n"] != float64(n-1) {
		t.Errorf("payload %s metadata %s, want n %d in both", info.Payload, info.Metadata, n-1)
	}
	if info.State != runtime.StateAvailable {
		t.Errorf("state %s, want available", info.State)
	}
	// Another key is independent.
	other, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "other@example.com"})
	if err != nil || other.Duplicate || other.Replaced || other.ID == first.ID {
		t.Errorf("a different key: %+v, %v; want a new job", other, err)
	}
}

// TestUniqueReplaceConcurrent: goroutines enqueueing one key at once leave exactly one
// job, whose payload and metadata are those one enqueue wrote together, and every
// enqueue names that job.
func TestUniqueReplaceConcurrent(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := replaceType(t)
	const goroutines, each = 8, 125
	ids := make([][]int64, goroutines)
	errs := make([]error, goroutines)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range each {
				n := g*each + i
				e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: n, Email: "k@example.com"},
					runtime.WithMetadata(map[string]any{"n": n}))
				if err != nil {
					errs[g] = fmt.Errorf("enqueue %d: %w", n, err)
					return
				}
				ids[g] = append(ids[g], e.ID)
			}
		}()
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if c := countRows(t, pool, `SELECT count(*) FROM jobc_jobs`); c != 1 {
		t.Fatalf("%d jobs, want 1", c)
	}
	id := ids[0][0]
	for g := range ids {
		for i, got := range ids[g] {
			if got != id {
				t.Fatalf("goroutine %d enqueue %d named job %d, want %d", g, i, got, id)
			}
		}
	}
	info, p, m := jobPayload(t, pool, id)
	if p.N < 0 || p.N >= goroutines*each || m["n"] != float64(p.N) {
		t.Errorf("payload %s metadata %s: not what one enqueue wrote", info.Payload, info.Metadata)
	}
	// The last enqueue of each goroutine came after its others: the survivor is one of them.
	last := false
	for g := range goroutines {
		last = last || p.N == g*each+each-1
	}
	if !last {
		t.Errorf("surviving payload n %d is no goroutine's last enqueue", p.N)
	}
}

// TestUniqueReplaceMovesRunTime: replacing a scheduled job moves its run time, later or
// to now (then it is available).
func TestUniqueReplaceMovesRunTime(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := replaceType(t)
	in1h := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	a, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "k@example.com"}, runtime.RunAt(in1h))
	if err != nil {
		t.Fatal(err)
	}
	in2h := in1h.Add(time.Hour)
	b, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 2, Email: "k@example.com"}, runtime.RunAt(in2h))
	if err != nil {
		t.Fatal(err)
	}
	if !b.Replaced || b.ID != a.ID {
		t.Fatalf("second enqueue: %+v, want job %d replaced", b, a.ID)
	}
	info, p, _ := jobPayload(t, pool, a.ID)
	if info.State != runtime.StateScheduled || !info.AvailableAt.Equal(in2h) || p.N != 2 {
		t.Errorf("after replace: state %s at %s payload %s; want scheduled at %s with n 2", info.State, info.AvailableAt, info.Payload, in2h)
	}
	before := time.Now()
	c, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 3, Email: "k@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	info, p, _ = jobPayload(t, pool, c.ID)
	if !c.Replaced || c.ID != a.ID || info.State != runtime.StateAvailable || info.AvailableAt.After(time.Now()) ||
		info.AvailableAt.Before(before.Add(-time.Second)) || p.N != 3 {
		t.Errorf("replace with no run time: %+v, state %s at %s payload %s; want job %d available now", c, info.State, info.AvailableAt, info.Payload, a.ID)
	}
}

// TestUniqueReplaceLeavesRunningJob: a running holder is never written; the key, held
// only while a job waits, goes to a new job, which later enqueues replace. The running
// job's finish releases nothing of the new job's.
func TestUniqueReplaceLeavesRunningJob(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := replaceType(t)
	release := make(chan struct{})
	ran := make(chan emailPayload, 10)
	w := runtime.NewWorker(pool, testConfig(nil))
	if err := runtime.Handle(w, jt, func(ctx context.Context, _ *runtime.Job, p emailPayload) error {
		ran <- p
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	a, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "k@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	stop := startWorker(t, w)
	defer stop()
	if p := <-ran; p.N != 1 {
		t.Fatalf("worker ran n %d, want 1", p.N)
	}
	// Scheduled an hour ahead, so the worker leaves the new job waiting.
	later := runtime.RunAt(time.Now().Add(time.Hour))
	b, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 2, Email: "k@example.com"}, later)
	if err != nil {
		t.Fatal(err)
	}
	if b.ID == a.ID || b.Replaced || b.Duplicate {
		t.Fatalf("enqueue while job %d runs: %+v, want a new job", a.ID, b)
	}
	info, p, _ := jobPayload(t, pool, a.ID)
	if info.State != runtime.StateRunning || p.N != 1 {
		t.Errorf("running job after the enqueue: state %s payload %s; want running with n 1", info.State, info.Payload)
	}
	c, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 3, Email: "k@example.com"}, later)
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != b.ID || !c.Replaced {
		t.Errorf("enqueue while job %d waits: %+v, want it replaced", b.ID, c)
	}
	close(release)
	waitFor(t, "the running job's completion", 10*time.Second, func() bool {
		info, err := runtime.GetJob(ctx, pool, a.ID)
		return err == nil && info.State == runtime.StateCompleted
	})
	d, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 4, Email: "k@example.com"}, later)
	if err != nil {
		t.Fatal(err)
	}
	if d.ID != b.ID || !d.Replaced {
		t.Errorf("enqueue after the old job completed: %+v, want job %d replaced", d, b.ID)
	}
	if c := countRows(t, pool, `SELECT count(*) FROM jobc_jobs`); c != 1 {
		t.Errorf("%d unfinished jobs, want 1", c)
	}
}

// TestUniqueReplaceChecked: NewJobType refuses on_conflict values it does not know and
// replace with states other than the waiting ones.
func TestUniqueReplaceChecked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		u    runtime.Unique
		want string
	}{
		{runtime.Unique{Fields: []string{"email"}, OnConflict: "overwrite"}, `on_conflict "overwrite": want skip or replace`},
		{runtime.Unique{Fields: []string{"email"}, OnConflict: runtime.OnConflictReplace,
			While: []runtime.State{runtime.StateAvailable, runtime.StateScheduled, runtime.StateRunning}},
			"with on_conflict replace must be available and scheduled"},
		{runtime.Unique{Fields: []string{"email"}, OnConflict: runtime.OnConflictReplace,
			While: []runtime.State{runtime.StateAvailable}},
			"with on_conflict replace must be available and scheduled"},
	} {
		jt := runtime.JobType{
			Kind: "send_email", Queue: "email", Priority: 5, MaxAttempts: 3, WriteVersion: 1,
			Versions: []runtime.Version{{Number: 1, Schema: emailSchema}}, Unique: &tc.u,
		}
		_, err := runtime.NewJobType(jt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error containing %q", tc.u, err, tc.want)
		}
	}
	// Without While, replace holds the key while the job waits: accepted.
	jt := runtime.JobType{
		Kind: "send_email", Queue: "email", Priority: 5, MaxAttempts: 3, WriteVersion: 1,
		Versions: []runtime.Version{{Number: 1, Schema: emailSchema}},
		Unique:   &runtime.Unique{Fields: []string{"email"}, OnConflict: runtime.OnConflictReplace},
	}
	if _, err := runtime.NewJobType(jt); err != nil {
		t.Errorf("replace without while: %v", err)
	}
}

// TestUniqueReplaceRacesClaims: enqueues of one key while a worker claims and runs its
// jobs. Each job runs the payload it holds when it finishes (a replace never reaches a
// running job), and the last enqueue's payload runs (a replace that loses to a claim
// inserts a new job instead of being lost).
func TestUniqueReplaceRacesClaims(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := replaceType(t)
	var mu sync.Mutex
	ran := map[int64]int{} // job id: the n its handler got
	w := runtime.NewWorker(pool, testConfig(nil))
	if err := runtime.Handle(w, jt, func(_ context.Context, job *runtime.Job, p emailPayload) error {
		time.Sleep(time.Millisecond) // long enough for enqueues to find the job running
		mu.Lock()
		defer mu.Unlock()
		ran[job.ID] = p.N
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	stop := startWorker(t, w)
	defer stop()
	const n = 300
	for i := range n {
		if _, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: i, Email: "k@example.com"}); err != nil {
			t.Fatalf("enqueue %d: %v", i, err)
		}
	}
	waitFor(t, "every job to finish", 20*time.Second, func() bool {
		return countRows(t, pool, `SELECT count(*) FROM jobc_jobs`) == 0
	})
	mu.Lock()
	defer mu.Unlock()
	lastRan := false
	for id, got := range ran {
		_, p, _ := jobPayload(t, pool, id)
		if p.N != got {
			t.Errorf("job %d ran n %d but holds n %d: its payload changed while it ran", id, got, p.N)
		}
		lastRan = lastRan || got == n-1
	}
	if !lastRan {
		t.Errorf("the last enqueue's payload (n %d) never ran; %d jobs ran", n-1, len(ran))
	}
	t.Logf("%d enqueues ran as %d jobs", n, len(ran))
}

// TestUniqueReplaceLosesToClaim: an enqueue that finds its holder being claimed (the
// claim's transaction holds the job row) waits for the claim, then sees the job running
// and inserts a new job; the claimed job keeps the payload its worker read.
func TestUniqueReplaceLosesToClaim(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := replaceType(t)
	a, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "k@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	// A claim, as the worker's writes it, left open.
	claim, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = claim.Rollback(ctx) }()
	if _, err := claim.Exec(ctx, `UPDATE jobc_jobs SET state = 'running', attempt = attempt + 1, attempted_at = now(),
		lease_owner = 'test', lease_expires_at = now() + interval '1 hour' WHERE id = $1`, a.ID); err != nil {
		t.Fatal(err)
	}
	var claimPID int32
	if err := claim.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&claimPID); err != nil {
		t.Fatal(err)
	}
	type result struct {
		e   runtime.Enqueued
		err error
	}
	done := make(chan result, 1)
	go func() {
		e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 2, Email: "k@example.com"})
		done <- result{e, err}
	}()
	waitFor(t, "the enqueue to wait for the claim's lock", 10*time.Second, func() bool {
		return countRows(t, pool, `SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, claimPID) == 1
	})
	if err := claim.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.e.ID == a.ID || r.e.Replaced || r.e.Duplicate {
		t.Errorf("enqueue after the claim: %+v, want a new job", r.e)
	}
	if info, p, _ := jobPayload(t, pool, a.ID); info.State != runtime.StateRunning || p.N != 1 {
		t.Errorf("claimed job: %s with payload %s, want running with n 1", info.State, info.Payload)
	}
}

// TestUniqueReplaceNeedsTheHoldersConsent: a caller of jobc_enqueue_unique that asks to
// replace (a producer role can call it with any arguments) cannot rewrite a waiting job
// whose own enqueue did not ask for replace: it gets the holder back as a duplicate and
// the job keeps its payload.
func TestUniqueReplaceNeedsTheHoldersConsent(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := uniqueType(t, runtime.Unique{Fields: []string{"email"}})
	held, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "k@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	var key string
	if err := pool.QueryRow(ctx, `SELECT unique_key FROM jobc_jobs WHERE id = $1`, held.ID).Scan(&key); err != nil {
		t.Fatal(err)
	}
	var id int64
	var inserted, replaced bool
	err = pool.QueryRow(ctx, `SELECT job_id, inserted, replaced FROM jobc_enqueue_unique(
		$1, $2, 5, 3, 1, '{"n": 2, "email": "k@example.com"}', '{}', NULL, $3, NULL, 'replace')`,
		jt.Kind, jt.Queue, key).Scan(&id, &inserted, &replaced)
	if err != nil {
		t.Fatal(err)
	}
	if id != held.ID || inserted || replaced {
		t.Errorf("replace over a skip holder: job %d inserted %v replaced %v, want job %d as a duplicate", id, inserted, replaced, held.ID)
	}
	if info, p, _ := jobPayload(t, pool, held.ID); p.N != 1 {
		t.Errorf("the holder's payload is %s, want it unchanged (n 1)", info.Payload)
	}
	if c := countRows(t, pool, `SELECT count(*) FROM jobc_jobs`); c != 1 {
		t.Errorf("%d jobs, want 1", c)
	}
}
