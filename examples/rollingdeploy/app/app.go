// Package app is the release-independent part of the rolling-deploy example: flags,
// the database, a producer loop and a worker loop. Each release supplies what depends
// on its generated code: how to enqueue, and how to register its handler.
package app

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime"
)

// Release is what one release of the app contributes.
type Release struct {
	Name string
	// Enqueue writes order n's receipt job in tx, the transaction that records the order.
	Enqueue func(ctx context.Context, tx pgx.Tx, orderID, email string) error
	// Register registers the release's handler, which calls deliver for each receipt.
	Register func(w *runtime.Worker, deliver Deliver) error
}

// Deliver records one delivered receipt: which job, seen by which release as which
// payload version, for which order and recipient.
type Deliver func(ctx context.Context, job *runtime.Job, orderID, recipient, locale string) error

// Main runs "produce" or "work" for a release, reading DATABASE_URL.
func Main(r Release) {
	if err := run(r, os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", r.Name, err)
		os.Exit(1)
	}
}

func run(r Release, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: %s produce|work [flags]", r.Name)
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	n := fs.Int("n", 100, "produce: how many orders")
	every := fs.Duration("every", 5*time.Millisecond, "produce: pause between orders")
	prefix := fs.String("prefix", r.Name, "produce: order id prefix")
	id := fs.String("id", "", "work: worker id")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		return err
	}
	defer pool.Close()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("release", r.Name)
	switch args[0] {
	case "produce":
		return produce(ctx, pool, r, *n, *every, *prefix)
	case "work":
		return work(ctx, pool, r, *id, log)
	}
	return fmt.Errorf("unknown command %q", args[0])
}

// Setup creates the app's tables; the test runs it once before any release starts.
func Setup(ctx context.Context, pool *pgxpool.Pool) error {
	if _, err := runtime.Migrate(ctx, pool); err != nil {
		return err
	}
	_, err := pool.Exec(ctx, `
		CREATE TABLE IF NOT EXISTS orders (id text PRIMARY KEY, email text NOT NULL, release text NOT NULL);
		CREATE TABLE IF NOT EXISTS deliveries (
			job_id bigint NOT NULL, release text NOT NULL, payload_version int NOT NULL,
			attempt int NOT NULL, order_id text NOT NULL, recipient text NOT NULL, locale text NOT NULL
		)`)
	return err
}

func produce(ctx context.Context, pool *pgxpool.Pool, r Release, n int, every time.Duration, prefix string) error {
	for i := range n {
		orderID := fmt.Sprintf("%s-%04d", prefix, i)
		email := fmt.Sprintf("customer%d@example.com", i)
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `INSERT INTO orders VALUES ($1, $2, $3)`, orderID, email, r.Name); err != nil {
				return err
			}
			return r.Enqueue(ctx, tx, orderID, email)
		})
		if err != nil {
			return fmt.Errorf("order %s: %w", orderID, err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(every):
		}
	}
	return nil
}

func work(ctx context.Context, pool *pgxpool.Pool, r Release, id string, log *slog.Logger) error {
	w := runtime.NewWorker(pool, runtime.Config{
		ID:                id,
		Logger:            log,
		PollInterval:      100 * time.Millisecond,
		SchedulerInterval: 100 * time.Millisecond,
		LeaseDuration:     5 * time.Second,
		ShutdownGrace:     5 * time.Second,
	})
	deliver := func(ctx context.Context, job *runtime.Job, orderID, recipient, locale string) error {
		_, err := pool.Exec(ctx, `INSERT INTO deliveries VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			job.ID, r.Name, job.PayloadVersion, job.Attempt, orderID, recipient, locale)
		return err
	}
	if err := r.Register(w, deliver); err != nil {
		return err
	}
	return w.Run(ctx)
}
