//go:generate go run -C ../../cmd/jobc . generate -C ../../examples/shop

// Command shop is a small e-commerce backend whose background work runs on jobc. Its
// catalogue (jobc.yaml and jobs/*.yaml) declares nine job types: order confirmation
// email, merchant webhooks, payment events, invoice PDFs, scheduled product
// publication, blob deletion after an account is deleted, a daily sales report, an
// hourly cart purge and a deprecated inventory sync.
//
// The demo places an order (the order and its jobs commit together), shows that a
// failed checkout leaves no job behind, receives a payment, schedules a product launch,
// deletes an account, then runs a worker against in-memory fakes of the email API, the
// blob store, the PDF renderer and two merchant endpoints until every job has finished,
// and prints what happened.
//
//	DATABASE_URL=postgres://localhost/shop go -C examples/shop run .
//
// The worker serves its Prometheus metrics (contrib/prometheus) and its readiness
// (Worker.HealthHandler) over HTTP; the demo reads both once the work is done.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	_ "time/tzdata" // the sales report's schedule names a time zone
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		fmt.Fprintln(os.Stderr, "shop: set DATABASE_URL to an empty PostgreSQL database (or run it through `go run ./internal/cmd/withpostgres --`, which starts one)")
		os.Exit(2)
	}
	// Warnings only: the demo prints its own account of what happened, and a job that
	// fails for good is worth a warning.
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := run(ctx, url, os.Stdout, log); err != nil {
		fmt.Fprintln(os.Stderr, "shop:", err)
		os.Exit(1)
	}
}

// run is the demo; see the package documentation. It prints to out and logs to log.
func run(ctx context.Context, url string, out io.Writer, log *slog.Logger) error {
	d, err := newDemo(ctx, url, out, log)
	if err != nil {
		return err
	}
	defer d.close()
	return d.run(ctx)
}
