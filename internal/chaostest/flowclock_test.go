//go:build unix

package chaostest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/cmd/testworker/chaosjob"
	"github.com/jobc-dev/jobc/runtime"
)

// TestFlowRateStalledClaim: a claim that is held up while it locks a rate window's row
// (its backend descheduled, as on a loaded machine) must still admit no more than the
// rate allows. A claim that read the clock before it locked the key's (or the
// queue's) row in jobc_flow_keys counted the starts of the window that ended at that
// time and recorded its starts at that time: if another claim locked the row, admitted
// and committed in between, and its later clock dropped from the row the starts the
// held-up claim's window still held, the held-up claim saw too few, admitted too many,
// and recorded starts earlier than any claim after it. A process-level run showed it:
// 12 worker processes of one slot each, a rate of 2 per 30ms on one key, every core
// kept busy (as TestExactlyOnceUnderLoad does) found one to three such windows in some
// runs. jobc_claim_flow now reads the clock after the lock (jobc_flow_lock).
//
// Here the hold-up is made certain with the lock queue: a transaction that holds a
// lock on jobc_flow_keys (the "first" claim's) keeps a waiting request for a
// conflicting one (the "blocker") in the queue, and the held-up claim's request, made
// after it read its clock, waits behind that (so the test relies on claims locking
// rows of jobc_flow_keys, as the schema documents). The starts are checked as the rate
// test checks them (TestFlowRateByKeyUnderKill, flowStartsTable): by the claims' own
// record (attempted_at), and by when each claim actually leased its jobs (the
// trigger's clock), the time a start happens.
//
// A queue's row is locked the same way, and its window checked the same way.
func TestFlowRateStalledClaim(t *testing.T) {
	t.Parallel()
	const per = time.Second
	rate := runtime.Rate{Limit: 2, Per: per}
	for _, tc := range []struct {
		name   string
		limits chaosjob.Limits
		// the jobc_limits row a worker with limits would register
		scope, limitName, by string
	}{
		{"key", chaosjob.Limits{Rate: rate}, "kind", chaosjob.Kind, "{" + chaosjob.KeyField + "}"},
		{"queue", chaosjob.Limits{QueueRate: rate}, "queue", chaosjob.DefaultQueue, "{}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			pool, _ := newDB(t)
			if _, err := pool.Exec(ctx, flowStartsTable); err != nil {
				t.Fatal(err)
			}
			if _, err := pool.Exec(ctx, `INSERT INTO jobc_limits (scope, name, by_fields, spec_rate_limit, spec_rate_per)
				VALUES ($1, $2, $3::text[], $4, make_interval(secs => $5))`, tc.scope, tc.limitName, tc.by, rate.Limit, per.Seconds()); err != nil {
				t.Fatal(err)
			}
			enqueueLimited(t, pool, tc.limits, keyedPayloads(8, 1, 0))

			// The window fills: two starts at t0.
			if n := len(claimFlow(t, ctx, pool, "first-window", 8)); n != rate.Limit {
				t.Fatalf("the first claim leased %d jobs, want %d (the rate's limit)", n, rate.Limit)
			}
			t0 := lastStart(t, pool)

			// The first claim's transaction takes its locks on jobc_flow_keys (those
			// of its claim) before the blocker asks for its own.
			first, err := pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = first.Rollback(context.WithoutCancel(ctx)) }()
			if _, err := first.Exec(ctx, `LOCK TABLE jobc_flow_keys IN ROW SHARE MODE; LOCK TABLE jobc_flow_keys IN ROW EXCLUSIVE MODE`); err != nil {
				t.Fatal(err)
			}
			blocker, err := pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = blocker.Rollback(context.WithoutCancel(ctx)) }()
			blocked := make(chan error, 1)
			go func() {
				_, err := blocker.Exec(ctx, `LOCK TABLE jobc_flow_keys IN EXCLUSIVE MODE`)
				if err == nil {
					err = blocker.Commit(ctx)
				}
				blocked <- err
			}()
			waitLockRequests(t, pool, []string{"ExclusiveLock"}, 1)

			// Within the window of t0, the held-up claim waits for its first lock on
			// jobc_flow_keys: a key's row is made (an insert) or locked (FOR UPDATE).
			held := make(chan []int64, 1)
			go func() { held <- claimFlow(t, ctx, pool, "held-up", 8) }()
			waitLockRequests(t, pool, []string{"RowShareLock", "RowExclusiveLock"}, 1)

			// Once the window of t0 is over, the first claim admits one job and
			// commits; its clock drops t0's starts from the row.
			sleepPast(t, pool, t0.Add(per+50*time.Millisecond))
			admitted := claimFlowIn(t, ctx, first, "first", 1)
			if err := first.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-blocked; err != nil {
				t.Fatal(err)
			}
			heldIDs := <-held
			// A later claim, once the held-up claim's recorded starts have left
			// their window, while the first's start is in its own.
			heldStart := lastStartOf(t, pool, heldIDs)
			var later []int64
			if !heldStart.IsZero() {
				sleepPast(t, pool, heldStart.Add(per+50*time.Millisecond))
				later = claimFlow(t, ctx, pool, "later", 8)
			}
			t.Logf("leased: 2 at t0, %d by the first claim, %d by the held-up one, %d by a later one", len(admitted), len(heldIDs), len(later))

			starts := readStartRecords(t, pool)
			var bad []string
			for i := rate.Limit; i < len(starts); i++ {
				if d := starts[i].attempted.Sub(starts[i-rate.Limit].attempted); d < per {
					bad = append(bad, fmt.Sprintf("recorded starts %d..%d (attempted_at) within %s", i-rate.Limit, i, d.Round(time.Millisecond)))
				}
			}
			leased := sortedBy(starts, func(s startRecord) time.Time { return s.leased })
			for i := rate.Limit; i < len(leased); i++ {
				if d := leased[i].leased.Sub(leased[i-rate.Limit].leased); d < per {
					bad = append(bad, fmt.Sprintf("starts %d..%d as leased (clock of the leasing UPDATE) within %s", i-rate.Limit, i, d.Round(time.Millisecond)))
				}
			}
			if len(bad) > 0 {
				t.Errorf("rate %s exceeded: %s; every start, by when it was leased:\n\t%s", rate.String(),
					strings.Join(bad, "; "), describeStartRecords(leased, t0))
			}
		})
	}
}

// claimFlow runs one flow claim of chaos_job (jobc_claim_flow, as a worker's
// ClaimFlowJobs runs it) of up to max jobs for owner, and returns the ids it leased.
func claimFlow(t *testing.T, ctx context.Context, pool *pgxpool.Pool, owner string, max int) []int64 {
	t.Helper()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Error(err)
		return nil
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	ids := claimFlowIn(t, ctx, tx, owner, max)
	if err := tx.Commit(ctx); err != nil {
		t.Error(err)
	}
	return ids
}

func claimFlowIn(t *testing.T, ctx context.Context, tx pgx.Tx, owner string, max int) []int64 {
	t.Helper()
	rows, err := tx.Query(ctx, `SELECT id FROM jobc_claim_flow($1, $2, $3, $4, $5, $6, $7, $8, $9, '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}') WHERE id IS NOT NULL`,
		chaosjob.DefaultQueue, []string{chaosjob.Kind}, []string{chaosjob.Kind}, []int32{1}, []int32{1}, []*string{nil},
		owner, 60.0, max)
	if err != nil {
		t.Error(err)
		return nil
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Error(err)
	}
	return ids
}

// waitLockRequests waits until n requests for one of modes on jobc_flow_keys wait.
func waitLockRequests(t *testing.T, pool *pgxpool.Pool, modes []string, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d waiting requests for %s on jobc_flow_keys", n, strings.Join(modes, " or ")), within(0, time.Second), func() (bool, string) {
		got := queryInt(t, pool, `SELECT count(*) FROM pg_locks WHERE relation = 'jobc_flow_keys'::regclass AND mode = ANY($1) AND NOT granted`, modes)
		return got == n, fmt.Sprintf("%d waiting", got)
	})
}

// sleepPast sleeps until the database's clock is past at.
func sleepPast(t *testing.T, pool *pgxpool.Pool, at time.Time) {
	t.Helper()
	var now time.Time
	if err := pool.QueryRow(t.Context(), `SELECT clock_timestamp()`).Scan(&now); err != nil {
		t.Fatal(err)
	}
	time.Sleep(at.Sub(now))
}

func lastStart(t *testing.T, pool *pgxpool.Pool) time.Time {
	t.Helper()
	var at time.Time
	if err := pool.QueryRow(t.Context(), `SELECT max(attempted_at) FROM flow_starts`).Scan(&at); err != nil {
		t.Fatal(err)
	}
	return at
}

// lastStartOf returns the latest recorded start of the jobs ids; zero if none.
func lastStartOf(t *testing.T, pool *pgxpool.Pool, ids []int64) time.Time {
	t.Helper()
	var at *time.Time
	if err := pool.QueryRow(t.Context(), `SELECT max(attempted_at) FROM flow_starts WHERE job_id = ANY($1)`, ids).Scan(&at); err != nil {
		t.Fatal(err)
	}
	if at == nil {
		return time.Time{}
	}
	return *at
}

// startRecord is one start flowStartsTable recorded: attempted_at as the claim set
// it, and leased, the clock when the claim's UPDATE leased the job.
type startRecord struct {
	job               int64
	owner             string
	attempted, leased time.Time
}

// readStartRecords returns every recorded start, by attempted_at.
func readStartRecords(t *testing.T, pool *pgxpool.Pool) []startRecord {
	t.Helper()
	rows, err := pool.Query(t.Context(), `SELECT job_id, owner, attempted_at, updated_at FROM flow_starts ORDER BY attempted_at, updated_at`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (startRecord, error) {
		var s startRecord
		err := r.Scan(&s.job, &s.owner, &s.attempted, &s.leased)
		return s, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sortedBy(starts []startRecord, at func(startRecord) time.Time) []startRecord {
	out := slices.Clone(starts)
	slices.SortStableFunc(out, func(a, b startRecord) int { return at(a).Compare(at(b)) })
	return out
}

func describeStartRecords(starts []startRecord, t0 time.Time) string {
	s := make([]string, len(starts))
	for i, r := range starts {
		s[i] = fmt.Sprintf("job %d by %s: attempted_at t0%+.3fs, leased t0%+.3fs", r.job, r.owner,
			r.attempted.Sub(t0).Seconds(), r.leased.Sub(t0).Seconds())
	}
	return strings.Join(s, "\n\t")
}
