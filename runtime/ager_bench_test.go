package runtime_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// BenchmarkStarvationAger measures one run of the ager over 200,000 available jobs of
// two queues, in eight (kind, payload version) pairs and nine priorities, none of them
// old enough to age (the usual run), and logs the plan. The ager skips from pair to pair
// through the claim index, so a run costs a few probes per pair and priority, not a
// read of the backlog. `go test -run '^$' -bench StarvationAger -v ./runtime/`.
func BenchmarkStarvationAger(b *testing.B) {
	pool := pgtest.NewSchema(b, migrated)
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts, available_at)
		 SELECT 'kind' || (i % 4), 'q' || (i % 2), 'available', 1 + i % 9, 1 + (i / 7) % 2, '{}', 3,
			now() - make_interval(secs => i % 600)
		 FROM generate_series(1, 200000) i`,
		`VACUUM ANALYZE jobc_jobs`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	stmt := strings.NewReplacer("sqlc.arg(queues)", "$1", "sqlc.arg(bound_seconds)", "$2").
		Replace(querySQL(b, "maintenance.sql", "AgeWaitingJobs"))
	logPlan(b, pool, stmt, []string{"q0", "q1"}, 3600.0)
	ager := runtime.NewStarvationAgerForTest(pool, []string{"q0", "q1"}, time.Hour)
	b.ResetTimer()
	for range b.N {
		res, err := ager.RunOnce(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if res.Aged != 0 {
			b.Fatalf("aged %d jobs; none waited an hour", res.Aged)
		}
	}
}
