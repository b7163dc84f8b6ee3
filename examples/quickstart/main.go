//go:generate go run -C ../../cmd/jobc . generate -C ../../examples/quickstart
// In the jobc repository the CLI is a module of its own (cmd/jobc) and runs from
// there; in your module the line is "//go:generate go tool jobc generate" (see the README).

// Command quickstart shows jobc end to end: a project and its welcome email job are
// written in one transaction, a transaction that rolls back leaves neither behind, and
// a worker sends the email.
//
//	DATABASE_URL=postgres://localhost/app go run ./examples/quickstart
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/examples/quickstart/internal/jobs"
	"github.com/jobc-dev/jobc/runtime"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		fmt.Fprintln(os.Stderr, "quickstart: set DATABASE_URL to a PostgreSQL database (or run `make demo`, which starts one)")
		os.Exit(2)
	}
	if err := run(ctx, url, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, url string, out io.Writer) error {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := setup(ctx, pool); err != nil {
		return err
	}
	fmt.Fprintln(out, "1. migrated the jobc tables and created table projects")

	id, jobID, err := createProject(ctx, pool, "Apollo", "ada@example.com")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "2. created project %d and enqueued welcome email job %d in the same transaction\n", id, jobID)

	err = createProjectThenFail(ctx, pool, "Gemini", "grace@example.com")
	fmt.Fprintf(out, "3. a transaction that failed after enqueueing rolled back: %v\n", err)

	mailer := &fakeMailer{sent: make(chan email, 1)}
	worker := runtime.NewWorker(pool, runtime.Config{
		Logger: slog.New(slog.DiscardHandler),
		Queues: map[string]runtime.QueueConfig{"email": {MaxWorkers: 2}},
	})
	if err := jobs.Register(worker, &handlers{mailer: mailer}); err != nil {
		return err
	}
	workCtx, stopWorker := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- worker.Run(workCtx) }()
	fmt.Fprintln(out, "4. started a worker on queue email")

	select {
	case m := <-mailer.sent:
		fmt.Fprintf(out, "5. the handler sent %q to %s (idempotency key %s)\n", m.subject, m.to, m.idempotencyKey)
	case err := <-done:
		stopWorker()
		return fmt.Errorf("worker stopped early: %w", err)
	case <-time.After(30 * time.Second):
		stopWorker()
		return errors.New("the welcome email was not sent within 30s")
	}
	stopWorker()
	if err := <-done; err != nil {
		return err
	}
	job, err := runtime.GetJob(ctx, pool, jobID)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "6. job %d is %s after %d attempt(s); the worker shut down cleanly\n", job.ID, job.State, job.Attempt)
	return nil
}

func setup(ctx context.Context, pool *pgxpool.Pool) error {
	if _, err := runtime.Migrate(ctx, pool); err != nil {
		return err
	}
	_, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS projects (
		id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		name text NOT NULL,
		owner_email text NOT NULL
	)`)
	return err
}

// createProject inserts a project and enqueues its welcome email in one transaction:
// both exist afterwards, or neither does.
func createProject(ctx context.Context, pool *pgxpool.Pool, name, email string) (projectID, jobID int64, err error) {
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `INSERT INTO projects (name, owner_email) VALUES ($1, $2) RETURNING id`, name, email).Scan(&projectID); err != nil {
			return err
		}
		job, err := jobs.EnqueueSendWelcomeEmail(ctx, tx, jobs.SendWelcomeEmailV1{
			ProjectID:   projectID,
			ProjectName: name,
			Email:       email,
		})
		jobID = job.ID
		return err
	})
	return projectID, jobID, err
}

// errBillingDown stands for any failure after the job was enqueued.
var errBillingDown = errors.New("billing is down")

// createProjectThenFail enqueues the welcome email, then fails: the transaction rolls
// back and takes the project and the job with it.
func createProjectThenFail(ctx context.Context, pool *pgxpool.Pool, name, email string) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var id int64
		if err := tx.QueryRow(ctx, `INSERT INTO projects (name, owner_email) VALUES ($1, $2) RETURNING id`, name, email).Scan(&id); err != nil {
			return err
		}
		if _, err := jobs.EnqueueSendWelcomeEmail(ctx, tx, jobs.SendWelcomeEmailV1{ProjectID: id, ProjectName: name, Email: email}); err != nil {
			return err
		}
		return errBillingDown
	})
}

// handlers implements jobs.Handlers: every job type of the catalogue.
type handlers struct {
	mailer *fakeMailer
}

func (h *handlers) HandleSendWelcomeEmail(ctx context.Context, job jobs.SendWelcomeEmailJob, p jobs.SendWelcomeEmail) error {
	return h.mailer.Send(ctx, email{idempotencyKey: job.IdempotencyKey(), to: p.Email, subject: "Welcome to " + p.ProjectName})
}

type email struct{ idempotencyKey, to, subject string }

// fakeMailer stands in for an email API: it hands each message to the demo instead
// of sending it.
type fakeMailer struct {
	sent chan email
}

func (m *fakeMailer) Send(ctx context.Context, e email) error {
	select {
	case m.sent <- e:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
