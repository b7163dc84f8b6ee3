package runtime_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// planLog is a pool whose sessions log the plan of every statement they run, the
// statements inside functions included (auto_explain, loaded per session: the
// server's user must be a superuser, as the test clusters' is).
type planLog struct {
	mu    sync.Mutex
	plans []string
}

func (l *planLog) pool(t *testing.T, schema string) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(pgtest.SchemaConnString(t, schema))
	if err != nil {
		t.Fatal(err)
	}
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		for _, s := range []string{`LOAD 'auto_explain'`, `SET auto_explain.log_min_duration = 0`,
			`SET auto_explain.log_nested_statements = on`, `SET auto_explain.log_level = notice`,
			`SET client_min_messages = notice`} {
			if _, err := c.Exec(ctx, s); err != nil {
				return fmt.Errorf("%s (auto_explain needs a superuser): %w", s, err)
			}
		}
		return nil
	}
	cfg.ConnConfig.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		if strings.Contains(n.Message, "Query Text:") {
			l.mu.Lock()
			l.plans = append(l.plans, n.Message)
			l.mu.Unlock()
		}
	}
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// TestWorkflowPlansWalkKeysOnEmptyTables: a session plans a workflow function's
// statements once, when it first runs them, and on a fresh database (before
// autovacuum's first ANALYZE) the tables are empty then. Those plans must still read
// the workflow tables by their keys: one that hashed a sequential scan of the steps
// made every later start and step of the session cost more than the one before
// (2,000 chains started on a fresh database: 1.66 ms a start, against 0.88 ms).
// Every statement the starts and the worker run inside jobc's functions is logged
// with its plan, from the first.
func TestWorkflowPlansWalkKeysOnEmptyTables(t *testing.T) {
	t.Parallel()
	base := newDB(t)
	var log planLog
	pool := log.pool(t, pgtest.SchemaOf(base))
	ctx := t.Context()
	o := newOrderTypes(t)
	wt := o.workflow(t, "")
	const workflows = 30
	for i := range workflows {
		if _, err := runtime.StartWorkflow(ctx, pool, wt, orderInput{OrderID: fmt.Sprintf("o-%d", i), Cents: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	w := runtime.NewWorker(pool, testConfig(map[string]runtime.QueueConfig{"orders": {MaxWorkers: 4}}))
	o.register(t, w, 0, nil)
	stop := startWorker(t, w)
	waitFor(t, "every workflow to end", 30*time.Second, func() bool {
		return countRows(t, base, `SELECT count(*) FROM jobc_workflows WHERE state = 'running'`) == 0
	})
	stop()
	if n := countRows(t, base, `SELECT count(*) FROM jobc_workflows WHERE state = 'completed'`); n != workflows {
		t.Fatalf("%d of %d workflows completed", n, workflows)
	}

	seq := regexp.MustCompile(`Seq Scan on (jobc_workflow\w*)`)
	log.mu.Lock()
	defer log.mu.Unlock()
	inside := 0
	for _, p := range log.plans {
		_, text, _ := strings.Cut(p, "Query Text:")
		if strings.HasPrefix(strings.TrimSpace(text), "-- name:") {
			continue // a statement the runtime sends, not one of a function's
		}
		inside++
		if m := seq.FindStringSubmatch(p); m != nil {
			t.Errorf("a statement inside a function scans %s sequentially:\n%s", m[1], p)
		}
	}
	if inside < 4*workflows {
		t.Fatalf("%d plans of statements inside functions logged; want at least one per step (%d)", inside, 4*workflows)
	}
}
