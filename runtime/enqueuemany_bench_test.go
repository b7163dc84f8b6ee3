package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// BenchmarkEnqueueManyPaths compares EnqueueMany's two ways of inserting a batch of
// n jobs in a transaction (begin, insert, commit): one INSERT ... SELECT FROM unnest,
// and reserved ids + COPY + a wake-up. runtime.UnnestMaxBatch is chosen from it.
// `go run ./internal/cmd/withpostgres -- go test -run '^$' -bench EnqueueManyPaths ./runtime/`.
func BenchmarkEnqueueManyPaths(b *testing.B) {
	pool := pgtest.NewSchema(b, migrated)
	ctx := context.Background()
	jt, err := runtime.NewJobType(runtime.JobType{
		Kind: "noop", Queue: "bench", Priority: 5, MaxAttempts: 3,
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: emailSchema}},
	})
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1, 10, 100, 1000, 5000, 20000} {
		raws := make([][]byte, n)
		for i := range raws {
			if raws[i], err = json.Marshal(emailPayload{N: i, Email: "bench@example.com"}); err != nil {
				b.Fatal(err)
			}
		}
		for _, path := range []string{"unnest", "copy"} {
			b.Run(fmt.Sprintf("n=%d/%s", n, path), func(b *testing.B) {
				for range b.N {
					tx, err := pool.Begin(ctx)
					if err != nil {
						b.Fatal(err)
					}
					ids, err := runtime.InsertRawForTest(ctx, tx, jt, raws, path == "copy")
					if err != nil || len(ids) != n {
						b.Fatalf("%d of %d inserted: %v", len(ids), n, err)
					}
					if err := tx.Commit(ctx); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/job")
			})
		}
	}
}
