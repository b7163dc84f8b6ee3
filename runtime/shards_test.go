package runtime_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime"
)

// TestOneProcessServesTwoDatabases: one process runs a worker per database (shards of
// one application, each on its own PostgreSQL cluster), with the same job types. Each
// worker runs its own database's jobs only, each database's leaderless maintenance
// runs there (a job left running under an expired lease by a dead process is rescued
// in each), and one database going down stops nothing on the other: jobs enqueued on
// the other meanwhile complete, and the stopped one's worker resumes once it is back.
func TestOneProcessServesTwoDatabases(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	jt := emailType(t, nil)
	type shard struct {
		name    string
		cluster interface {
			Stop(context.Context) error
			Start(context.Context) error
		}
		pool *pgxpool.Pool
		mu   sync.Mutex
		ran  map[int]int // payload N -> handler calls
	}
	cfg := testConfig(map[string]runtime.QueueConfig{"email": {MaxWorkers: 4}})
	cfg.LeaseDuration = 2 * time.Second
	cfg.RescueInterval = 200 * time.Millisecond
	cfg.StatementTimeout = time.Second
	shards := make([]*shard, 2)
	for i := range shards {
		cluster, pool := newClusterDB(t)
		s := &shard{name: fmt.Sprintf("shard %d", i), cluster: cluster, pool: pool, ran: map[int]int{}}
		shards[i] = s
		w := runtime.NewWorker(pool, cfg)
		if err := runtime.Handle(w, jt, func(ctx context.Context, job *runtime.Job, p emailPayload) error {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.ran[p.N]++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		startWorker(t, w)
	}
	// Payload N says which shard a job was enqueued on: 1000*shard + n.
	enqueue := func(s *shard, i, from, n int) {
		t.Helper()
		for k := from; k < from+n; k++ {
			if _, err := runtime.Enqueue(ctx, s.pool, jt, emailPayload{N: 1000*i + k, Email: "x@example.com"}); err != nil {
				t.Fatalf("%s: enqueue %d: %v", s.name, k, err)
			}
		}
	}
	wait := 10 * (cfg.LeaseDuration + cfg.RescueInterval + cfg.PollInterval)
	completed := func(s *shard, want int) {
		t.Helper()
		var n int
		var err error
		for deadline := time.Now().Add(wait); ; time.Sleep(cfg.PollInterval) {
			err = s.pool.QueryRow(ctx, `SELECT count(*) FROM jobc_jobs_finished WHERE state = 'completed'`).Scan(&n)
			if err == nil && n == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d completed jobs after %s, want %d (last error: %v)", s.name, n, wait, want, err)
			}
		}
	}

	// A job each shard's dead process left running, its lease long expired: written
	// running (an enqueue the shard's worker could claim first).
	for i, s := range shards {
		tag, err := s.pool.Exec(ctx, `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts,
				attempt, attempted_at, lease_owner, lease_expires_at)
			VALUES ($1, $2, 'running', 5, 1, jsonb_build_object('n', $3::int, 'email', 'x@example.com'), 3,
				1, now() - interval '1 hour', 'dead-process', now() - interval '1 minute')`, jt.Kind, jt.Queue, 1000*i+999)
		if err != nil || tag.RowsAffected() != 1 {
			t.Fatalf("%s: the dead process's job: %v", s.name, err)
		}
		enqueue(s, i, 0, 50)
	}
	for _, s := range shards {
		completed(s, 51)
		var attempt int
		if err := s.pool.QueryRow(ctx, `SELECT attempt FROM jobc_jobs_finished WHERE (payload->>'n')::int % 1000 = 999`).Scan(&attempt); err != nil {
			t.Fatalf("%s: the dead process's job: %v", s.name, err)
		}
		if attempt != 2 {
			t.Errorf("%s: the dead process's job completed on attempt %d, want 2 (rescued by this shard's maintenance)", s.name, attempt)
		}
	}

	// Shard 0 goes down; shard 1 keeps working.
	if err := shards[0].cluster.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	enqueue(shards[1], 1, 50, 30)
	completed(shards[1], 81)
	if err := shards[0].cluster.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// Its pool finds the server again by itself: no Reset.
	for deadline := time.Now().Add(wait); ; time.Sleep(cfg.PollInterval) {
		_, err := runtime.Enqueue(ctx, shards[0].pool, jt, emailPayload{N: 50, Email: "x@example.com"})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("shard 0 refused enqueues for %s after its server came back: %v", wait, err)
		}
	}
	enqueue(shards[0], 0, 51, 29)
	completed(shards[0], 81)

	for i, s := range shards {
		s.mu.Lock()
		for n, calls := range s.ran {
			if n/1000 != i {
				t.Errorf("%s's worker ran job %d, enqueued on shard %d", s.name, n, n/1000)
			}
			if calls != 1 && n%1000 != 999 {
				t.Errorf("%s: job %d ran %d times", s.name, n, calls)
			}
		}
		if len(s.ran) != 81 {
			t.Errorf("%s's handler saw %d distinct jobs, want 81", s.name, len(s.ran))
		}
		s.mu.Unlock()
	}
}
