package runtime_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// chargeType declares two error classes, as `error_classes` and a job's `errors` do in
// jobc.yaml: transient errors are retried, invalid ones fail the job at once. The
// generated job handle has a method per class that calls Classify.
var chargeType = runtime.MustJobType(runtime.JobType{
	Kind:         "charge_card",
	Queue:        "payments",
	Priority:     1,
	MaxAttempts:  5,
	Classes:      []runtime.ErrorClass{{Name: "transient", Retry: true}, {Name: "invalid", Retry: false}},
	DefaultClass: "transient",
	WriteVersion: 1,
	Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object","required":["order_id"],
		"properties":{"order_id":{"type":"string"}}}`}},
})

type charge struct {
	OrderID string `json:"order_id"`
}

// ExampleClassify fails a job without retries: its handler returns an error of a
// class that does not retry, so the first attempt is the last, and the job is kept
// as failed with the attempt's error.
func ExampleClassify() {
	pool, _, cleanup := pgtest.ExampleSchema("classify", migrated)
	defer cleanup()
	ctx := context.Background()
	job, err := runtime.Enqueue(ctx, pool, chargeType, charge{OrderID: "A-1"})
	if err != nil {
		panic(err)
	}
	w := quietWorker(pool)
	done := make(chan struct{})
	err = runtime.Handle(w, chargeType, func(ctx context.Context, job *runtime.Job, p charge) error {
		defer close(done)
		return runtime.Classify("invalid", errors.New("card number has 15 digits"))
	})
	if err != nil {
		panic(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	finished := make(chan error)
	go func() { finished <- w.Run(runCtx) }()
	<-done
	stop() // a graceful shutdown writes the outcome of every handler that returned
	if err := <-finished; err != nil {
		panic(err)
	}
	info, err := runtime.GetJob(ctx, pool, job.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println(info.State, "on attempt", info.Attempt, "of", info.MaxAttempts)
	for _, e := range info.Errors {
		fmt.Printf("attempt %d: %s: %s\n", e.Attempt, e.Class, e.Error)
	}
	// Output:
	// failed on attempt 1 of 5
	// attempt 1: invalid: card number has 15 digits
}

// ExampleUnique keeps one job per user: enqueueing the same key again, while the
// first job waits, inserts nothing and returns the first job's id.
func ExampleUnique() {
	pool, _, cleanup := pgtest.ExampleSchema("unique", migrated)
	defer cleanup()
	ctx := context.Background()
	reindex := runtime.MustJobType(runtime.JobType{
		Kind:         "reindex_user",
		Queue:        "search",
		Priority:     5,
		MaxAttempts:  3,
		Unique:       &runtime.Unique{Fields: []string{"user_id"}},
		WriteVersion: 1,
		Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object","required":["user_id"],
			"properties":{"user_id":{"type":"integer"}}}`}},
	})
	type user struct {
		UserID int64 `json:"user_id"`
	}
	first, err := runtime.Enqueue(ctx, pool, reindex, user{UserID: 7})
	if err != nil {
		panic(err)
	}
	again, err := runtime.Enqueue(ctx, pool, reindex, user{UserID: 7})
	if err != nil {
		panic(err)
	}
	other, err := runtime.Enqueue(ctx, pool, reindex, user{UserID: 8})
	if err != nil {
		panic(err)
	}
	fmt.Println("first:", first.Duplicate)
	fmt.Println("same key:", again.Duplicate, again.ID == first.ID)
	fmt.Println("other key:", other.Duplicate, other.ID == first.ID)
	// Output:
	// first: false
	// same key: true true
	// other key: false false
}
