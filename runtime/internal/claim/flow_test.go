package claim

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"strings"
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
	q.AddFlowKind("a", "a", 1, 1)
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

// A kind whose only limit is its concurrency is claimed by the keys of its first jobs
// in claim order: each key gives what its limit still allows, the most urgent first,
// and says when it is at its limit; a full key's jobs are not touched (attempt and
// attempted_at as they were), and the walk of the keys finds nothing more.
func TestOptimisticClaimTakesWhatEachKeyAllows(t *testing.T) {
	pool := newDB(t)
	ctx := context.Background()
	q := flowQueue(t, pool, 2)
	busy := insertKeyed(t, pool, "x", 1) // another worker runs it
	if _, err := pool.Exec(ctx, `UPDATE jobc_jobs SET state = 'running', attempt = 1, attempted_at = now(),
		lease_owner = 'other', lease_expires_at = now() + interval '1 minute' WHERE id = $1`, busy); err != nil {
		t.Fatal(err)
	}
	x1, x2, x3 := insertKeyed(t, pool, "x", 1), insertKeyed(t, pool, "x", 2), insertKeyed(t, pool, "x", 3)
	y1, y2, z1 := insertKeyed(t, pool, "y", 1), insertKeyed(t, pool, "y", 2), insertKeyed(t, pool, "z", 5)
	// x3 failed an attempt before: left waiting, it keeps its attempt and attempted_at.
	before := time.Now().Add(-time.Hour).UTC().Truncate(time.Microsecond)
	if _, err := pool.Exec(ctx, `UPDATE jobc_jobs SET attempt = 1, attempted_at = $2 WHERE id = $1`, x3, before); err != nil {
		t.Fatal(err)
	}

	rows, err := q.Claim(ctx, db.New(pool), slog.New(slog.DiscardHandler), "claim-test", 30*time.Second, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	atLimit := map[int64]bool{}
	for _, r := range rows {
		got = append(got, r.ID)
		atLimit[r.ID] = r.AtLimit
	}
	slices.Sort(got)
	if want := []int64{x1, y1, y2, z1}; !slices.Equal(got, want) {
		t.Fatalf("claimed %v, want %v: x's most urgent job beside the one running, both of y's, z's", got, want)
	}
	if want := map[int64]bool{x1: true, y1: true, y2: true, z1: false}; !maps.Equal(atLimit, want) {
		t.Errorf("at_limit by job %v, want %v: x and y are at their limit of 2, z is not", atLimit, want)
	}
	for key, want := range map[string]int{"x": 2, "y": 2, "z": 1} {
		if n := runningOf(t, pool, key); n != want {
			t.Errorf("key %s: %d running after the claim, want %d", key, n, want)
		}
	}
	if s := readJob(t, pool, x2); s.State != "available" || s.Attempt != 0 || s.AttemptedAt != nil || s.Owner != nil {
		t.Errorf("job x2: %+v, want available, attempt 0, never attempted, no owner", s)
	}
	if s := readJob(t, pool, x3); s.State != "available" || s.Attempt != 1 || s.AttemptedAt == nil || !s.AttemptedAt.Equal(before) || s.Owner != nil {
		t.Errorf("job x3: %+v, want available, attempt 1, attempted at %s, no owner", s, before)
	}
}

// A claim of a key another claim holds (its lock, until that claim commits) skips the
// key rather than wait for it; once that claim has committed, the key's running jobs
// count it. Without the lock, or with a count in a snapshot taken before it, the
// second claim would not see the first's jobs and would run four jobs of a key
// limited to two.
func TestOptimisticClaimSkipsKeysAnotherClaimHolds(t *testing.T) {
	pool := newDB(t)
	ctx := context.Background()
	flowQueue(t, pool, 2)
	for i := range 4 {
		insertKeyed(t, pool, "x", i)
	}
	y := insertKeyed(t, pool, "y", 9)
	claimOn := func(on db.DBTX, max int) []int64 {
		t.Helper()
		q := NewQueue("q")
		q.AddFlowKind("a", "a", 1, 1)
		return claimSorted(t, on, q, max)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // committed below
	if held := claimOn(tx, 2); len(held) != 2 {
		t.Fatalf("the first claim leased %v, want 2 jobs of x", held)
	}
	// The first claim has not committed: its jobs are not visible, its lock is held.
	if got := claimOn(pool, 10); !slices.Equal(got, []int64{y}) {
		t.Fatalf("while the first claim holds x, the second leased %v, want only y's job %d", got, y)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := claimOn(pool, 10); len(got) != 0 {
		t.Fatalf("with x at its limit of 2, the third claim leased %v, want nothing", got)
	}
	if n := runningOf(t, pool, "x"); n != 2 {
		t.Errorf("%d jobs of key x running, want its limit of 2", n)
	}
}

// A fair kind's claims take its keys in turn: each claim's walk goes on after the last
// key the one before visited, whatever order its jobs come back in (claim order). Had
// it gone on after the key of the last job in claim order, a key the walk had just
// visited would come round again before the keys after it.
func TestFairClaimsGoOnWhereTheWalkStopped(t *testing.T) {
	pool := newDB(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_limits (scope, name, by_fields, fair, sequence) VALUES ('kind', 'f', '{key}', true, false)`); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-time.Minute)
	insert := func(key string) int64 {
		t.Helper()
		var id int64
		if err := pool.QueryRow(ctx, `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts, flow_key, available_at)
			VALUES ('f', 'q', 'available', 1, 1, '{}', 3, $1, $2) RETURNING id`, key, at).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	// In claim order b's first job comes before a's, so the first claim's jobs (a1
	// and b1) come back b1, a1.
	b1, a1, c1, d1 := insert("b"), insert("a"), insert("c"), insert("d")
	insert("a")
	insert("b")
	q := NewQueue("q")
	q.AddFlowKind("f", "f", 1, 1)
	claim := func(max int) []int64 { t.Helper(); return claimSorted(t, pool, q, max) }
	if got, want := claim(2), []int64{b1, a1}; !slices.Equal(got, []int64{min(a1, b1), max(a1, b1)}) {
		t.Fatalf("first claim: %v, want a's and b's first jobs %v", got, want)
	}
	if got := claim(2); !slices.Equal(got, []int64{c1, d1}) {
		t.Fatalf("second claim: %v, want c's and d's jobs %v: the walk stopped at b", got, []int64{c1, d1})
	}
}

// claimSorted claims up to max jobs of q on dbtx, as a fetch loop does, and returns
// their ids in order.
func claimSorted(t *testing.T, dbtx db.DBTX, q *Queue, max int) []int64 {
	t.Helper()
	ids, err := claimIDs(context.Background(), dbtx, q, max)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	return ids
}

// A busy fair kind's walk asks of each key with a hint whether it has a job after the
// hint, and that question reads the key's entries of jobc_jobs_flow_ready_idx on
// generic plans too (which plpgsql switches to after five calls). Asked as EXISTS,
// the generic plan expected a key's share of the table to match and read the table
// from its start, a whole table per hinted key without one: with a key of 50,000
// jobs beside small ones, single claims ran for seconds while small keys' jobs waited.
func TestHintedWalkReadsTheIndexOnGenericPlans(t *testing.T) {
	pool := newDB(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_limits (scope, name, by_fields, fair, sequence) VALUES ('kind', 'f', '{key}', true, false)`); err != nil {
		t.Fatal(err)
	}
	// One big key, with statistics taken while it is the only one (as when a tenant's
	// import arrives first), then five small keys of two jobs each.
	insert := func(keys string) {
		t.Helper()
		if _, err := pool.Exec(ctx, `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts, flow_key)
			SELECT 'f', 'q', 'available', 1, 1, '{}', 3, k FROM unnest($1::text[]) k`, strings.Split(keys, ",")); err != nil {
			t.Fatal(err)
		}
	}
	insert(strings.Repeat("big,", 4999) + "big")
	if _, err := pool.Exec(ctx, `ANALYZE jobc_jobs`); err != nil {
		t.Fatal(err)
	}
	insert("a0,a1,a2,a3,a4,a0,a1,a2,a3,a4")
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	q := NewQueue("q")
	q.AddFlowKind("f", "f", 1, 1)
	// The first claim takes a job of every key and comes back full: the next starts
	// each key after its hint.
	if got := claimSorted(t, conn, q, 6); len(got) != 6 {
		t.Fatalf("first claim leased %v, want a job of each of the 6 keys", got)
	}
	q.Fresh()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read only what this transaction did
	// The connection's scans not yet reported to the server, and so its own.
	seqScans := func() int64 {
		t.Helper()
		var n int64
		if err := tx.QueryRow(ctx, `SELECT seq_scan FROM pg_stat_xact_user_tables WHERE relid = 'jobc_jobs'::regclass`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := seqScans()
	got := claimSorted(t, tx, q, 6)
	scans := seqScans() - before
	if len(got) != 6 {
		t.Errorf("hinted claim leased %v, want the second job of each small key and the big key's next", got)
	}
	if scans != 0 {
		t.Errorf("the hinted claim read jobc_jobs from start to end %d times, want only index reads", scans)
	}
}

// Claims of flow kinds follow the plain claims' rule (TestExpensiveFullClaimsWaitForTheirTurn):
// once a claim from the start of every key took ExpensiveFullClaim, the claims start
// from the keys' hints even when they come back short, and the jobs sorting before a
// hint wait for the next claim from the start, due full.every() after that one.
func TestExpensiveFlowClaimsWaitForTheirTurn(t *testing.T) {
	pool := newDB(t)
	q := flowQueue(t, pool, 100)
	insert := func(ago time.Duration) int64 {
		t.Helper()
		var id int64
		if err := pool.QueryRow(t.Context(), `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts, flow_key, available_at)
			VALUES ('a', 'q', 'available', 5, 1, '{}', 3, 'k', now() - make_interval(secs => $1)) RETURNING id`, ago.Seconds()).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	claim := func(wantHinted bool, want ...int64) {
		t.Helper()
		hinted := q.flow.full.hinted(q.flow.busy, time.Now())
		got := claimSorted(t, pool, q, 10)
		if hinted != wantHinted || !slices.Equal(got, want) {
			t.Fatalf("claim: got %v (hinted %v), want %v (hinted %v)", got, hinted, want, wantHinted)
		}
	}
	first := insert(40 * time.Second)
	claim(false, first) // from the start, short: the key's hint is first
	const took = 50 * time.Millisecond
	q.flow.full = fullClaims{at: time.Now(), took: took} // as if that claim had taken took
	early, late := insert(50*time.Second), insert(0)
	claim(true, late)                                     // hinted though short
	claim(true)                                           // and again: early waits
	q.flow.full.at = time.Now().Add(-q.flow.full.every()) // its turn has come
	claim(false, early)
}
