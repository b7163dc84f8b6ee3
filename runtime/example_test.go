package runtime_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// welcome is a payload type, as jobc generates one per payload version.
type welcome struct {
	UserID int64  `json:"user_id"`
	Email  string `json:"email"`
}

// welcomeType describes the job to the runtime, as generated code does with
// runtime.MustJobType; applications call the generated Enqueue<Type> and Register
// functions instead of using it directly.
var welcomeType = runtime.MustJobType(runtime.JobType{
	Kind:         "send_welcome_email",
	Queue:        "email",
	Priority:     3,
	MaxAttempts:  5,
	Backoff:      runtime.Backoff{Kind: runtime.BackoffExponential, Initial: time.Second, Max: time.Minute},
	WriteVersion: 1,
	Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object","additionalProperties":false,
		"required":["user_id","email"],"properties":{"user_id":{"type":"integer"},"email":{"type":"string","format":"email"}}}`}},
})

func quietWorker(pool *pgxpool.Pool) *runtime.Worker {
	return runtime.NewWorker(pool, runtime.Config{
		Logger:            slog.New(slog.DiscardHandler),
		PollInterval:      50 * time.Millisecond,
		SchedulerInterval: 50 * time.Millisecond,
	})
}

// ExampleEnqueue enqueues a job in the transaction that creates the user: both
// commit, or neither does.
func ExampleEnqueue() {
	pool, _, cleanup := pgtest.ExampleSchema("enqueue", migrated)
	defer cleanup()
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `CREATE TABLE users (id bigint PRIMARY KEY, email text)`); err != nil {
		panic(err)
	}

	var job runtime.Enqueued
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO users VALUES (42, 'ada@example.com')`); err != nil {
			return err
		}
		var err error
		job, err = runtime.Enqueue(ctx, tx, welcomeType, welcome{UserID: 42, Email: "ada@example.com"})
		return err
	})
	if err != nil {
		panic(err)
	}
	info, err := runtime.GetJob(ctx, pool, job.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println(info.Kind, info.Queue, info.State, string(info.Payload))

	// An invalid payload is rejected before anything is written.
	_, err = runtime.Enqueue(ctx, pool, welcomeType, welcome{UserID: 43, Email: "not an email"})
	fmt.Println(err)
	// Output:
	// send_welcome_email email available {"email": "ada@example.com", "user_id": 42}
	// jobc: enqueue send_welcome_email: invalid send_welcome_email payload (version 1): /email: 'not an email' is not valid email: missing @
}

// ExampleWorker runs a worker until its jobs are done, then shuts it down gracefully.
func ExampleWorker() {
	pool, _, cleanup := pgtest.ExampleSchema("worker", migrated)
	defer cleanup()
	ctx := context.Background()
	if _, err := runtime.EnqueueMany(ctx, pool, welcomeType, []welcome{
		{UserID: 1, Email: "ada@example.com"},
		{UserID: 2, Email: "grace@example.com"},
	}); err != nil {
		panic(err)
	}

	w := quietWorker(pool)
	done := make(chan string, 2)
	err := runtime.Handle(w, welcomeType, func(ctx context.Context, job *runtime.Job, p welcome) error {
		done <- fmt.Sprintf("welcomed %s on attempt %d", p.Email, job.Attempt)
		return nil
	})
	if err != nil {
		panic(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	finished := make(chan error)
	go func() { finished <- w.Run(runCtx) }()
	got := []string{<-done, <-done}
	if got[0] > got[1] {
		got[0], got[1] = got[1], got[0]
	}
	fmt.Println(got[0])
	fmt.Println(got[1])
	stop()
	fmt.Println("stopped:", <-finished)
	// Output:
	// welcomed ada@example.com on attempt 1
	// welcomed grace@example.com on attempt 1
	// stopped: <nil>
}

// ExampleCancel cancels a job that has not started yet.
func ExampleCancelJob() {
	pool, _, cleanup := pgtest.ExampleSchema("cancel", migrated)
	defer cleanup()
	ctx := context.Background()
	job, err := runtime.Enqueue(ctx, pool, welcomeType, welcome{UserID: 1, Email: "ada@example.com"}, runtime.RunAfter(time.Hour))
	if err != nil {
		panic(err)
	}
	state, err := runtime.CancelJob(ctx, pool, job.ID)
	fmt.Println(state, err)
	_, err = runtime.CancelJob(ctx, pool, job.ID)
	fmt.Println(err)
	// Output:
	// cancelled <nil>
	// jobc: job already finished: job 1 is cancelled
}

// ExampleMigrate applies jobc's migrations and function library; running it again
// does nothing.
func ExampleMigrate() {
	pool, _, cleanup := pgtest.ExampleSchema("migrate", nil)
	defer cleanup()
	ctx := context.Background()
	applied, err := runtime.Migrate(ctx, pool)
	if err != nil {
		panic(err)
	}
	for _, m := range applied {
		fmt.Printf("applied %04d_%s\n", m.Version, m.Name)
	}
	st, err := runtime.GetMigrationStatus(ctx, pool)
	if err != nil {
		panic(err)
	}
	fmt.Printf("function library v%d\n", st.LibraryApplied)
	again, err := runtime.Migrate(ctx, pool)
	fmt.Println(len(again), err)
	// Output:
	// applied 0001_baseline
	// function library v1
	// 0 <nil>
}
