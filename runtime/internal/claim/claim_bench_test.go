package claim

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
)

// BenchmarkClaimUndecodableBacklog measures one claim of 100 jobs by a worker that
// decodes version 1 of 1 or 3 kinds, with 0 or 50,000 jobs of version 2 (written by a
// newer deploy) ahead of 1,000 decodable ones of each kind in the queue's order (and,
// for the scale table, 1,000,000 decodable ones). Each
// claim runs in a transaction that is rolled back, so every iteration sees the same
// table. With 3 kinds the claim locks up to 100 rows of each kind and leases 100. The
// claim runs as a started worker's do: on a generic plan, without JIT (the worker's claimsOn).
// `go run ./internal/cmd/withpostgres -- go test -run '^$' -bench ClaimUndecodable ./runtime/internal/claim/`.
func BenchmarkClaimUndecodableBacklog(b *testing.B) {
	asStartedWorker := pgx.TxOptions{BeginQuery: "BEGIN; SET LOCAL plan_cache_mode = force_generic_plan; SET LOCAL jit = off"}
	for _, c := range []struct{ kinds, ahead, backlog int }{
		{1, 0, 1000}, {1, 50000, 1000}, {3, 0, 1000}, {3, 50000, 1000}, {1, 0, 1000000},
	} {
		b.Run(fmt.Sprintf("kinds=%d/undecodable=%d/decodable=%d", c.kinds, c.ahead, c.backlog), func(b *testing.B) {
			pool := newDB(b)
			ctx := context.Background()
			fill := `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts, available_at)
				SELECT $1, 'bench', 'available', 5, $2, jsonb_build_object('n', i, 'email', 'bench@example.com'), 3,
				       now() - interval '1 hour' + i * interval '1 microsecond' + $4 * interval '1 second'
				FROM generate_series(1, $3) i`
			kinds := map[string][2]int{}
			for k := range c.kinds {
				kind := fmt.Sprintf("mail%d", k)
				kinds[kind] = [2]int{1, 1}
				if _, err := pool.Exec(ctx, fill, kind, 2, c.ahead/c.kinds, 0); err != nil {
					b.Fatal(err)
				}
				if _, err := pool.Exec(ctx, fill, kind, 1, c.backlog, 1); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := pool.Exec(ctx, `ANALYZE jobc_jobs`); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				tx, err := pool.BeginTx(ctx, asStartedWorker)
				if err != nil {
					b.Fatal(err)
				}
				ids, err := claimIDs(ctx, tx, testQueue("bench", kinds), 100)
				if err != nil || len(ids) != 100 {
					b.Fatalf("claimed %d of 100: %v", len(ids), err)
				}
				if err := tx.Rollback(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
