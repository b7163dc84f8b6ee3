package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
	"github.com/jobc-dev/jobc/runtime"
)

// workerJSON is one line of `jobc workers --json`; the field names are documented in
// docs/cli.md and stay stable.
type workerJSON struct {
	ID           string                  `json:"id"`
	Host         string                  `json:"host"`
	PID          int                     `json:"pid"`
	Queues       []string                `json:"queues"`
	Kinds        map[string]versionRange `json:"kinds"`
	StartedAt    time.Time               `json:"started_at"`
	HeartbeatAt  time.Time               `json:"heartbeat_at"`
	HeartbeatAge float64                 `json:"heartbeat_age_seconds"`
}

// versionRange is the payload versions of one kind a worker decodes.
type versionRange struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

func newWorkers() *cobra.Command {
	var (
		dbf    *cli.DBFlags
		within time.Duration
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "workers",
		Short: "List the live workers: host, pid, queues, kinds and versions, last heartbeat",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cli.WithConn(cmd, dbf, func(ctx context.Context, db runtime.DBTX) error {
				ws, err := runtime.ListWorkers(ctx, db, within)
				if err != nil {
					return err
				}
				now := time.Now()
				if asJSON {
					return cli.WriteJSON(cmd.OutOrStdout(), toWorkersJSON(ws, now))
				}
				if len(ws) == 0 {
					fmt.Fprintf(cmd.OutOrStdout(), "no live workers: none sent a heartbeat within %s\n", within)
					return nil
				}
				t := cli.NewTable(cmd.OutOrStdout(), "ID", "HOST", "PID", "QUEUES", "KINDS", "STARTED", "HEARTBEAT")
				for _, w := range ws {
					t.Row(w.ID, w.Host, w.PID, strings.Join(w.Queues, ","), kindRanges(w.Kinds),
						w.StartedAt.UTC().Format(time.DateTime), cli.Age(now.Sub(w.HeartbeatAt))+" ago")
				}
				return t.Flush()
			})
		},
	}
	dbf = cli.AddDBFlags(cmd.Flags(), cli.DefaultStatementTimeout)
	cmd.Flags().DurationVar(&within, "live-within", time.Minute, "a worker is live if its last heartbeat is this recent")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (fields in docs/cli.md)")
	return cmd
}

func toWorkersJSON(ws []runtime.WorkerInfo, now time.Time) []workerJSON {
	out := make([]workerJSON, len(ws))
	for i, w := range ws {
		out[i] = workerJSON{ID: w.ID, Host: w.Host, PID: w.PID, Queues: cli.NonNil(w.Queues), Kinds: map[string]versionRange{},
			StartedAt: w.StartedAt, HeartbeatAt: w.HeartbeatAt, HeartbeatAge: cli.Seconds(now.Sub(w.HeartbeatAt))}
		for k, r := range w.Kinds {
			out[i].Kinds[k] = versionRange{Min: r[0], Max: r[1]}
		}
	}
	return out
}
