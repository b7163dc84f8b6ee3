package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/runtime"
)

func newJobs() *cobra.Command {
	var url string
	cmd := &cobra.Command{Use: "jobs", Short: "List, show and cancel jobs"}
	cmd.PersistentFlags().StringVar(&url, "database-url", "", "PostgreSQL connection string (default $DATABASE_URL)")

	var f runtime.JobFilter
	var state string
	list := &cobra.Command{
		Use:   "list",
		Short: "List the newest jobs, unfinished and finished",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.State = runtime.State(state)
			return withConn(cmd, url, func(ctx context.Context, db runtime.DBTX) error {
				jobs, err := runtime.ListJobs(ctx, db, f)
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tKIND\tQUEUE\tSTATE\tATTEMPT\tVERSION\tCREATED\tLAST ERROR")
				for _, j := range jobs {
					last := ""
					if n := len(j.Errors); n > 0 {
						last = truncate(j.Errors[n-1].Class+": "+j.Errors[n-1].Error, 60)
					}
					fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d/%d\tv%d\t%s\t%s\n", j.ID, j.Kind, j.Queue, j.State, j.Attempt, j.MaxAttempts,
						j.PayloadVersion, j.CreatedAt.UTC().Format(time.DateTime), last)
				}
				return tw.Flush()
			})
		},
	}
	list.Flags().StringVar(&f.Kind, "kind", "", "only this kind")
	list.Flags().StringVar(&f.Queue, "queue", "", "only this queue")
	list.Flags().StringVar(&state, "state", "", "only this state (available, scheduled, running, completed, failed, cancelled)")
	list.Flags().IntVar(&f.Limit, "limit", 50, "at most this many")

	show := &cobra.Command{
		Use:   "show ID",
		Short: "Print one job as JSON, with the error of every attempt",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := jobID(args[0])
			if err != nil {
				return err
			}
			return withConn(cmd, url, func(ctx context.Context, db runtime.DBTX) error {
				j, err := runtime.GetJob(ctx, db, id)
				if err != nil {
					return err
				}
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(j)
			})
		},
	}

	cancel := &cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a job: at once if it has not started, through its handler's context if it runs",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := jobID(args[0])
			if err != nil {
				return err
			}
			return withConn(cmd, url, func(ctx context.Context, db runtime.DBTX) error {
				st, err := runtime.Cancel(ctx, db, id)
				if err != nil {
					return err
				}
				if st == runtime.StateRunning {
					fmt.Fprintf(cmd.OutOrStdout(), "job %d is running: its handler is being cancelled\n", id)
				} else {
					fmt.Fprintf(cmd.OutOrStdout(), "job %d cancelled\n", id)
				}
				return nil
			})
		},
	}
	cmd.AddCommand(list, show, cancel)
	return cmd
}

func jobID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("jobc: %q is not a job id", s)
	}
	return id, nil
}

func withConn(cmd *cobra.Command, url string, f func(ctx context.Context, db runtime.DBTX) error) error {
	ctx := cmd.Context()
	conn, err := connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return f(ctx, conn)
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
