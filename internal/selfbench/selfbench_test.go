package selfbench_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/internal/selfbench"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestRunMeasuresEveryPhase runs a small benchmark and checks that every figure was
// measured and that the schema it used is gone.
func TestRunMeasuresEveryPhase(t *testing.T) {
	pool := pgtest.NewSchema(t, nil)
	url := pgtest.SchemaConnString(t, pgtest.SchemaOf(pool))
	phases := map[string]bool{}
	res, err := selfbench.Run(context.Background(), url, selfbench.Options{
		Jobs: 2000, Concurrency: 20, Producers: 2, Duration: 300 * time.Millisecond,
		Progress: func(phase string, _, _ int) { phases[phase] = true },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.TxEnqueuePerSec <= 0 || res.CopyEnqueuePerSec <= 0 || res.BurnDownPerSec <= 0 || res.LatencyP50 <= 0 || res.LatencyP99 < res.LatencyP50 {
		t.Errorf("result %+v", res)
	}
	for _, p := range []string{"transactional enqueue", "copy enqueue", "burn-down", "latency"} {
		if !phases[p] {
			t.Errorf("no progress reported for %s", p)
		}
	}
	if n := schemas(t, pool); n != 0 {
		t.Errorf("%d jobc_bench schemas left behind", n)
	}
}

func schemas(t *testing.T, pool *pgxpool.Pool) int {
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'jobc_bench_%'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
