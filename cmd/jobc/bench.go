package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
	"github.com/jobc-dev/jobc/internal/selfbench"
)

func newBench() *cobra.Command {
	var (
		dbf *cli.DBFlags
		o   = selfbench.Options{Jobs: 20000, Concurrency: 100, Producers: 8, Duration: 5 * time.Second}
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure enqueue, burn-down and pickup latency on a database",
		Long: `jobc bench measures jobc on the database at $DATABASE_URL, in a schema of its own that it
drops afterwards: transactional enqueue (each transaction inserts a business row and one
job), bulk enqueue with COPY, burn-down (claim, no-op handler, record), and the latency
from enqueue to handler start for an idle worker. The machine and server settings
dominate the figures: compare runs on the same machine.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := dbf.Target(cmd)
			if err != nil {
				return err
			}
			o.Configure = t.Configure
			var bar progress
			phase := ""
			o.Progress = func(p string, done, total int) {
				if p != phase {
					if bar != nil {
						bar.Finish()
					}
					phase = p
					bar = newProgress(cmd.ErrOrStderr(), p, total)
				}
				bar.Set(done)
			}
			res, err := selfbench.Run(cmd.Context(), t.URL(), o)
			if bar != nil {
				bar.Finish()
			}
			if err != nil {
				return t.Explain(cmd.Context(), nil, fmt.Errorf("jobc: bench: %w", err))
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "transactional enqueue  %10.0f tx/s   (%d producers, %s)\n", res.TxEnqueuePerSec, o.Producers, o.Duration)
			fmt.Fprintf(out, "COPY enqueue           %10.0f jobs/s (%d jobs)\n", res.CopyEnqueuePerSec, o.Jobs)
			fmt.Fprintf(out, "burn-down              %10.0f jobs/s (%d handler slots)\n", res.BurnDownPerSec, o.Concurrency)
			fmt.Fprintf(out, "pickup latency         p50 %s, p99 %s (idle worker, notification)\n", res.LatencyP50.Round(10*time.Microsecond), res.LatencyP99.Round(10*time.Microsecond))
			return nil
		},
	}
	dbf = cli.AddDBFlags(cmd.Flags(), cli.DefaultStatementTimeout)
	cmd.Flags().IntVar(&o.Jobs, "jobs", o.Jobs, "jobs for the COPY and burn-down phases")
	cmd.Flags().IntVar(&o.Concurrency, "concurrency", o.Concurrency, "handler slots of the worker")
	cmd.Flags().IntVar(&o.Producers, "producers", o.Producers, "concurrent transactions in the enqueue phase")
	cmd.Flags().DurationVar(&o.Duration, "duration", o.Duration, "length of the enqueue phase")
	return cmd
}
