package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/dashboard"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// The volume the issue sets: the Overview and the Failed page must answer in under
// 100 ms of server time over it.
const (
	benchFinished   = 1_000_000
	benchUnfinished = 100_000
)

// benchDB is one throwaway cluster seeded once for every benchmark of the binary.
var benchDB struct {
	once    sync.Once
	cluster *pgtest.Cluster // referenced for the binary's life: its watchdog removes it once unreachable
	pool    *pgxpool.Pool
	log     *statementTrace
	err     error
}

// statementTrace remembers the statements of one request, to EXPLAIN them.
type statementTrace struct {
	mu    sync.Mutex
	on    bool
	stmts []traced
}

type traced struct {
	sql  string
	args []any
}

func (s *statementTrace) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.on {
		s.stmts = append(s.stmts, traced{d.SQL, d.Args})
	}
	return ctx
}

func (s *statementTrace) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// seededPool starts a cluster and fills it: a million finished jobs over the last week
// (a tenth failed, with a few dozen distinct errors; some within the last hour) and a
// hundred thousand unfinished ones, over five queues and twenty kinds, with COPY-speed
// INSERT ... SELECT generate_series.
func seededPool(b *testing.B) (*pgxpool.Pool, *statementTrace) {
	b.Helper()
	benchDB.once.Do(func() {
		ctx := context.Background()
		cluster, err := pgtest.StartCluster(ctx)
		if err != nil {
			benchDB.err = err
			return
		}
		// The cluster lives as long as the benchmark binary; pgtest's watchdog removes
		// it when the process exits.
		benchDB.cluster = cluster
		cfg, err := pgxpool.ParseConfig(cluster.ConnString())
		if err != nil {
			benchDB.err = err
			return
		}
		benchDB.log = &statementTrace{}
		cfg.ConnConfig.Tracer = benchDB.log
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			benchDB.err = err
			return
		}
		if _, err := runtime.Migrate(ctx, pool); err != nil {
			benchDB.err = err
			return
		}
		start := time.Now()
		for _, s := range []string{
			fmt.Sprintf(`INSERT INTO jobc_jobs_finished (id, kind, queue, state, priority, payload_version, payload, metadata,
			    available_at, attempt, max_attempts, errors, created_at, attempted_at, finished_at)
			SELECT i, 'kind_' || (i %% 20), 'queue_' || (i %% 5),
			       CASE WHEN i %% 10 = 0 THEN 'failed' ELSE 'completed' END::jobc_state, 1, 1,
			       jsonb_build_object('n', i), '{}', t, 1, 3,
			       CASE WHEN i %% 10 = 0 THEN jsonb_build_array(jsonb_build_object('attempt', 1, 'at', t, 'class', 'transient',
			            'error', 'upstream error ' || (i %% 37), 'worker', 'w1')) ELSE '[]' END,
			       t, t, t
			FROM generate_series(1, %d) i,
			     LATERAL (SELECT now() - make_interval(secs => (%d - i) * 0.6)) f(t)`, benchFinished, benchFinished),
			fmt.Sprintf(`INSERT INTO jobc_jobs (id, kind, queue, state, priority, payload_version, payload, available_at, max_attempts, created_at)
			SELECT %d + i, 'kind_' || (i %% 20), 'queue_' || (i %% 5),
			       CASE WHEN i %% 4 = 0 THEN 'scheduled' ELSE 'available' END::jobc_state, 1 + i %% 9, 1,
			       jsonb_build_object('n', i),
			       CASE WHEN i %% 4 = 0 THEN now() + interval '1 hour' ELSE now() - make_interval(secs => i %% 600) END,
			       3, now() - interval '10 minutes'
			FROM generate_series(1, %d) i`, benchFinished, benchUnfinished),
			`SELECT setval(pg_get_serial_sequence('jobc_jobs', 'id'), (SELECT max(id) FROM jobc_jobs))`,
			`VACUUM ANALYZE jobc_jobs`, `VACUUM ANALYZE jobc_jobs_finished`,
		} {
			if _, err := pool.Exec(ctx, s); err != nil {
				benchDB.err = fmt.Errorf("seed: %w", err)
				return
			}
		}
		fmt.Fprintf(os.Stderr, "seeded %d finished and %d unfinished jobs in %s\n", benchFinished, benchUnfinished, time.Since(start).Round(time.Millisecond))
		benchDB.pool = pool
	})
	if benchDB.err != nil {
		b.Fatal(benchDB.err)
	}
	return benchDB.pool, benchDB.log
}

func benchPage(b *testing.B, path, want string) {
	pool, trace := seededPool(b)
	h, err := dashboard.New(pool, dashboard.Options{})
	if err != nil {
		b.Fatal(err)
	}
	serve := func() *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(b.Context(), http.MethodGet, path, nil))
		return rec
	}
	// One request with the statements traced, to check the page and explain its plans.
	trace.mu.Lock()
	trace.on, trace.stmts = true, nil
	trace.mu.Unlock()
	rec := serve()
	trace.mu.Lock()
	trace.on = false
	stmts := trace.stmts
	trace.mu.Unlock()
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), want) {
		b.Fatalf("GET %s: %d, want 200 with %q:\n%s", path, rec.Code, want, rec.Body.String())
	}
	if os.Getenv("JOBC_EXPLAIN") == "1" {
		for _, s := range stmts {
			rows, err := pool.Query(b.Context(), "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) "+s.sql, s.args...)
			if err != nil {
				b.Fatalf("explain %s: %v", s.sql, err)
			}
			plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("GET %s:\n%s\n%s", path, s.sql, strings.Join(plan, "\n"))
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if rec := serve(); rec.Code != http.StatusOK {
			b.Fatalf("GET %s: %d", path, rec.Code)
		}
	}
}

// BenchmarkOverview is the server time of the Overview page (queue statistics, the
// last hour's throughput, live workers) over a million finished jobs.
func BenchmarkOverview(b *testing.B) { benchPage(b, "/", "queue_4") }

// BenchmarkFailedGroups is the server time of the Failed page (failed jobs grouped by
// kind and error) over a million finished jobs, a hundred thousand of them failed.
func BenchmarkFailedGroups(b *testing.B) { benchPage(b, "/failed", "upstream error 36") }
