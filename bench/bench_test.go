package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The benchmarks take their PostgreSQL server from BENCH_DATABASE_URL (default
// DefaultAdminURL) and skip when it cannot be reached. Fix b.N for the database ones,
// e.g. go test -run '^$' -bench BurnDown -benchtime 20000x.

var systems = []string{"jobc", "river"}

func openEnv(b *testing.B, sys string, pool int) *Env {
	b.Helper()
	ctx := context.Background()
	e, err := Open(ctx, NewSystem(sys), pool)
	if err != nil {
		b.Fatalf("no database for the race (set BENCH_DATABASE_URL): %v", err)
	}
	b.Cleanup(e.Close)
	return e
}

// BenchmarkBurnDown: b.N jobs inserted up front (not timed), then one worker with
// concurrency 100 works them all; reports jobs/s and CPU µs per job.
func BenchmarkBurnDown(b *testing.B) {
	for _, sys := range systems {
		b.Run(sys, func(b *testing.B) {
			e := openEnv(b, sys, 20)
			b.StopTimer()
			w := WorkerConfig{Concurrency: 100, PollInterval: time.Second, FetchBatch: 100, FetchCooldown: time.Millisecond}
			r, err := BurnDown(context.Background(), e, BurnDownOptions{Jobs: b.N, Worker: w, Analyze: true})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(r.Rate(), "jobs/s")
			b.ReportMetric(float64(r.CPU.PG.Microseconds())/float64(b.N), "pg-cpu-µs/job")
			b.ReportMetric(float64(r.CPU.Go.Microseconds())/float64(b.N), "go-cpu-µs/job")
		})
	}
}

// BenchmarkEnqueueTx: G goroutines commit b.N transactions in all, each inserting a
// business row and enqueueing one job.
func BenchmarkEnqueueTx(b *testing.B) {
	for _, g := range []int{8, 32} {
		for _, sys := range append(systems, "none") {
			b.Run(fmt.Sprintf("%s/G=%d", sys, g), func(b *testing.B) { benchTx(b, sys, g, 1) })
		}
	}
}

// BenchmarkEnqueueBatchTx: as BenchmarkEnqueueTx with 100 jobs per transaction (jobc
// EnqueueMany, River InsertManyFastTx); b.N counts jobs.
func BenchmarkEnqueueBatchTx(b *testing.B) {
	for _, sys := range systems {
		b.Run(sys+"/G=8", func(b *testing.B) { benchTx(b, sys, 8, 100) })
	}
}

func benchTx(b *testing.B, sys string, g, batch int) {
	e := openEnv(b, sys, g)
	ctx := context.Background()
	txs := int64((b.N + batch - 1) / batch)
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	b.ResetTimer()
	start := time.Now()
	for range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= txs; i = next.Add(1) {
				err := pgx.BeginFunc(ctx, e.Pool, func(tx pgx.Tx) error {
					if _, err := tx.Exec(ctx, `INSERT INTO bench_business (name) VALUES ($1)`, fmt.Sprint("customer ", i)); err != nil {
						return err
					}
					if batch == 1 {
						_, err := e.Sys.EnqueueTx(ctx, tx, int(i))
						return err
					}
					return e.Sys.EnqueueBatchTx(ctx, tx, batch)
				})
				if err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(txs*int64(batch))/elapsed.Seconds(), "jobs/s")
}

// BenchmarkIdleLatency: b.N jobs enqueued one at a time to an idle worker; reports the
// p50/p99 from COMMIT to handler start and to the completion being recorded.
func BenchmarkIdleLatency(b *testing.B) {
	for _, sys := range systems {
		b.Run(sys, func(b *testing.B) {
			e := openEnv(b, sys, 20)
			w := WorkerConfig{Concurrency: 100, PollInterval: time.Second, FetchBatch: 100, FetchCooldown: 100 * time.Millisecond}
			b.ResetTimer()
			r, err := Latency(context.Background(), e, LatencyOptions{Samples: b.N, Gap: 150 * time.Millisecond, Worker: w})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(float64(Percentile(r.Start, 50).Microseconds())/1000, "start-p50-ms")
			b.ReportMetric(float64(Percentile(r.Start, 99).Microseconds())/1000, "start-p99-ms")
			b.ReportMetric(float64(Percentile(r.Recorded, 50).Microseconds())/1000, "recorded-p50-ms")
			b.ReportMetric(float64(Percentile(r.Recorded, 99).Microseconds())/1000, "recorded-p99-ms")
		})
	}
}

// BenchmarkEncode isolates the Go-side cost of jobc's enqueue before the database:
// encoding the payload, and validating it against the job type's JSON Schema (what
// runtime.Enqueue does), and the worker's decode (validate + unmarshal).
func BenchmarkEncode(b *testing.B) {
	p := payload(42)
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Marshal+Validate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			raw, err := json.Marshal(p)
			if err != nil {
				b.Fatal(err)
			}
			if err := JobcType.Validate(1, raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	raw, _ := json.Marshal(p)
	b.Run("Validate+json.Unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := JobcType.Validate(1, raw); err != nil {
				b.Fatal(err)
			}
			var q Payload
			if err := json.Unmarshal(raw, &q); err != nil {
				b.Fatal(err)
			}
		}
	})
}
