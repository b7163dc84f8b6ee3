// Command jobc-relay is `jobc relay`: it publishes the outbox's events to NATS JetStream,
// RabbitMQ or Kafka until stopped, and lists and retries the events the broker refused.
// It is a binary (and a module) of its own so that the brokers' client libraries stay
// out of the module graph of every project that runs jobc as a tool; `jobc relay ARGS`
// runs `jobc-relay ARGS`.
//
//	jobc-relay --to nats://127.0.0.1:4222   publish until SIGINT or SIGTERM
//	jobc-relay failed                       the events refused for good
//	jobc-relay retry --all                  make them pending again
//
// Exit status: 0 ok, 1 a failure, 2 a usage error.
package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
)

func main() { cli.Main("relay", newRoot) }

// newRoot is jobc's root command with `relay` its only command, so that help, usage
// and errors name `jobc relay`, as the user typed it.
func newRoot() *cobra.Command {
	var dir string
	root := cli.NewRoot("Publish the outbox's events to NATS JetStream, RabbitMQ or Kafka", &dir)
	root.AddCommand(newRelay(&dir))
	return root
}

// run executes the command line args (starting with "relay") and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.Run(ctx, newRoot(), args, stdout, stderr)
}
