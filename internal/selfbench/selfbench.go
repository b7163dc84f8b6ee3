// Package selfbench measures jobc on a real database: transactional enqueue, bulk
// enqueue with COPY, and burn-down (claim, run a no-op handler, record) — the figures
// `jobc bench` prints. It works in a schema of its own, dropped afterwards.
package selfbench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime"
)

// Options sizes a run.
type Options struct {
	Jobs        int           // jobs for the COPY and burn-down phases
	Concurrency int           // the worker's handler slots
	Producers   int           // goroutines in the transactional-enqueue phase
	Duration    time.Duration // length of the transactional-enqueue phase
	Progress    func(phase string, done, total int)
	// Configure, if set, adjusts the configuration of every connection Run opens (the
	// CLI applies its connect and statement timeouts).
	Configure func(*pgconn.Config)
}

// Result holds the measured rates.
type Result struct {
	TxEnqueuePerSec   float64       // transactions/s, each inserting a business row and one job
	CopyEnqueuePerSec float64       // jobs/s through Enqueue<Type>Many
	BurnDownPerSec    float64       // jobs/s from available to completed
	LatencyP50        time.Duration // enqueue → handler start, idle worker
	LatencyP99        time.Duration
}

type payload struct {
	N int `json:"n"`
}

const jobSchema = `{"type":"object","additionalProperties":false,"required":["n"],"properties":{"n":{"type":"integer"}}}`

// Run measures jobc against the database at url.
func Run(ctx context.Context, url string, o Options) (Result, error) {
	var res Result
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	schema := "jobc_bench_" + hex.EncodeToString(suffix)
	configure := o.Configure
	if configure == nil {
		configure = func(*pgconn.Config) {}
	}
	adminCfg, err := pgx.ParseConfig(url)
	if err != nil {
		return res, err
	}
	configure(&adminCfg.Config)
	admin, err := pgx.ConnectConfig(ctx, adminCfg)
	if err != nil {
		return res, fmt.Errorf("connect: %w", err)
	}
	defer admin.Close(context.WithoutCancel(ctx))
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return res, fmt.Errorf("create schema: %w", err)
	}
	defer func() { _, _ = admin.Exec(context.WithoutCancel(ctx), "DROP SCHEMA "+schema+" CASCADE") }()

	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return res, err
	}
	configure(&cfg.ConnConfig.Config)
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	cfg.MaxConns = int32(max(o.Producers, 4) + 4)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer pool.Close()
	if _, err := runtime.Migrate(ctx, pool); err != nil {
		return res, err
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE orders (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, total bigint NOT NULL)`); err != nil {
		return res, err
	}
	jt, err := runtime.NewJobType(runtime.JobType{Kind: "bench", Queue: "bench", Priority: 5, MaxAttempts: 3,
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: jobSchema}}})
	if err != nil {
		return res, err
	}
	progress := o.Progress
	if progress == nil {
		progress = func(string, int, int) {}
	}

	if res.TxEnqueuePerSec, err = txEnqueue(ctx, pool, jt, o, progress); err != nil {
		return res, fmt.Errorf("transactional enqueue: %w", err)
	}
	if _, err := pool.Exec(ctx, "TRUNCATE jobc_jobs"); err != nil {
		return res, err
	}
	start := time.Now()
	for i := 0; i < o.Jobs; i += 5000 {
		ps := make([]payload, min(5000, o.Jobs-i))
		for j := range ps {
			ps[j] = payload{N: i + j}
		}
		if _, err := runtime.EnqueueMany(ctx, pool, jt, ps); err != nil {
			return res, fmt.Errorf("copy enqueue: %w", err)
		}
		progress("copy enqueue", i+len(ps), o.Jobs)
	}
	res.CopyEnqueuePerSec = float64(o.Jobs) / time.Since(start).Seconds()

	if res.BurnDownPerSec, err = burnDown(ctx, pool, jt, o, progress); err != nil {
		return res, fmt.Errorf("burn-down: %w", err)
	}
	res.LatencyP50, res.LatencyP99, err = latency(ctx, pool, jt, o, progress)
	return res, err
}

func txEnqueue(ctx context.Context, pool *pgxpool.Pool, jt *runtime.JobType, o Options, progress func(string, int, int)) (float64, error) {
	var n atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, o.Producers)
	deadline := time.Now().Add(o.Duration)
	for range o.Producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
					var id int64
					if err := tx.QueryRow(ctx, `INSERT INTO orders (total) VALUES (100) RETURNING id`).Scan(&id); err != nil {
						return err
					}
					_, err := runtime.Enqueue(ctx, tx, jt, payload{N: int(id)})
					return err
				})
				if err != nil {
					errs <- err
					return
				}
				n.Add(1)
			}
		}()
	}
	ticker := time.NewTicker(100 * time.Millisecond)
	defer ticker.Stop()
	go func() { wg.Wait(); close(errs) }()
	start := time.Now()
	for {
		select {
		case err, ok := <-errs:
			if ok {
				return 0, err
			}
			return float64(n.Load()) / time.Since(start).Seconds(), nil
		case <-ticker.C:
			progress("transactional enqueue", int(time.Since(start)/time.Millisecond), int(o.Duration/time.Millisecond))
		}
	}
}

func quietWorker(pool *pgxpool.Pool, o Options) *runtime.Worker {
	return runtime.NewWorker(pool, runtime.Config{
		Queues:       map[string]runtime.QueueConfig{"bench": {MaxWorkers: o.Concurrency}},
		Logger:       slog.New(slog.DiscardHandler),
		PollInterval: time.Second,
	})
}

func burnDown(ctx context.Context, pool *pgxpool.Pool, jt *runtime.JobType, o Options, progress func(string, int, int)) (float64, error) {
	var handled atomic.Int64
	w := quietWorker(pool, o)
	if err := runtime.Handle(w, jt, func(context.Context, *runtime.Job, payload) error {
		handled.Add(1)
		return nil
	}); err != nil {
		return 0, err
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- w.Run(runCtx) }()
	for handled.Load() < int64(o.Jobs) {
		select {
		case err := <-done:
			stop()
			return 0, fmt.Errorf("worker stopped: %w", err)
		case <-time.After(50 * time.Millisecond):
			progress("burn-down", int(handled.Load()), o.Jobs)
		}
	}
	stop()
	if err := <-done; err != nil { // returns once every outcome is recorded
		return 0, err
	}
	return float64(o.Jobs) / time.Since(start).Seconds(), nil
}

func latency(ctx context.Context, pool *pgxpool.Pool, jt *runtime.JobType, o Options, progress func(string, int, int)) (p50, p99 time.Duration, err error) {
	started := make(chan time.Time, 1)
	w := quietWorker(pool, o)
	if err := runtime.Handle(w, jt, func(context.Context, *runtime.Job, payload) error {
		started <- time.Now()
		return nil
	}); err != nil {
		return 0, 0, err
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	time.Sleep(200 * time.Millisecond) // let the listener connect
	const samples = 200
	lat := make([]time.Duration, 0, samples)
	for i := range samples {
		begin := time.Now()
		if _, err := runtime.Enqueue(ctx, pool, jt, payload{N: i}); err != nil {
			return 0, 0, err
		}
		select {
		case at := <-started:
			lat = append(lat, at.Sub(begin))
		case <-time.After(5 * time.Second):
			return 0, 0, fmt.Errorf("job %d did not start within 5s", i)
		}
		time.Sleep(5 * time.Millisecond) // the worker goes idle between samples
		progress("latency", i+1, samples)
	}
	stop()
	if err := <-done; err != nil {
		return 0, 0, err
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return lat[len(lat)/2], lat[len(lat)*99/100], nil
}
