// Command jobc-metrics is `jobc metrics`: it serves the database-side Prometheus gauges
// of the whole fleet on /metrics. It is a binary (and a module) of its own so that the
// Prometheus client library stays out of the module graph of every project that runs
// jobc as a tool; `jobc metrics ARGS` runs `jobc-metrics ARGS`.
//
//	jobc-metrics --addr 127.0.0.1:9090   serve until SIGINT or SIGTERM
//
// Exit status: 0 ok, 1 a failure, 2 a usage error.
package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
)

func main() { cli.Main("metrics", newRoot) }

// newRoot is jobc's root command with `metrics` its only command, so that help, usage
// and errors name `jobc metrics`, as the user typed it.
func newRoot() *cobra.Command {
	var dir string // no command of jobc-metrics reads a project
	root := cli.NewRoot("Serve the database-side Prometheus gauges of the whole fleet", &dir)
	root.AddCommand(newMetrics())
	return root
}

// run executes the command line args (starting with "metrics") and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.Run(ctx, newRoot(), args, stdout, stderr)
}
