// Command jobc generates type-safe Go for background jobs declared in YAML and operates
// the PostgreSQL tables they run on.
//
//	jobc generate        write the Go code of the project in the current directory
//	jobc migrate up      apply pending migrations to $DATABASE_URL
//	jobc status          queues, workers and jobs no live worker takes
//	jobc jobs retry 13   run a failed job again
//
// Exit status: 0 ok, 1 a finding or a failure, 2 a usage error.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
