package claim

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// flowQueue is the claims of queue q for kind a, whose spec limits its concurrency
// by key alone (limit), as a worker that registered it builds them.
func flowQueue(t *testing.T, pool *pgxpool.Pool, limit int) *Queue {
	t.Helper()
	if _, err := pool.Exec(context.Background(), `INSERT INTO jobc_limits (scope, name, by_fields, fair, sequence, spec_concurrency)
		VALUES ('kind', 'a', '{key}', false, false, $1)`, limit); err != nil {
		t.Fatal(err)
	}
	q := NewQueue("q")
	q.AddFlowKind("a", "a", 1, 1, true)
	return q
}

// insertKeyed inserts an available job of kind a with flow key key and returns its id.
func insertKeyed(t *testing.T, pool *pgxpool.Pool, key string, priority int) int64 {
	t.Helper()
	var id int64
	if err := pool.QueryRow(context.Background(), `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts, flow_key)
		VALUES ('a', 'q', 'available', $1, 1, '{}', 3, $2) RETURNING id`, priority, key).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

type jobState struct {
	State       string
	Attempt     int
	AttemptedAt *time.Time
	Owner       *string
}

func readJob(t *testing.T, pool *pgxpool.Pool, id int64) jobState {
	t.Helper()
	var s jobState
	if err := pool.QueryRow(context.Background(), `SELECT state::text, attempt, attempted_at, lease_owner FROM jobc_jobs WHERE id = $1`, id).
		Scan(&s.State, &s.Attempt, &s.AttemptedAt, &s.Owner); err != nil {
		t.Fatal(err)
	}
	return s
}

func runningOf(t *testing.T, pool *pgxpool.Pool, key string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM jobc_jobs WHERE flow_key = $1 AND state = 'running'`, key).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// An optimistic claim leases the kind's first jobs in claim order whatever their keys,
// then gives back what each key's limit does not allow, the least urgent first, as
// they were (attempt and attempted_at); it keeps the rest, says which keys are at
// their limits, and the queue's claims of the kind walk the keys for a while after.
func TestOptimisticClaimGivesBackWhatTheLimitDoesNotAllow(t *testing.T) {
	pool := newDB(t)
	ctx := context.Background()
	q := flowQueue(t, pool, 2)
	busy := insertKeyed(t, pool, "x", 1) // another worker runs it
	if _, err := pool.Exec(ctx, `UPDATE jobc_jobs SET state = 'running', attempt = 1, attempted_at = now(),
		lease_owner = 'other', lease_expires_at = now() + interval '1 minute' WHERE id = $1`, busy); err != nil {
		t.Fatal(err)
	}
	x1, x2, x3 := insertKeyed(t, pool, "x", 1), insertKeyed(t, pool, "x", 2), insertKeyed(t, pool, "x", 3)
	y1, y2 := insertKeyed(t, pool, "y", 1), insertKeyed(t, pool, "y", 2)
	// x3 failed an attempt before: a give-back keeps its attempt and attempted_at.
	before := time.Now().Add(-time.Hour).UTC().Truncate(time.Microsecond)
	if _, err := pool.Exec(ctx, `UPDATE jobc_jobs SET attempt = 1, attempted_at = $2 WHERE id = $1`, x3, before); err != nil {
		t.Fatal(err)
	}

	rows, err := q.Claim(ctx, db.New(pool), slog.New(slog.DiscardHandler), "claim-test", 30*time.Second, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, r := range rows {
		got = append(got, r.ID)
		if !r.AtLimit {
			t.Errorf("job %d leased without at_limit; both keys are at their limit of 2", r.ID)
		}
	}
	slices.Sort(got)
	if want := []int64{x1, y1, y2}; !slices.Equal(got, want) {
		t.Fatalf("claimed %v, want %v: x's most urgent job beside the one running, and both of y's", got, want)
	}
	for key, want := range map[string]int{"x": 2, "y": 2} {
		if n := runningOf(t, pool, key); n != want {
			t.Errorf("key %s: %d running after the claim, want %d", key, n, want)
		}
	}
	if s := readJob(t, pool, x2); s.State != "available" || s.Attempt != 0 || s.AttemptedAt != nil || s.Owner != nil {
		t.Errorf("given-back job x2: %+v, want available, attempt 0, never attempted, no owner", s)
	}
	if s := readJob(t, pool, x3); s.State != "available" || s.Attempt != 1 || s.AttemptedAt == nil || !s.AttemptedAt.Equal(before) || s.Owner != nil {
		t.Errorf("given-back job x3: %+v, want available, attempt 1, attempted at %s, no owner", s, before)
	}
	if until := q.flow.walkUntil[0]; time.Until(until) <= 0 {
		t.Errorf("after a give-back the kind's claims walk until %s, which has passed", until)
	}
}

// A claim that counts a key waits for the key's lock, which a claim of the key holds
// until it commits: an optimistic claim that leased jobs of a key while another claim
// of it had not committed counts that claim's jobs once it has, and gives its own
// back. Without the wait, it would count in a snapshot without them and run four jobs
// of a key limited to two.
func TestOptimisticClaimWaitsForTheKeysClaimsHold(t *testing.T) {
	pool := newDB(t)
	ctx := context.Background()
	flowQueue(t, pool, 2)
	for i := range 4 {
		insertKeyed(t, pool, "x", i)
	}
	first := NewQueue("q")
	first.AddFlowKind("a", "a", 1, 1, true)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // committed below
	held, err := first.Claim(ctx, db.New(tx), slog.New(slog.DiscardHandler), "first", 30*time.Second, 2)
	if err != nil || len(held) != 2 {
		t.Fatalf("the first claim leased %d jobs (%v), want 2", len(held), err)
	}

	second := NewQueue("q")
	second.AddFlowKind("a", "a", 1, 1, true)
	type result struct {
		rows []Claimed
		err  error
	}
	done := make(chan result, 1)
	go func() {
		rows, err := second.Claim(ctx, db.New(pool), slog.New(slog.DiscardHandler), "second", 30*time.Second, 2)
		done <- result{rows, err}
	}()
	// The second claim leases the two jobs the first does not hold, then waits for
	// the key's lock.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var waiting int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting == 1 {
			break
		}
		select {
		case r := <-done:
			t.Fatalf("the second claim returned %d jobs (%v) while the first held the key's lock", len(r.rows), r.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10s, %d sessions wait for an advisory lock, want the second claim's", waiting)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || len(r.rows) != 0 {
		t.Fatalf("the second claim leased %d jobs (%v), want none: the key is at its limit with the first claim's", len(r.rows), r.err)
	}
	if n := runningOf(t, pool, "x"); n != 2 {
		t.Errorf("%d jobs of key x running, want its limit of 2", n)
	}
}
