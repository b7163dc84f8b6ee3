package bench

import (
	"context"
	"log/slog"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// RiverArgs is Payload as River job args.
type RiverArgs struct {
	Payload
}

func (RiverArgs) Kind() string { return "bench_noop" }

type riverWorker struct {
	river.WorkerDefaults[RiverArgs]
	h *atomic.Pointer[Handler]
}

func (w *riverWorker) Work(ctx context.Context, job *river.Job[RiverArgs]) error {
	if h := w.h.Load(); h != nil {
		(*h)(job.ID)
	}
	return nil
}

// River is River under test. Inserts go through an insert-only client; a worker is a
// client with a queue.
type River struct {
	inserter *river.Client[pgx.Tx]
	h        atomic.Pointer[Handler]
}

func (*River) Name() string { return "river" }

func (*River) Tables() []string { return []string{"river_job"} }

func (r *River) workers() *river.Workers {
	ws := river.NewWorkers()
	river.AddWorker(ws, &riverWorker{h: &r.h})
	return ws
}

func (r *River) Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	m, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return err
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return err
	}
	r.inserter, err = river.NewClient(riverpgxv5.New(pool), &river.Config{
		Logger:  slog.New(slog.DiscardHandler),
		Workers: r.workers(),
	})
	return err
}

func riverParams(from, k int) []river.InsertManyParams {
	ps := make([]river.InsertManyParams, k)
	for i := range ps {
		ps[i] = river.InsertManyParams{Args: RiverArgs{payload(from + i)}}
	}
	return ps
}

func (r *River) BulkInsert(ctx context.Context, pool *pgxpool.Pool, n int) error {
	for done := 0; done < n; done += bulkChunk {
		k := min(bulkChunk, n-done)
		if _, err := r.inserter.InsertMany(ctx, riverParams(done, k)); err != nil {
			return err
		}
	}
	return nil
}

func (r *River) EnqueueTx(ctx context.Context, tx pgx.Tx, i int) (int64, error) {
	res, err := r.inserter.InsertTx(ctx, tx, RiverArgs{payload(i)}, nil)
	if err != nil {
		return 0, err
	}
	return res.Job.ID, nil
}

func (r *River) EnqueueBatchTx(ctx context.Context, tx pgx.Tx, k int) error {
	_, err := r.inserter.InsertManyFastTx(ctx, tx, riverParams(0, k))
	return err
}

func (r *River) StartWorker(ctx context.Context, pool *pgxpool.Pool, cfg WorkerConfig, h Handler) (func() error, error) {
	r.h.Store(&h)
	cooldown := cfg.FetchCooldown
	if cooldown <= 0 {
		cooldown = river.FetchCooldownDefault
	}
	c, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Logger:                      slog.New(slog.DiscardHandler),
		Workers:                     r.workers(),
		Queues:                      map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.Concurrency}},
		FetchPollInterval:           cfg.PollInterval,
		FetchCooldown:               cooldown,
		CompletedJobRetentionPeriod: cfg.Retention,
	})
	if err != nil {
		return nil, err
	}
	// Enqueues in the latency benchmark go through the working client, whose
	// notification limiter is the one an application would have.
	r.inserter = c
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	return func() error { return c.Stop(context.WithoutCancel(ctx)) }, nil
}

func (*River) Pending(ctx context.Context, pool *pgxpool.Pool) (int64, error) {
	var n int64
	err := pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE state <> 'completed'`).Scan(&n)
	return n, err
}

func (*River) Recorded(ctx context.Context, db Querier, id int64) (bool, error) {
	var ok bool
	err := db.QueryRow(ctx, `SELECT coalesce((SELECT state = 'completed' FROM river_job WHERE id = $1), false)`, id).Scan(&ok)
	return ok, err
}
