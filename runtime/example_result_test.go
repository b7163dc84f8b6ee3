package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// quote is a payload type and quoteResult the result its handler returns, as jobc
// generates them for a job with result: in its spec.
type (
	quote struct {
		SKU string `json:"sku"`
	}
	quoteResult struct {
		PriceCents int64 `json:"price_cents"`
	}
)

var quoteType = runtime.MustJobType(runtime.JobType{
	Kind: "quote_price", Queue: "pricing", Priority: 5, MaxAttempts: 3,
	WriteVersion: 1,
	Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object","additionalProperties":false,
		"required":["sku"],"properties":{"sku":{"type":"string"}}}`}},
	ResultWriteVersion: 1,
	ResultVersions: []runtime.Version{{Number: 1, Schema: `{"type":"object","additionalProperties":false,
		"required":["price_cents"],"properties":{"price_cents":{"type":"integer","minimum":0}}}`}},
})

// ExampleHandleResult registers a handler that returns a typed result, and reads the
// result back by the job's id once the job has completed (generated code:
// Get<Type>Result).
func ExampleHandleResult() {
	pool, _, cleanup := pgtest.ExampleSchema("result", migrated)
	defer cleanup()
	ctx := context.Background()
	job, err := runtime.Enqueue(ctx, pool, quoteType, quote{SKU: "tea-250g"})
	if err != nil {
		panic(err)
	}
	_, err = runtime.JobResult[quoteResult](ctx, pool, quoteType, job.ID)
	fmt.Println(errors.Is(err, runtime.ErrNoResult), err)

	w := quietWorker(pool)
	if err := runtime.HandleResult(w, quoteType, func(_ context.Context, _ *runtime.Job, q quote) (quoteResult, error) {
		return quoteResult{PriceCents: 450}, nil
	}); err != nil {
		panic(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		res, err := runtime.JobResult[quoteResult](ctx, pool, quoteType, job.ID)
		if err == nil {
			fmt.Println(res.PriceCents)
			break
		}
		if !errors.Is(err, runtime.ErrNoResult) || time.Now().After(deadline) {
			panic(err)
		}
	}
	stop()
	if err := <-done; err != nil {
		panic(err)
	}
	// Output:
	// true jobc: result of job 1 (quote_price): the job is available: jobc: job has no result
	// 450
}
