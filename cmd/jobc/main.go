// Command jobc generates type-safe Go for background jobs declared in YAML and operates
// the PostgreSQL tables they run on.
//
//	jobc generate        write the Go code of the project in the current directory
//	jobc migrate up      apply pending migrations to $DATABASE_URL
//	jobc migrate status  show which migrations are applied
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRoot().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(exitCode(err))
	}
}
