package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
	"github.com/jobc-dev/jobc/generator/spec"
	"github.com/jobc-dev/jobc/runtime"
)

// queueJSON is one queue in `jobc queues --json` and `jobc status --json`; the field
// names are documented in docs/cli.md and stay stable.
type queueJSON struct {
	Queue                     string  `json:"queue"`
	Available                 int64   `json:"available"`
	Scheduled                 int64   `json:"scheduled"`
	Running                   int64   `json:"running"`
	OldestAvailableAgeSeconds float64 `json:"oldest_available_age_seconds"`
	CompletedLastHour         int64   `json:"completed_last_hour"`
	FailedLastHour            int64   `json:"failed_last_hour"`
	Paused                    bool    `json:"paused"`
	Workers                   int     `json:"workers"`
}

func toQueueJSON(stats []runtime.QueueStat) []queueJSON {
	out := make([]queueJSON, len(stats))
	for i, q := range stats {
		out[i] = queueJSON{Queue: q.Queue, Available: q.Available, Scheduled: q.Scheduled, Running: q.Running,
			OldestAvailableAgeSeconds: cli.Seconds(q.OldestAvailableAge), CompletedLastHour: q.CompletedLastHour,
			FailedLastHour: q.FailedLastHour, Paused: q.Paused, Workers: q.Workers}
	}
	return out
}

// printQueues prints the queue table of jobc queues and jobc status, or a sentence
// when there is no queue.
func printQueues(cmd *cobra.Command, stats []runtime.QueueStat, indent string) error {
	if len(stats) == 0 {
		_, err := fmt.Fprintln(cmd.OutOrStdout(), indent+"no queues: no queue has unfinished jobs, jobs finished in the last hour, a pause or a live worker")
		return err
	}
	t := cli.NewTable(cmd.OutOrStdout(), indent+"QUEUE", "AVAILABLE", "SCHEDULED", "RUNNING", "OLDEST AVAILABLE", "COMPLETED 1H", "FAILED 1H", "PAUSED", "WORKERS")
	for _, q := range stats {
		paused := "no"
		if q.Paused {
			paused = "PAUSED"
		}
		t.Row(indent+q.Queue, q.Available, q.Scheduled, q.Running, cli.Age(q.OldestAvailableAge), q.CompletedLastHour, q.FailedLastHour, paused, q.Workers)
	}
	return t.Flush()
}

func newQueues(o *options) *cobra.Command {
	var (
		dbf    *cli.DBFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "queues",
		Short: "List the queues with their jobs by state, oldest available age and pause; pause and resume one",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cli.WithConn(cmd, dbf, func(ctx context.Context, db runtime.DBTX) error {
				stats, err := runtime.ListQueueStats(ctx, db)
				if err != nil {
					return err
				}
				if asJSON {
					return cli.WriteJSON(cmd.OutOrStdout(), toQueueJSON(stats))
				}
				return printQueues(cmd, stats, "")
			})
		},
	}
	dbf = cli.AddDBFlags(cmd.PersistentFlags(), cli.DefaultStatementTimeout)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (fields in docs/cli.md)")
	pause := &cobra.Command{
		Use:   "pause QUEUE",
		Short: "Stop every worker claiming from a queue (persisted: it survives restarts); running jobs finish",
		Long: `jobc queues pause stops every worker of the fleet claiming jobs from the queue: at once through a
notification, within one poll interval at the latest. Running jobs finish. The pause is
stored in the database, so it holds across worker restarts and deploys until
"jobc queues resume". A queue no worker serves yet can be paused; pausing twice is fine.
When no job type of jobc.yaml (in the directory -C names) and no live worker uses the
queue, a warning on stderr says so and names the queues in use: a misspelt name pauses
nothing that runs.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var warning string
			check := func(ctx context.Context, db runtime.DBTX) (err error) {
				warning, err = unusedQueue(ctx, db, o.dir, args[0])
				return err
			}
			if err := queueOp(cmd, dbf, args[0], check, runtime.PauseQueue,
				"queue %s paused: no job of it starts from now on; running jobs finish\n"); err != nil {
				return err
			}
			if warning != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), warning)
			}
			return nil
		},
	}
	resume := &cobra.Command{
		Use:   "resume QUEUE",
		Short: "Let workers claim from a paused queue again, at once",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return queueOp(cmd, dbf, args[0], nil, runtime.ResumeQueue, "queue %s resumed\n")
		},
	}
	cmd.AddCommand(pause, resume)
	return cmd
}

// queueOp runs op on queue and prints done; check, when not nil, runs first on the
// same connection.
func queueOp(cmd *cobra.Command, dbf *cli.DBFlags, queue string, check func(context.Context, runtime.DBTX) error,
	op func(context.Context, runtime.DBTX, string) error, done string) error {
	if queue == "" {
		return cli.AsUsage(cmd, runtime.ErrEmptyQueueName)
	}
	return cli.WithConn(cmd, dbf, func(ctx context.Context, db runtime.DBTX) error {
		if check != nil {
			if err := check(ctx, db); err != nil {
				return err
			}
		}
		if err := op(ctx, db, queue); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), done, cli.Esc(queue))
		return nil
	})
}

// oldestOver returns the queues whose oldest available job has waited longer than max.
func oldestOver(stats []runtime.QueueStat, max time.Duration) []runtime.QueueStat {
	var out []runtime.QueueStat
	for _, q := range stats {
		if q.OldestAvailableAge > max {
			out = append(out, q)
		}
	}
	return out
}

// unusedQueue returns a warning when neither a job type of the spec in dir (when dir
// has one) nor a live worker uses queue, naming the queues that are used and the
// closest of them; "" when one does.
func unusedQueue(ctx context.Context, db runtime.DBTX, dir, queue string) (string, error) {
	ws, err := runtime.ListWorkers(ctx, db, 0)
	if err != nil {
		return "", err
	}
	var used []string
	for _, w := range ws {
		used = append(used, w.Queues...)
	}
	who := "no live worker"
	if hasConfig(dir) {
		// A spec with problems still holds the job types it could read; the pause is
		// not about the spec, so its problems are left to jobc generate.
		if p, _ := spec.Load(dir); p != nil {
			for _, j := range p.Jobs {
				used = append(used, j.Queue)
			}
			who = "no job type of " + filepath.Join(dir, p.File) + " and no live worker"
		}
	}
	slices.Sort(used)
	used = slices.Compact(used)
	if slices.Contains(used, queue) {
		return "", nil
	}
	msg := fmt.Sprintf("jobc: warning: %s uses queue %q", who, queue)
	if s := spec.Suggest(queue, used); s != "" {
		msg += fmt.Sprintf(": did you mean %q?", s)
	}
	if len(used) == 0 {
		msg += " (none uses any queue)"
	} else {
		msg += " (queues in use: " + cli.Esc(strings.Join(used, ", ")) + ")"
	}
	return msg + fmt.Sprintf("; it is paused all the same: `jobc queues resume %s` undoes it", cli.Esc(queue)), nil
}
