package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// SQL is the ceiling: the same work as the job systems done with hand-written SQL on
// a minimal job table, with no validation, no retries, no leases to extend, no
// notifications and no bookkeeping. Enqueue is a plain INSERT in the business
// transaction (COPY for batches); the worker claims up to FetchBatch available jobs
// with FOR UPDATE SKIP LOCKED, runs them on Concurrency goroutines and deletes them by
// id in batches of up to FetchBatch, on the same pool. Deleting is the least a
// completion can write (jobc moves the row to jobc_jobs_finished, River updates it
// in place), and it keeps the table small, as jobc's move does.
//
// newSQL(true) ("sql-keep") does the rest of the work jobc's rows carry, still by hand
// and on a minimal table: a claim writes a lease (owner and expiry, in an index a
// rescuer would walk), and a completion moves the row into sql_jobs_finished, keyed by
// id, in one statement, so that what ran stays there to be looked up. That is the least
// a queue that survives a crashed worker and keeps its history writes per job.
type SQL struct {
	name            string
	tables          []string
	schema          string
	claim, complete string
}

// newSQL returns the ceiling "sql", or with keep "sql-keep".
func newSQL(keep bool) *SQL {
	if keep {
		return &SQL{
			name: "sql-keep", tables: []string{"sql_jobs", "sql_jobs_finished"},
			schema: sqlSchema + sqlKeepSchema, claim: sqlKeepClaim, complete: sqlKeepComplete,
		}
	}
	return &SQL{name: "sql", tables: []string{"sql_jobs"}, schema: sqlSchema, claim: sqlClaim, complete: sqlComplete}
}

const sqlSchema = `
CREATE TABLE sql_jobs (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind         text        NOT NULL,
    state        text        NOT NULL DEFAULT 'available',
    priority     smallint    NOT NULL DEFAULT 5,
    payload      jsonb       NOT NULL,
    available_at timestamptz NOT NULL DEFAULT now(),
    attempt      integer     NOT NULL DEFAULT 0
);
CREATE INDEX sql_jobs_claim_idx ON sql_jobs (priority, available_at, id) WHERE state = 'available';
`

// sqlKeepSchema is added for sql-keep.
const sqlKeepSchema = `
ALTER TABLE sql_jobs ADD COLUMN lease_owner text, ADD COLUMN lease_expires_at timestamptz;
CREATE INDEX sql_jobs_lease_idx ON sql_jobs (lease_expires_at) WHERE state = 'running';
CREATE TABLE sql_jobs_finished (
    id          bigint      PRIMARY KEY,
    kind        text        NOT NULL,
    payload     jsonb       NOT NULL,
    attempt     integer     NOT NULL,
    finished_at timestamptz NOT NULL DEFAULT now()
);
`

const (
	sqlInsert = `INSERT INTO sql_jobs (kind, payload) VALUES ('bench_noop', $1) RETURNING id`
	sqlClaim  = `UPDATE sql_jobs SET state = 'running', attempt = attempt + 1
WHERE id = ANY(ARRAY(
    SELECT id FROM sql_jobs WHERE state = 'available'
    ORDER BY priority, available_at, id LIMIT $1 FOR UPDATE SKIP LOCKED))
RETURNING id, payload`
	sqlComplete = `DELETE FROM sql_jobs WHERE id = ANY($1) AND state = 'running'`

	sqlKeepClaim = `UPDATE sql_jobs SET state = 'running', attempt = attempt + 1,
    lease_owner = 'bench', lease_expires_at = now() + interval '30 seconds'
WHERE id = ANY(ARRAY(
    SELECT id FROM sql_jobs WHERE state = 'available'
    ORDER BY priority, available_at, id LIMIT $1 FOR UPDATE SKIP LOCKED))
RETURNING id, payload`
	sqlKeepComplete = `WITH done AS (
    DELETE FROM sql_jobs WHERE id = ANY($1) AND state = 'running' AND lease_owner = 'bench'
    RETURNING id, kind, payload, attempt)
INSERT INTO sql_jobs_finished (id, kind, payload, attempt) SELECT id, kind, payload, attempt FROM done`
)

func (s *SQL) Name() string     { return s.name }
func (s *SQL) Tables() []string { return s.tables }

func (s *SQL) Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	_, err := pool.Exec(ctx, s.schema)
	return err
}

func sqlRows(from, k int) ([][]any, error) {
	rows := make([][]any, k)
	for i := range rows {
		b, err := json.Marshal(payload(from + i))
		if err != nil {
			return nil, err
		}
		rows[i] = []any{"bench_noop", b}
	}
	return rows, nil
}

func sqlCopy(ctx context.Context, db interface {
	CopyFrom(context.Context, pgx.Identifier, []string, pgx.CopyFromSource) (int64, error)
}, from, k int) error {
	rows, err := sqlRows(from, k)
	if err != nil {
		return err
	}
	n, err := db.CopyFrom(ctx, pgx.Identifier{"sql_jobs"}, []string{"kind", "payload"}, pgx.CopyFromRows(rows))
	if err != nil {
		return fmt.Errorf("copy into sql_jobs: %w", err)
	}
	if n != int64(k) {
		return fmt.Errorf("copy into sql_jobs: %d rows of %d", n, k)
	}
	return nil
}

func (*SQL) BulkInsert(ctx context.Context, pool *pgxpool.Pool, n int) error {
	for done := 0; done < n; done += bulkChunk {
		if err := sqlCopy(ctx, pool, done, min(bulkChunk, n-done)); err != nil {
			return err
		}
	}
	return nil
}

func (*SQL) EnqueueTx(ctx context.Context, tx pgx.Tx, i int) (int64, error) {
	b, err := json.Marshal(payload(i))
	if err != nil {
		return 0, err
	}
	var id int64
	err = tx.QueryRow(ctx, sqlInsert, b).Scan(&id)
	return id, err
}

func (*SQL) EnqueueBatchTx(ctx context.Context, tx pgx.Tx, k int) error {
	return sqlCopy(ctx, tx, 0, k)
}

// StartWorker runs one claimer, Concurrency handler goroutines and one completer
// (which a full buffer of finished ids holds the handlers back for). The
// claimer claims as soon as a slot is free (up to FetchBatch at a time) and, when a
// claim comes back empty, waits for PollInterval: it has no notifications, so it is a
// ceiling for throughput, not for idle latency. Claims commit without waiting for the
// WAL flush (a lost claim only leaves a job to run again, and jobc's claims do the
// same); completions commit as the server is configured, as jobc's and River's do.
func (s *SQL) StartWorker(ctx context.Context, pool *pgxpool.Pool, cfg WorkerConfig, h Handler) (func() error, error) {
	ccfg := pool.Config().Copy()
	ccfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	ccfg.MaxConns = 1
	claims, err := pgxpool.NewWithConfig(ctx, ccfg)
	if err != nil {
		return nil, fmt.Errorf("claim pool: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	slots := make(chan struct{}, cfg.Concurrency)
	for range cfg.Concurrency {
		slots <- struct{}{}
	}
	jobs := make(chan int64, cfg.Concurrency)
	done := make(chan int64, cfg.Concurrency)
	var wg sync.WaitGroup
	errc := make(chan error, 2)
	fail := func(err error) {
		if ctx.Err() == nil {
			errc <- err
			cancel()
		}
	}

	wg.Add(1)
	go func() { // claimer
		defer wg.Done()
		defer close(jobs)
		for ctx.Err() == nil {
			// Wait for one free slot, then take every other free one, up to FetchBatch.
			select {
			case <-slots:
			case <-ctx.Done():
				return
			}
			n := 1
		take:
			for n < cfg.FetchBatch {
				select {
				case <-slots:
					n++
				default:
					break take
				}
			}
			rows, err := claims.Query(ctx, s.claim, n)
			if err != nil {
				fail(fmt.Errorf("claim: %w", err))
				return
			}
			var got int
			for rows.Next() {
				var id int64
				var p []byte
				if err := rows.Scan(&id, &p); err != nil {
					rows.Close()
					fail(err)
					return
				}
				var v Payload
				if err := json.Unmarshal(p, &v); err != nil {
					rows.Close()
					fail(fmt.Errorf("job %d: %w", id, err))
					return
				}
				jobs <- id
				got++
			}
			if err := rows.Err(); err != nil {
				fail(fmt.Errorf("claim: %w", err))
				return
			}
			for range n - got {
				slots <- struct{}{}
			}
			if got == 0 {
				sleepCtx(ctx, cfg.PollInterval)
			}
		}
	}()

	for range cfg.Concurrency {
		wg.Add(1)
		go func() { // handlers
			defer wg.Done()
			for id := range jobs {
				h(id)
				// The slot frees when the handler returns, as in jobc: the
				// completion is recorded in the completer's next batch.
				slots <- struct{}{}
				done <- id
			}
		}()
	}

	completerDone := make(chan struct{})
	go func() { // completer: one statement per batch of whatever has finished meanwhile
		defer close(completerDone)
		ids := make([]int64, 0, cfg.FetchBatch)
		for id := range done {
			ids = append(ids[:0], id)
		fill:
			for len(ids) < cfg.FetchBatch {
				select {
				case id, ok := <-done:
					if !ok {
						break fill
					}
					ids = append(ids, id)
				default:
					break fill
				}
			}
			if _, err := pool.Exec(context.WithoutCancel(ctx), s.complete, ids); err != nil {
				fail(fmt.Errorf("complete: %w", err))
			}
		}
	}()

	return func() error {
		cancel()
		wg.Wait()
		close(done)
		<-completerDone
		claims.Close()
		select {
		case err := <-errc:
			return err
		default:
			return nil
		}
	}, nil
}

func (*SQL) Pending(ctx context.Context, pool *pgxpool.Pool) (int64, error) {
	var n int64
	err := pool.QueryRow(ctx, `SELECT count(*) FROM sql_jobs`).Scan(&n)
	return n, err
}

func (*SQL) Recorded(ctx context.Context, db Querier, id int64) (bool, error) {
	var ok bool
	err := db.QueryRow(ctx, `SELECT NOT EXISTS (SELECT 1 FROM sql_jobs WHERE id = $1)`, id).Scan(&ok)
	return ok, err
}

var _ System = (*SQL)(nil)
