package bench

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime"
)

// FlowPayload is the payload of the flow-control benchmarks' job type: Key is the field
// flow control is by.
type FlowPayload struct {
	Key string `json:"key"`
	N   int    `json:"n"`
}

const flowSchema = `{"type":"object","additionalProperties":false,"required":["key","n"],
	"properties":{"key":{"type":"string","minLength":1},"n":{"type":"integer","minimum":0}}}`

// FlowJobType returns the flow benchmarks' job type with the given flow control (nil:
// none), built as generated code builds one. A producer must enqueue with the job type
// the worker runs: the flow key is computed at enqueue.
func FlowJobType(flow, queueFlow *runtime.Flow) *runtime.JobType {
	return runtime.MustJobType(runtime.JobType{
		Kind:         "bench_flow",
		Queue:        "default",
		Priority:     5,
		MaxAttempts:  5,
		Backoff:      runtime.Backoff{Kind: runtime.BackoffConstant, Initial: time.Second},
		WriteVersion: 1,
		Versions:     []runtime.Version{{Number: 1, Schema: flowSchema}},
		Flow:         flow,
		QueueFlow:    queueFlow,
	})
}

// FlowKey is the payload key of job i of a run spreading its jobs over keys keys.
func FlowKey(i, keys int) string { return fmt.Sprintf("k%04d", i%keys) }

// FlowJobc is jobc with the flow benchmarks' job type as a System, so that BurnDown
// measures it: its jobs spread round-robin over Keys payload keys.
type FlowJobc struct {
	Jobc         // its schema, tables and how completions are counted
	Label string // database name prefix: letters, digits and _
	JT    *runtime.JobType
	Keys  int
}

func (s *FlowJobc) Name() string { return s.Label }

func (s *FlowJobc) BulkInsert(ctx context.Context, pool *pgxpool.Pool, n int) error {
	return EnqueueFlow(ctx, pool, s.JT, n, func(i int) string { return FlowKey(i, s.Keys) })
}

// EnqueueFlow enqueues n jobs of jt with EnqueueMany in chunks, job i with key key(i).
func EnqueueFlow(ctx context.Context, dbtx runtime.DBTX, jt *runtime.JobType, n int, key func(int) string) error {
	for done := 0; done < n; done += bulkChunk {
		k := min(bulkChunk, n-done)
		ps := make([]FlowPayload, k)
		for i := range ps {
			ps[i] = FlowPayload{Key: key(done + i), N: done + i}
		}
		if _, err := runtime.EnqueueMany(ctx, dbtx, jt, ps); err != nil {
			return err
		}
	}
	return nil
}

func (s *FlowJobc) EnqueueTx(ctx context.Context, tx pgx.Tx, i int) (int64, error) {
	e, err := runtime.Enqueue(ctx, tx, s.JT, FlowPayload{Key: FlowKey(i, s.Keys), N: i})
	return e.ID, err
}

func (s *FlowJobc) EnqueueBatchTx(ctx context.Context, tx pgx.Tx, k int) error {
	return EnqueueFlow(ctx, tx, s.JT, k, func(i int) string { return FlowKey(i, s.Keys) })
}

func (s *FlowJobc) StartWorker(ctx context.Context, pool *pgxpool.Pool, cfg WorkerConfig, h Handler) (func() error, error) {
	return StartFlowWorkers(ctx, pool, s.JT, 1, cfg, func(ctx context.Context, job *runtime.Job, _ FlowPayload) error {
		h(job.ID)
		return nil
	})
}

// StartFlowWorkers starts n workers in this process, each running jt's jobs with fn
// and cfg.Concurrency handlers; stop shuts them all down.
func StartFlowWorkers(ctx context.Context, pool *pgxpool.Pool, jt *runtime.JobType, n int, cfg WorkerConfig,
	fn func(context.Context, *runtime.Job, FlowPayload) error,
) (stop func() error, err error) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, n)
	for range n {
		w := runtime.NewWorker(pool, runtime.Config{
			Queues:        map[string]runtime.QueueConfig{"default": {MaxWorkers: cfg.Concurrency}},
			Logger:        slog.New(slog.DiscardHandler),
			PollInterval:  cfg.PollInterval,
			FetchBatch:    cfg.FetchBatch,
			AsyncOutcomes: cfg.AsyncOutcomes,
			ShutdownGrace: time.Second,
		})
		if err := runtime.Handle(w, jt, fn); err != nil {
			cancel()
			return nil, err
		}
		go func() { done <- w.Run(ctx) }()
	}
	return once(func() error {
		cancel()
		var first error
		for range n {
			if err := <-done; err != nil && first == nil {
				first = err
			}
		}
		return first
	}), nil
}
