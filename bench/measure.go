package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Env is one system in one fresh, migrated database.
type Env struct {
	Sys  System
	DB   *FreshDB
	Pool *pgxpool.Pool
}

// Open creates a fresh database for sys, migrates it and opens a pool of poolSize.
func Open(ctx context.Context, sys System, poolSize int) (*Env, error) {
	db, err := NewDB(ctx, AdminURL(), sys.Name())
	if err != nil {
		return nil, err
	}
	pool, err := NewPool(ctx, db.URL, poolSize)
	if err != nil {
		_ = db.Drop()
		return nil, err
	}
	e := &Env{Sys: sys, DB: db, Pool: pool}
	if err := sys.Migrate(ctx, pool); err != nil {
		e.Close()
		return nil, fmt.Errorf("migrate %s: %w", sys.Name(), err)
	}
	if _, err := pool.Exec(ctx, businessTable); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// Close closes the pool and drops the database.
func (e *Env) Close() {
	e.Pool.Close()
	_ = e.DB.Drop()
}

// BurnDownResult is one burn-down run.
type BurnDownResult struct {
	Jobs     int
	Insert   time.Duration // bulk insert of every job
	Startup  time.Duration // worker start to first handler call
	BurnDown time.Duration // first handler call to the last completion recorded
	CPU      CPU           // from worker start to the last completion recorded
}

// Rate is jobs per second over BurnDown.
func (r BurnDownResult) Rate() float64 { return float64(r.Jobs) / r.BurnDown.Seconds() }

// BurnDownOptions configure a burn-down.
type BurnDownOptions struct {
	Jobs    int
	Worker  WorkerConfig
	Analyze bool // ANALYZE the job tables after the insert, as autovacuum would
	// History is the number of finished jobs made up before the insert (the system
	// must be a Historian).
	History int
	// BeforeStart and AfterRecorded run right before the worker starts and once every
	// completion is recorded (WAL accounting, profiling).
	BeforeStart, AfterRecorded func(context.Context) error
}

// BurnDown inserts o.Jobs jobs, then starts one worker with a no-op handler and
// measures how long it takes until every completion is recorded.
func BurnDown(ctx context.Context, e *Env, o BurnDownOptions) (BurnDownResult, error) {
	res := BurnDownResult{Jobs: o.Jobs}
	if o.History > 0 {
		h, ok := e.Sys.(Historian)
		if !ok {
			return res, fmt.Errorf("%s cannot be given history", e.Sys.Name())
		}
		if err := h.FillHistory(ctx, e.Pool, o.History); err != nil {
			return res, fmt.Errorf("history: %w", err)
		}
	}
	t := time.Now()
	if err := e.Sys.BulkInsert(ctx, e.Pool, o.Jobs); err != nil {
		return res, fmt.Errorf("bulk insert: %w", err)
	}
	res.Insert = time.Since(t)
	if o.Analyze {
		for _, tbl := range e.Sys.Tables() {
			if _, err := e.Pool.Exec(ctx, "ANALYZE "+tbl); err != nil {
				return res, err
			}
		}
	}
	if n, err := e.Sys.Pending(ctx, e.Pool); err != nil || n != int64(o.Jobs) {
		return res, fmt.Errorf("after insert: %d pending, want %d: %w", n, o.Jobs, err)
	}
	if o.BeforeStart != nil {
		if err := o.BeforeStart(ctx); err != nil {
			return res, err
		}
	}

	meter, err := StartCPU(ctx, e.Pool)
	if err != nil {
		return res, err
	}
	var handled atomic.Int64
	var first atomic.Int64 // unix nanos of the first handler call
	all := make(chan struct{})
	start := time.Now()
	stop, err := e.Sys.StartWorker(ctx, e.Pool, o.Worker, func(int64) {
		first.CompareAndSwap(0, time.Now().UnixNano())
		if handled.Add(1) == int64(o.Jobs) {
			close(all)
		}
	})
	if err != nil {
		return res, err
	}
	stop = once(stop)
	defer func() { _ = stop() }()
	timeout := time.NewTimer(10 * time.Minute)
	defer timeout.Stop()
	select {
	case <-all:
	case <-timeout.C:
		return res, fmt.Errorf("timed out: %d of %d jobs handled", handled.Load(), o.Jobs)
	case <-ctx.Done():
		return res, ctx.Err()
	}
	// Every handler ran; wait until every completion is recorded.
	for {
		n, err := e.Sys.Pending(ctx, e.Pool)
		if err != nil {
			return res, err
		}
		if n == 0 {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	end := time.Now()
	if res.CPU, err = meter.Since(ctx); err != nil {
		return res, err
	}
	firstAt := time.Unix(0, first.Load())
	res.Startup = firstAt.Sub(start)
	res.BurnDown = end.Sub(firstAt)
	if o.AfterRecorded != nil {
		if err := o.AfterRecorded(ctx); err != nil {
			return res, err
		}
	}
	return res, stop()
}

// EnqueueOptions configure a transactional-enqueue run.
type EnqueueOptions struct {
	Goroutines int
	Duration   time.Duration // measured time, after Warmup
	Warmup     time.Duration
	// Batch is the number of jobs per transaction: 1 uses EnqueueTx (one job per
	// transaction), more uses EnqueueBatchTx.
	Batch int
}

// EnqueueResult is one transactional-enqueue run.
type EnqueueResult struct {
	Jobs, Txs int64
	Elapsed   time.Duration
	CPU       CPU // during Elapsed
}

// Rate is jobs enqueued (and committed) per second.
func (r EnqueueResult) Rate() float64 { return float64(r.Jobs) / r.Elapsed.Seconds() }

// TxRate is transactions committed per second.
func (r EnqueueResult) TxRate() float64 { return float64(r.Txs) / r.Elapsed.Seconds() }

// Enqueue runs o.Goroutines loops of: begin, insert a business row, enqueue o.Batch
// jobs, commit; and counts the jobs committed during o.Duration after o.Warmup.
func Enqueue(ctx context.Context, e *Env, o EnqueueOptions) (EnqueueResult, error) {
	var jobs, txs atomic.Int64
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, o.Goroutines)
	for g := range o.Goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				err := pgx.BeginFunc(ctx, e.Pool, func(tx pgx.Tx) error {
					if _, err := tx.Exec(ctx, `INSERT INTO bench_business (name) VALUES ($1)`, fmt.Sprintf("customer %d/%d", g, i)); err != nil {
						return err
					}
					if o.Batch <= 1 {
						_, err := e.Sys.EnqueueTx(ctx, tx, i)
						return err
					}
					return e.Sys.EnqueueBatchTx(ctx, tx, o.Batch)
				})
				if err != nil {
					if ctx.Err() == nil {
						errc <- err
						cancel()
					}
					return
				}
				jobs.Add(int64(max(o.Batch, 1)))
				txs.Add(1)
			}
		}()
	}
	sleepCtx(ctx, o.Warmup)
	meter, err := StartCPU(ctx, e.Pool)
	if err != nil {
		cancel()
		wg.Wait()
		return EnqueueResult{}, err
	}
	j0, t0, start := jobs.Load(), txs.Load(), time.Now()
	sleepCtx(ctx, o.Duration)
	j1, t1, elapsed := jobs.Load(), txs.Load(), time.Since(start)
	cpu, err := meter.Since(ctx)
	cancel()
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return EnqueueResult{}, err
	}
	if err != nil {
		return EnqueueResult{}, err
	}
	return EnqueueResult{Jobs: j1 - j0, Txs: t1 - t0, Elapsed: elapsed, CPU: cpu}, nil
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// LatencyOptions configure an idle-latency run.
type LatencyOptions struct {
	Samples int
	// Gap is the minimum pause between one job's recorded completion and the next
	// enqueue (a random 0..Gap/2 is added): long enough for River's insert
	// notification limiter (FetchCooldown) to let the next notification through.
	Gap    time.Duration
	Worker WorkerConfig
}

// LatencyResult holds one idle-latency run's samples, measured from the return of
// the enqueuing transaction's COMMIT.
type LatencyResult struct {
	Start    []time.Duration // until the handler was called
	Recorded []time.Duration // until the completion was visible in the database
}

// Latency enqueues one job at a time (each in its own transaction) to an idle worker
// and measures when its handler starts and when its completion is recorded.
//
// Nothing polls while the job waits for its handler, so the pickup is measured on an
// otherwise idle server. Once the handler has been called, the completion is looked
// for with back-to-back queries on one connection: each sample is late by at most one
// query's round trip (about 0.15 ms here). A sleep between queries would make it late
// by the sleep, and Go's sleeps are no shorter than a millisecond on Linux: with
// time.Sleep(500µs) between queries, recorded p50 came out 0.6-1.1 ms later than the
// completion's commit returned to the worker.
func Latency(ctx context.Context, e *Env, o LatencyOptions) (LatencyResult, error) {
	ran := make(chan handlerRun, 16)
	stop, err := e.Sys.StartWorker(ctx, e.Pool, o.Worker, func(id int64) {
		select {
		case ran <- handlerRun{id, time.Now()}:
		default: // a run of a job whose sample is over: nobody waits for it
		}
	})
	if err != nil {
		return LatencyResult{}, err
	}
	stop = once(stop)
	defer func() { _ = stop() }()
	// Let the worker finish starting (listener connected, first empty fetch done).
	sleepCtx(ctx, time.Second)
	conn, err := e.Pool.Acquire(ctx)
	if err != nil {
		return LatencyResult{}, err
	}
	defer conn.Release()

	var res LatencyResult
	for i := range o.Samples {
		sleepCtx(ctx, o.Gap+rand.N(o.Gap/2+1))
		start, recorded, err := latencySample(ctx, e, conn, ran, i)
		if err != nil {
			return res, err
		}
		res.Start = append(res.Start, start)
		res.Recorded = append(res.Recorded, recorded)
	}
	return res, stop()
}

// handlerRun is a call of the latency run's handler.
type handlerRun struct {
	id int64
	at time.Time
}

// latencySample enqueues job i in a transaction of its own and measures, from the return
// of its COMMIT, when its handler ran and when its completion could be read, within 30s.
func latencySample(ctx context.Context, e *Env, db Querier, ran <-chan handlerRun, i int) (start, recorded time.Duration, err error) {
	tx, err := e.Pool.Begin(ctx)
	if err != nil {
		return 0, 0, err
	}
	id, err := e.Sys.EnqueueTx(ctx, tx, i)
	if err != nil {
		_ = tx.Rollback(ctx)
		return 0, 0, err
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, 0, err
	}
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for run := false; !run; {
		select {
		case r := <-ran:
			run = r.id == id
			start = r.at.Sub(t0)
		case <-ctx.Done():
			return 0, 0, fmt.Errorf("job %d: its handler was not called within 30s: %w", id, ctx.Err())
		}
	}
	for {
		ok, err := e.Sys.Recorded(ctx, db, id)
		if err != nil {
			return 0, 0, fmt.Errorf("job %d: its handler ran, looking for its completion: %w", id, err)
		}
		if ok {
			return start, time.Since(t0), nil
		}
	}
}

// Percentile returns the p-th percentile (0..100) of ds, nearest rank.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

// Median returns the median of xs.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// once makes stop safe to call twice: the second call returns the first's error.
func once(stop func() error) func() error {
	var o sync.Once
	var err error
	return func() error {
		o.Do(func() { err = stop() })
		return err
	}
}
