package bench

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Historian is a system whose finished jobs can be made up before a measurement, to
// see whether its hot path slows down as history grows.
type Historian interface {
	// FillHistory adds n completed jobs, finished within the last hour (inside every
	// retention period, so no pruner deletes them during the measurement).
	FillHistory(ctx context.Context, pool *pgxpool.Pool, n int) error
}

// historyChunk is the number of rows one INSERT of made-up history writes.
const historyChunk = 1_000_000

func fillInChunks(ctx context.Context, pool *pgxpool.Pool, n int, sql string) error {
	for from := 1; from <= n; from += historyChunk {
		to := min(from+historyChunk-1, n)
		if _, err := pool.Exec(ctx, sql, from, to, n); err != nil {
			return fmt.Errorf("history rows %d..%d: %w", from, to, err)
		}
	}
	return nil
}

// FillHistory writes jobc_jobs_finished rows with ids 1..n and moves the jobs' id
// sequence past them, as if n jobs had run.
func (*Jobc) FillHistory(ctx context.Context, pool *pgxpool.Pool, n int) error {
	err := fillInChunks(ctx, pool, n, `INSERT INTO jobc_jobs_finished (
	    id, kind, queue, state, priority, payload_version, payload, metadata, available_at,
	    attempt, max_attempts, errors, created_at, attempted_at, finished_at)
	SELECT i, 'bench_noop', 'default', 'completed', 5, 1,
	       jsonb_build_object('n', i, 'email', 'user@example.com'), '{}',
	       now() - interval '1 hour', 1, 5, '[]', now() - interval '1 hour', now() - interval '1 hour',
	       now() - interval '1 hour' + (i::float8 / $3) * interval '55 minutes'
	FROM generate_series($1::int, $2::int) i`)
	if err != nil {
		return err
	}
	_, err = pool.Exec(ctx, `SELECT setval(pg_get_serial_sequence('jobc_jobs', 'id'), $1)`, n)
	return err
}

// FillHistory writes completed river_job rows.
func (*River) FillHistory(ctx context.Context, pool *pgxpool.Pool, n int) error {
	return fillInChunks(ctx, pool, n, `INSERT INTO river_job (
	    state, kind, args, queue, priority, attempt, max_attempts, attempted_at, created_at,
	    scheduled_at, finalized_at)
	SELECT 'completed', 'bench_noop', jsonb_build_object('n', i, 'email', 'user@example.com'),
	       'default', 1, 1, 25, now() - interval '1 hour', now() - interval '1 hour', now() - interval '1 hour',
	       now() - interval '1 hour' + (i::float8 / $3) * interval '55 minutes'
	FROM generate_series($1::int, $2::int) i`)
}
