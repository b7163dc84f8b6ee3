package completer

import (
	"log/slog"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// BenchmarkMixedBatch records batches of 100 outcomes, a third completed, a third
// retried and a third failed, written one transaction per kind of outcome or in one
// transaction for the batch. Run it on a server that flushes its WAL (fsync on) to see
// what the commits cost:
//
//	DATABASE_URL=postgres://... go test -run '^$' -bench MixedBatch -count 6 ./runtime/internal/completer
func BenchmarkMixedBatch(b *testing.B) {
	for _, together := range []bool{false, true} {
		name := "per-kind"
		if together {
			name = "together"
		}
		b.Run(name, func(b *testing.B) {
			const owner, size = "w1", 100
			later := time.Now().Add(time.Hour)
			pool, held, _ := claimed(b, owner, 0)
			c := New(Config{Queries: db.New(pool), Owner: owner, StatementTimeout: 10 * time.Second, Held: held,
				Log: slog.New(slog.DiscardHandler)})
			if together {
				c.conn = pool
			}
			for b.Loop() {
				b.StopTimer()
				rows := claimJobs(b, pool, held, owner, size)
				results := make([]Result, len(rows))
				for i, r := range rows {
					o := []Outcome{Complete, Retry, Fail}[i%3]
					results[i] = Result{ID: r.ID, Attempt: r.Attempt, ClaimedAt: r.AvailableAt, Outcome: o, RunAt: later,
						Error: []byte(`{"error":"planned"}`)}
				}
				b.StartTimer()
				runBatch(b, c, results...)
			}
		})
	}
}
