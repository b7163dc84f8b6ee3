package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
)

// options are the flags every command shares.
type options struct {
	dir string // project directory (where jobc.yaml is)
}

func newRoot() *cobra.Command {
	o := &options{}
	root := cli.NewRoot("Type-safe background jobs on PostgreSQL, generated from YAML", &o.dir)
	root.AddCommand(newInit(o), newGenerate(o), newDiff(o), newVet(o), newMigrate(o), newStatus(), newJobs(), newWorkflows(), newBench(), newCheck(o), newLock(o))
	root.AddCommand(newQueues(o), newLimits(), newWorkers())
	root.AddCommand(newUI(o))
	// The servers are binaries of their own, so that the brokers' and Prometheus's
	// libraries stay out of the module graph of every project that runs jobc as a tool.
	root.AddCommand(
		newServerCommand("relay", "Publish the outbox's events to NATS JetStream, RabbitMQ or Kafka (runs jobc-relay)"),
		newServerCommand("metrics", "Serve the database-side Prometheus gauges of the whole fleet (runs jobc-metrics)"))
	return root
}

// run executes the command line args and returns the exit status: 0 ok, 1 a finding
// or a failure, 2 a usage error (with the command's usage on stderr), 3 migrations
// pending (jobc migrate status), 127 a server binary (jobc-relay, jobc-metrics) not
// installed, or the status of the server binary it ran.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.Run(ctx, newRoot(), args, stdout, stderr)
}
