package completer

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/lease"
	"github.com/jobc-dev/jobc/runtime/internal/migrate"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// lostReply runs statements on a real database, but the first one whose text starts
// with statement has its reply lost after the server committed it, as when the
// connection breaks or the caller's deadline passes at that moment: the statement's
// work is done, the caller sees an error. lost runs in between, while the caller
// waits for a reply that never comes.
type lostReply struct {
	*pgxpool.Pool
	statement string
	lost      func(ctx context.Context)
	done      bool
}

func (l *lostReply) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if l.done || !strings.HasPrefix(sql, l.statement) {
		return l.Pool.Query(ctx, sql, args...)
	}
	l.done = true
	rows, err := l.Pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	rows.Close() // reads every row and the commit's outcome
	if err := rows.Err(); err != nil {
		return nil, err
	}
	l.lost(ctx)
	return nil, fmt.Errorf("the connection broke before the reply: %w", io.ErrUnexpectedEOF)
}

func (l *lostReply) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return l.Pool.Exec(ctx, sql, args...)
}

func (l *lostReply) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return l.Pool.QueryRow(ctx, sql, args...)
}

// An outcome that gives a job back to its queue, recorded again because its first
// reply was lost, leaves alone a later claim of the job by the same worker: the job
// that worker runs now stays running and leased to it, and no other worker can claim
// it. A snooze does not count its attempt, so that later claim leases the same
// attempt number; had the repeat taken it, the job would run twice at once.
func TestRepeatedOutcomeLeavesLaterClaimAlone(t *testing.T) {
	for _, o := range []Outcome{Snooze, Retry} {
		t.Run(o.String(), func(t *testing.T) {
			ctx := t.Context()
			pool := pgtest.NewSchema(t, func(ctx context.Context, pool *pgxpool.Pool) error {
				_, err := migrate.Up(ctx, pool)
				return err
			})
			const owner, leaseFor = "w1", 30 * time.Second
			if _, err := pool.Exec(ctx, `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts)
				VALUES ('k', 'q', 'available', 1, 1, '{}', 5)`); err != nil {
				t.Fatal(err)
			}
			held := lease.NewHeld()
			claim := func(ctx context.Context) db.ClaimJobsRow {
				t.Helper()
				rows, err := db.New(pool).ClaimJobs(ctx, db.ClaimJobsParams{
					Owner: owner, LeaseSeconds: leaseFor.Seconds(), Queue: "q",
					Kinds: []string{"k"}, Versions: []int32{1}, Max: 1,
				})
				if err != nil || len(rows) != 1 {
					t.Fatalf("claim: %d rows, %v; want the job", len(rows), err)
				}
				held.Add(rows[0].ID, rows[0].Attempt, time.Now().Add(leaseFor))
				return rows[0]
			}
			first := claim(ctx)

			var second db.ClaimJobsRow
			q := &lostReply{Pool: pool, statement: "-- name: RetryJobs ", lost: func(ctx context.Context) {
				// The job is due at once, so the worker's next claim takes it
				// again before the completer tries once more.
				second = claim(ctx)
			}}
			c := New(Config{Queries: db.New(q), Owner: owner, StatementTimeout: 10 * time.Second, Held: held,
				Log: slog.New(slog.DiscardHandler)})
			results := make(chan Result, 1)
			results <- Result{ID: first.ID, Attempt: first.Attempt, ClaimedAt: first.AvailableAt, Outcome: o,
				RunAt: time.Now(), Error: []byte(`{"error":"planned"}`)}
			close(results)
			c.Run(ctx, results)

			if !q.done || second.ID != first.ID {
				t.Fatalf("the job was not claimed again after the lost reply (claimed %+v)", second)
			}
			var state, leasedTo string
			var attempt int32
			if err := pool.QueryRow(ctx, `SELECT state::text, coalesce(lease_owner, ''), attempt FROM jobc_jobs WHERE id = $1`, first.ID).
				Scan(&state, &leasedTo, &attempt); err != nil {
				t.Fatal(err)
			}
			if state != "running" || leasedTo != owner || attempt != second.Attempt {
				t.Errorf("after the %s outcome of attempt %d was recorded twice and the job claimed again in between (attempt %d): "+
					"job is %s, leased to %q, attempt %d; want it still running, leased to %q, attempt %d",
					o, first.Attempt, second.Attempt, state, leasedTo, attempt, owner, second.Attempt)
			}
		})
	}
}

// claimed migrates a new schema, makes n jobs and claims them for owner (claimJobs), and
// returns the pool, the leases held and the claimed rows.
func claimed(t testing.TB, owner string, n int) (*pgxpool.Pool, *lease.Held, []db.ClaimJobsRow) {
	t.Helper()
	pool := pgtest.NewSchema(t, func(ctx context.Context, pool *pgxpool.Pool) error {
		_, err := migrate.Up(ctx, pool)
		return err
	})
	held := lease.NewHeld()
	return pool, held, claimJobs(t, pool, held, owner, n)
}

// claimJobs makes n jobs of kind k in queue q and claims them for owner, whose leases
// held then holds.
func claimJobs(t testing.TB, pool *pgxpool.Pool, held *lease.Held, owner string, n int) []db.ClaimJobsRow {
	t.Helper()
	ctx := t.Context()
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts)
		SELECT 'k', 'q', 'available', 1, 1, '{}', 5 FROM generate_series(1, $1)`, n); err != nil {
		t.Fatal(err)
	}
	const leaseFor = 30 * time.Second
	rows, err := db.New(pool).ClaimJobs(ctx, db.ClaimJobsParams{
		Owner: owner, LeaseSeconds: leaseFor.Seconds(), Queue: "q", Kinds: []string{"k"}, Versions: []int32{1}, Max: int32(n),
	})
	if err != nil || len(rows) != n {
		t.Fatalf("claim: %d rows, %v; want %d", len(rows), err, n)
	}
	for _, r := range rows {
		held.Add(r.ID, r.Attempt, time.Now().Add(leaseFor))
	}
	return rows
}

// runBatch records results as one batch: they are all waiting when Run starts.
func runBatch(t testing.TB, c *Completer, results ...Result) {
	t.Helper()
	ch := make(chan Result, len(results))
	for _, r := range results {
		ch <- r
	}
	close(ch)
	c.Run(t.Context(), ch)
}

// A batch that mixes every kind of outcome is written in one transaction, so its
// commit flushes the WAL once: statement triggers note the transaction of every
// statement that moves a job.
func TestMixedBatchCommitsOnce(t *testing.T) {
	ctx := t.Context()
	const owner = "w1"
	pool, held, rows := claimed(t, owner, 6)
	if _, err := pool.Exec(ctx, `
		CREATE TABLE seen (xact xid8 NOT NULL, tbl text NOT NULL, op text NOT NULL);
		CREATE FUNCTION note_xact() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN INSERT INTO seen VALUES (pg_current_xact_id(), TG_TABLE_NAME, TG_OP); RETURN NULL; END $$;
		CREATE TRIGGER note AFTER UPDATE OR DELETE ON jobc_jobs FOR EACH STATEMENT EXECUTE FUNCTION note_xact();
		CREATE TRIGGER note AFTER INSERT ON jobc_jobs_finished FOR EACH STATEMENT EXECUTE FUNCTION note_xact();`); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	outcomes := []Outcome{Complete, Fail, Cancel, Retry, Snooze, Release}
	results := make([]Result, len(rows))
	for i, r := range rows {
		results[i] = Result{ID: r.ID, Attempt: r.Attempt, ClaimedAt: r.AvailableAt, Outcome: outcomes[i], RunAt: later,
			Error: []byte(`{"error":"planned"}`)}
	}
	c := New(Config{Queries: db.New(pool), Conn: pool, Owner: owner, StatementTimeout: 10 * time.Second, Held: held,
		Log: slog.New(slog.DiscardHandler)})
	runBatch(t, c, results...)

	var xacts, statements int
	var seen string
	if err := pool.QueryRow(ctx, `SELECT count(DISTINCT xact), count(*), string_agg(tbl || ' ' || op || ' in ' || xact::text, ', ') FROM seen`).
		Scan(&xacts, &statements, &seen); err != nil {
		t.Fatal(err)
	}
	if xacts != 1 || statements < len(outcomes) {
		t.Errorf("a batch of %d kinds of outcome took %d transactions for %d statements (%s); want one transaction", len(outcomes), xacts, statements, seen)
	}
	// And each outcome took effect.
	want := []string{"completed", "failed", "cancelled", "scheduled", "scheduled", "available"}
	got := states(t, pool)
	for i, r := range rows {
		if got[r.ID] != want[i] {
			t.Errorf("job %d (%s): %s, want %s", r.ID, outcomes[i], got[r.ID], want[i])
		}
	}
}

// A mixed batch in which one job's row fails its statement writes the others' outcomes
// and poisons that job alone: the batch's transaction fails as a whole, and the kinds
// are then written one at a time, where the job is found.
func TestMixedBatchWithABadRow(t *testing.T) {
	const owner = "w1"
	pool, held, rows := claimed(t, owner, 3)
	later := time.Now().Add(time.Hour)
	c := New(Config{Queries: db.New(pool), Conn: pool, Owner: owner, StatementTimeout: 10 * time.Second, Held: held,
		Log: slog.New(slog.DiscardHandler)})
	runBatch(t, c,
		Result{ID: rows[0].ID, Attempt: rows[0].Attempt, ClaimedAt: rows[0].AvailableAt, Outcome: Complete},
		Result{ID: rows[1].ID, Attempt: rows[1].Attempt, ClaimedAt: rows[1].AvailableAt, Outcome: Retry, RunAt: later, Error: []byte(`{"error":"planned"}`)},
		// Not JSON: the statement that fails jobs refuses it (22P02), a row's fault.
		Result{ID: rows[2].ID, Attempt: rows[2].Attempt, ClaimedAt: rows[2].AvailableAt, Outcome: Fail, Error: []byte(`not json`)},
	)
	got := states(t, pool)
	if got[rows[0].ID] != "completed" || got[rows[1].ID] != "scheduled" || got[rows[2].ID] != "failed" {
		t.Errorf("completed, retried, bad failure: %s, %s, %s; want completed, scheduled, failed (poisoned)",
			got[rows[0].ID], got[rows[1].ID], got[rows[2].ID])
	}
	var reason string
	if err := pool.QueryRow(t.Context(), `SELECT errors::text FROM jobc_jobs_finished WHERE id = $1`, rows[2].ID).Scan(&reason); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(reason, "failed on this job alone") {
		t.Errorf("the bad job's errors are %s; want the poisoning's reason", reason)
	}
}

// states returns every job's state, waiting or finished, by id.
func states(t *testing.T, pool *pgxpool.Pool) map[int64]string {
	t.Helper()
	rows, err := pool.Query(t.Context(), `SELECT id, state::text FROM jobc_jobs UNION ALL SELECT id, state::text FROM jobc_jobs_finished`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]string{}
	for rows.Next() {
		var id int64
		var s string
		if err := rows.Scan(&id, &s); err != nil {
			t.Fatal(err)
		}
		out[id] = s
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// A batch written again because the reply to its first try was lost finds its jobs
// already recorded by that try. The worker says that the retry recorded nothing and
// why it may be so; it used to report the jobs' leases expired and the jobs rescued,
// which sends the person on call after a stall that never happened.
func TestRetryAfterALostReplySaysSo(t *testing.T) {
	ctx := t.Context()
	const owner = "w1"
	pool, held, rows := claimed(t, owner, 2)
	q := &lostReply{Pool: pool, statement: "-- name: CompleteJobs ", lost: func(context.Context) {}}
	var log bytes.Buffer
	c := New(Config{Queries: db.New(q), Owner: owner, StatementTimeout: 10 * time.Second, Held: held,
		Log: slog.New(slog.NewTextHandler(&log, nil))})
	var rs []Result
	for _, r := range rows {
		rs = append(rs, Result{ID: r.ID, Attempt: r.Attempt, ClaimedAt: r.AvailableAt, Outcome: Complete})
	}
	runBatch(t, c, rs...)

	if !q.done {
		t.Fatal("the completion's reply was never lost")
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM jobc_jobs_finished WHERE state = 'completed'`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d jobs completed (%v), want 2: the first try committed", n, err)
	}
	if strings.Contains(log.String(), "lease expired before it finished") || !strings.Contains(log.String(), "the try whose reply was lost recorded it") {
		t.Errorf("the log of a retry that found its jobs recorded by the try whose reply was lost:\n%s", log.String())
	}
	if c.retrying {
		t.Error("the completer still counts itself retrying after the batch was written")
	}
}
