package bench

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime"
)

// jobcSchema validates Payload, as a generated job type would.
const jobcSchema = `{"type":"object","additionalProperties":false,"required":["n","email"],
	"properties":{"n":{"type":"integer","minimum":0},"email":{"type":"string","minLength":3}}}`

// JobcType is the benchmark's job type, built as generated code builds one.
var JobcType = runtime.MustJobType(runtime.JobType{
	Kind:         "bench_noop",
	Queue:        "default",
	Priority:     5,
	MaxAttempts:  5,
	Backoff:      runtime.Backoff{Kind: runtime.BackoffConstant, Initial: time.Second},
	WriteVersion: 1,
	Versions:     []runtime.Version{{Number: 1, Schema: jobcSchema}},
})

// Jobc is the jobc runtime under test.
type Jobc struct{}

func (*Jobc) Name() string { return "jobc" }

func (*Jobc) Tables() []string { return []string{"jobc_jobs", "jobc_jobs_finished"} }

func (*Jobc) Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	_, err := runtime.Migrate(ctx, pool)
	return err
}

const bulkChunk = 5000

func (*Jobc) BulkInsert(ctx context.Context, pool *pgxpool.Pool, n int) error {
	for done := 0; done < n; done += bulkChunk {
		k := min(bulkChunk, n-done)
		ps := make([]Payload, k)
		for i := range ps {
			ps[i] = payload(done + i)
		}
		if _, err := runtime.EnqueueMany(ctx, pool, JobcType, ps); err != nil {
			return err
		}
	}
	return nil
}

func (*Jobc) EnqueueTx(ctx context.Context, tx pgx.Tx, i int) (int64, error) {
	e, err := runtime.Enqueue(ctx, tx, JobcType, payload(i))
	return e.ID, err
}

func (*Jobc) EnqueueBatchTx(ctx context.Context, tx pgx.Tx, k int) error {
	ps := make([]Payload, k)
	for i := range ps {
		ps[i] = payload(i)
	}
	_, err := runtime.EnqueueMany(ctx, tx, JobcType, ps)
	return err
}

func (*Jobc) StartWorker(ctx context.Context, pool *pgxpool.Pool, cfg WorkerConfig, h Handler) (func() error, error) {
	rc := runtime.Config{
		Queues:         map[string]runtime.QueueConfig{"default": {MaxWorkers: cfg.Concurrency}},
		Logger:         slog.New(slog.DiscardHandler),
		PollInterval:   cfg.PollInterval,
		FetchBatch:     cfg.FetchBatch,
		AsyncOutcomes:  cfg.AsyncOutcomes,
		VacuumDeadRows: cfg.VacuumDeadRows,
	}
	if cfg.Retention > 0 {
		rc.Retention.Completed = cfg.Retention
		rc.PruneInterval = min(time.Minute, cfg.Retention/4)
	}
	w := runtime.NewWorker(pool, rc)
	if err := runtime.Handle(w, JobcType, func(ctx context.Context, job *runtime.Job, p Payload) error {
		h(job.ID)
		return nil
	}); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	return func() error { cancel(); return <-done }, nil
}

func (*Jobc) Pending(ctx context.Context, pool *pgxpool.Pool) (int64, error) {
	var n int64
	err := pool.QueryRow(ctx, `SELECT count(*) FROM jobc_jobs`).Scan(&n)
	return n, err
}

func (*Jobc) Recorded(ctx context.Context, db Querier, id int64) (bool, error) {
	var ok bool
	err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM jobc_jobs_finished WHERE id = $1)`, id).Scan(&ok)
	return ok, err
}
