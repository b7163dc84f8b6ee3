package completer

import (
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
