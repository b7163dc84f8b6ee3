package runtime_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// BenchmarkListQueueStats measures ListQueueStats over a million finished jobs (ten thousand of
// them in the last hour, the rest older) and ten thousand unfinished ones, and logs the
// plan. The finished rows lie in random physical order, as they come to after retention
// has freed old pages for new rows to reuse: the BRIN index on finished_at then matches
// every block range, and only the B-tree of 0003 keeps the last hour's count cheap.
// `go test -run '^$' -bench ListQueueStats -benchtime 50x -v ./runtime/`.
func BenchmarkListQueueStats(b *testing.B) {
	pool := pgtest.NewSchema(b, migrated)
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO jobc_jobs_finished (id, kind, queue, state, priority, payload_version, payload, metadata,
			available_at, attempt, max_attempts, errors, created_at, finished_at)
		 SELECT i, 'k', 'q' || (i % 10), CASE WHEN i % 20 = 0 THEN 'failed' ELSE 'completed' END::jobc_state, 5, 1,
			'{}', '{}', now(), 1, 3, '[]', now(), now() - make_interval(secs => (1000000 - i) * 0.36)
		 FROM generate_series(1, 1000000) i ORDER BY random()`,
		`INSERT INTO jobc_jobs (id, kind, queue, state, priority, payload_version, payload, max_attempts)
		 SELECT 1000000 + i, 'k', 'q' || (i % 10), CASE WHEN i % 3 = 0 THEN 'scheduled' ELSE 'available' END::jobc_state, 5, 1, '{}', 3
		 FROM generate_series(1, 10000) i`,
		`VACUUM ANALYZE jobc_jobs_finished`, `VACUUM ANALYZE jobc_jobs`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	stats, err := runtime.ListQueueStats(ctx, pool)
	if err != nil {
		b.Fatal(err)
	}
	var hour int64
	for _, s := range stats {
		hour += s.CompletedLastHour + s.FailedLastHour
	}
	if len(stats) != 10 || hour < 9900 || hour > 10100 {
		b.Fatalf("ListQueueStats: %d queues, %d finished in the last hour; want 10 queues and about 10,000", len(stats), hour)
	}
	logPlan(b, pool, querySQL(b, "queues.sql", "QueueStats"))
	b.ResetTimer()
	for range b.N {
		if _, err := runtime.ListQueueStats(ctx, pool); err != nil {
			b.Fatal(err)
		}
	}
}

// logPlan logs the plan of stmt run with args, as EXPLAIN ANALYZE shows it.
func logPlan(b *testing.B, pool *pgxpool.Pool, stmt string, args ...any) {
	b.Helper()
	rows, err := pool.Query(b.Context(), `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) `+stmt, args...)
	if err != nil {
		b.Fatal(err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		b.Fatal(err)
	}
	b.Log("\n" + strings.Join(plan, "\n"))
}

// querySQL returns the statement named name in queries/file, as sqlc reads it.
func querySQL(b *testing.B, file, name string) string {
	b.Helper()
	src, err := os.ReadFile("../queries/" + file)
	if err != nil {
		b.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(src), "-- name: "+name+" ")
	if !ok {
		b.Fatalf("no statement %s in queries/%s", name, file)
	}
	stmt, _, _ := strings.Cut(rest, "-- name: ")
	return strings.TrimSpace(stmt[strings.Index(stmt, "\n"):])
}
