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

// The claim takes only (kind, version) pairs the worker decodes, the most urgent ones
// across all of them, and skips rows another transaction holds. (It returns them in
// no particular order: the set is what counts.)
func TestClaimTakesDecodablePairsInOrder(t *testing.T) {
	pool := newDB(t)
	ctx := context.Background()
	insert := func(kind string, version, priority int) int64 {
		t.Helper()
		var id int64
		err := pool.QueryRow(ctx, `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts)
			VALUES ($1, 'q', 'available', $2, $3, '{}', 3) RETURNING id`, kind, priority, version).Scan(&id)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	aNew := insert("a", 2, 1) // a newer deploy's version: not decodable here
	bOld := insert("b", 1, 4)
	a1 := insert("a", 1, 5)
	cAny := insert("c", 1, 1) // a kind this worker does not handle
	b3 := insert("b", 3, 2)
	a1Late := insert("a", 1, 5)
	b2 := insert("b", 2, 6)
	other := insert("b", 3, 1)
	if _, err := pool.Exec(ctx, `UPDATE jobc_jobs SET queue = 'other' WHERE id = $1`, other); err != nil {
		t.Fatal(err)
	}
	kinds := map[string][2]int{"a": {1, 1}, "b": {1, 3}}

	// Another worker's claim holds the most urgent decodable job.
	held, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Rollback(ctx) //nolint:errcheck // released at the end of the test
	if _, err := held.Exec(ctx, `SELECT 1 FROM jobc_jobs WHERE id = $1 FOR UPDATE`, b3); err != nil {
		t.Fatal(err)
	}

	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only check
	got, err := claimIDs(ctx, tx, testQueue("q", kinds), 3)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := []int64{bOld, a1, a1Late}; !slices.Equal(got, want) {
		t.Fatalf("claimed %v, want %v (b3=%d held elsewhere, b2=%d after them, a v2=%d and c=%d not decodable)", got, want, b3, b2, aNew, cAny)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := held.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	got, err = claimIDs(ctx, pool, testQueue("q", kinds), 10)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := []int64{bOld, a1, b3, a1Late, b2}; !slices.Equal(got, want) {
		t.Fatalf("claimed %v, want %v", got, want)
	}
	var running int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM jobc_jobs WHERE state = 'running'`).Scan(&running); err != nil || running != 5 {
		t.Fatalf("%d jobs running after the claim, want 5 (%v)", running, err)
	}
}

// TestBusyClaimsStartAfterTheirHint: while a queue is busy, its claims start after the
// last job they claimed, so they do not step over the dead index entries of the jobs
// claimed before; a job made available since with an earlier available_at waits for a
// claim that reads from the start, which a short claim makes at once. A more urgent job
// is never held back.
func TestBusyClaimsStartAfterTheirHint(t *testing.T) {
	pool := newDB(t)
	insert := func(priority int, ago time.Duration) int64 { return insertJobA(t, pool, priority, ago) }
	a1, a2, a3, a4 := insert(5, 40*time.Second), insert(5, 30*time.Second), insert(5, 20*time.Second), insert(5, 10*time.Second)
	q := testQueue("q", map[string][2]int{"a": {1, 1}})
	claim := func(max int, wantHinted bool, want ...int64) {
		t.Helper()
		wantClaim(t, pool, q, max, wantHinted, want...)
	}

	claim(2, false, a1, a2)            // full: the queue is busy, and the hint is a2
	early := insert(5, 35*time.Second) // a scheduled job whose time came: before the hint
	urgent := insert(1, 0)
	q.Fresh()
	claim(2, true, urgent, a3) // the urgent job, and the job after the hint
	q.Fresh()
	// After the hint only a4 is left: the claim comes back short, and one from the start
	// finds the early job before the queue is taken for drained.
	claim(10, true, a4, early)
	q.Fresh()        // (a slow machine's claim from the start must not count as expensive)
	claim(10, false) // drained
}

// TestExpensiveFullClaimsWaitForTheirTurn: once a claim from the start took
// ExpensiveFullClaim or more (a snapshot held open leaves every claimed job's entry to
// step over), the claims start from their hints even though the queue is not busy, and
// a short one is not followed by a claim from the start: a job that sorts before the
// hint waits for the next one, due FullClaimShare times that claim's duration after
// it, and is claimed then.
func TestExpensiveFullClaimsWaitForTheirTurn(t *testing.T) {
	q, insert, claim := hintedQueue(t) // from the start, short: the hint is its one job
	const took = 50 * time.Millisecond
	q.full = fullClaims{at: time.Now(), took: took} // as if that claim had taken took
	early, late := insert(50*time.Second), insert(0)
	claim(10, true, late) // hinted though short; no claim from the start follows
	claim(10, true)       // nor now
	if every := q.full.every(); every != FullClaimShare*took {
		t.Fatalf("claims from the start every %s after one that took %s, want %s", every, took, FullClaimShare*took)
	}
	q.full.at = time.Now().Add(-q.full.every()) // its turn has come
	claim(10, false, early)
}

// While claims from the start are expensive, one that takes nothing of a pair leaves
// the pair's hint where it was: the hinted claims after it go on from there instead
// of reading the pair from its start (every dead entry, under a held snapshot).
func TestExpensiveFullClaimKeepsHints(t *testing.T) {
	q, insert, claim := hintedQueue(t)
	const took = 50 * time.Millisecond
	q.full = fullClaims{at: time.Now().Add(-FullClaimShare * took), took: took} // expensive, and its turn has come
	claim(10, false)                                                            // from the start: nothing to take
	q.full.took = took                                                          // as if it too had taken that long
	early, late := insert(50*time.Second), insert(0)
	claim(10, true, late) // from the hint: early, before it, waits
	q.full.at = time.Now().Add(-q.full.every())
	claim(10, false, early)
}

// hintedQueue is a queue of pair (a, 1) whose claim from the start took its one job,
// which is the pair's hint, with an insert of a job of a available since ago and a
// checked claim (wantClaim).
func hintedQueue(t *testing.T) (*Queue, func(ago time.Duration) int64, func(max int, wantHinted bool, want ...int64)) {
	t.Helper()
	pool := newDB(t)
	insert := func(ago time.Duration) int64 { return insertJobA(t, pool, 5, ago) }
	q := testQueue("q", map[string][2]int{"a": {1, 1}})
	claim := func(max int, wantHinted bool, want ...int64) {
		t.Helper()
		wantClaim(t, pool, q, max, wantHinted, want...)
	}
	first := insert(40 * time.Second)
	claim(10, false, first)
	return q, insert, claim
}

// insertJobA inserts an available job of kind a on queue q, of priority, available
// since ago, and returns its id.
func insertJobA(t *testing.T, pool *pgxpool.Pool, priority int, ago time.Duration) int64 {
	t.Helper()
	var id int64
	err := pool.QueryRow(t.Context(), `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts, available_at)
		VALUES ('a', 'q', 'available', $1, 1, '{}', 3, now() - make_interval(secs => $2)) RETURNING id`, priority, ago.Seconds()).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// wantClaim claims up to max jobs of q and fails unless it claimed want (in any order)
// and started from the hints as wantHinted says.
func wantClaim(t *testing.T, pool *pgxpool.Pool, q *Queue, max int, wantHinted bool, want ...int64) {
	t.Helper()
	hinted := q.Hinted(time.Now())
	got, err := claimIDs(t.Context(), pool, q, max)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if hinted != wantHinted || !slices.Equal(got, want) {
		t.Fatalf("claim of %d: got %v (hinted %v), want %v (hinted %v)", max, got, hinted, want, wantHinted)
	}
}

// No claim takes a job of a paused queue, whatever the worker believes: every claim
// statement (from the start, from the hints, of flow kinds, and one job at a time
// after a row's fault) asks jobc_queues itself, so a worker that missed the pause's
// notification and has not polled since still claims nothing once the pause has
// committed. After a resume they claim again.
func TestPausedQueueClaimsNothing(t *testing.T) {
	ctx := context.Background()
	setPaused := func(t *testing.T, pool *pgxpool.Pool, paused bool) {
		t.Helper()
		// As PauseQueue writes it, without its notification: no worker hears of it.
		if _, err := pool.Exec(ctx, `INSERT INTO jobc_queues (name, paused_at) VALUES ('q', CASE WHEN $1 THEN now() END)
			ON CONFLICT (name) DO UPDATE SET paused_at = excluded.paused_at`, paused); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("from the start and from the hints", func(t *testing.T) {
		pool := newDB(t)
		q := testQueue("q", map[string][2]int{"a": {1, 1}})
		claim := func(max int, wantHinted bool, want ...int64) {
			t.Helper()
			wantClaim(t, pool, q, max, wantHinted, want...)
		}
		id := insertJobA(t, pool, 5, 30*time.Second)
		claim(1, false, insertJobA(t, pool, 5, 40*time.Second)) // busy: leaves a hint
		setPaused(t, pool, true)
		claim(10, true) // hinted: ClaimJobsAfter, then ClaimJobs from the start
		if q.Hinted(time.Now()) {
			t.Fatal("a claim of nothing left the queue hinted")
		}
		claim(10, false) // ClaimJobs
		if s := readJob(t, pool, id); s.State != "available" || s.Attempt != 0 {
			t.Fatalf("job %d of the paused queue: %+v, want available and never attempted", id, s)
		}
		setPaused(t, pool, false)
		claim(10, false, id)
	})
	t.Run("flow kinds", func(t *testing.T) {
		pool := newDB(t)
		q := flowQueue(t, pool, 5)
		id := insertKeyed(t, pool, "k", 5)
		setPaused(t, pool, true)
		if got := claimSorted(t, pool, q, 10); len(got) != 0 {
			t.Fatalf("the paused queue's flow claim took %v", got)
		}
		setPaused(t, pool, false)
		if got := claimSorted(t, pool, q, 10); !slices.Equal(got, []int64{id}) {
			t.Fatalf("after the resume the flow claim took %v, want [%d]", got, id)
		}
	})
	t.Run("one job at a time", func(t *testing.T) {
		pool := newDB(t)
		q := testQueue("q", map[string][2]int{"a": {1, 1}})
		id := insertJobA(t, pool, 5, time.Second)
		setPaused(t, pool, true)
		rows, err := q.claimAlone(ctx, db.New(pool), slog.New(slog.DiscardHandler), db.ClaimJobsParams{Owner: "claim-test", LeaseSeconds: 30}, 10)
		if err != nil || len(rows) != 0 {
			t.Fatalf("claimAlone of the paused queue: %d jobs, %v; want none", len(rows), err)
		}
		setPaused(t, pool, false)
		rows, err = q.claimAlone(ctx, db.New(pool), slog.New(slog.DiscardHandler), db.ClaimJobsParams{Owner: "claim-test", LeaseSeconds: 30}, 10)
		if err != nil || len(rows) != 1 || rows[0].ID != id {
			t.Fatalf("claimAlone after the resume: %v, %v; want job %d", rows, err, id)
		}
	})
}
