package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
	"github.com/jobc-dev/jobc/runtime"
)

func newJobs() *cobra.Command {
	cmd := &cobra.Command{Use: "jobs", Short: "List, show, cancel, retry and delete jobs"}
	dbf := cli.AddDBFlags(cmd.PersistentFlags(), cli.DefaultStatementTimeout)
	cmd.AddCommand(newJobsList(dbf), newJobsShow(dbf), newJobsCancel(dbf), newJobsRetry(dbf), newJobsDelete(dbf))
	return cmd
}

// maxListLimit is ListJobs' own ceiling.
const maxListLimit = 10000

func newJobsList(dbf *cli.DBFlags) *cobra.Command {
	var (
		sel    selectionFlags
		after  int64
		limit  int
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the newest jobs, unfinished and finished, a page at a time",
		Long: `jobc jobs list prints the newest jobs that match the filters, newest first. When more match than
--limit shows, it says so on stderr and names the --after to pass for the next page.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 || limit > maxListLimit {
				return cli.Usagef(cmd, "--limit must be between 1 and %d", maxListLimit)
			}
			if after < 0 {
				return cli.Usagef(cmd, "--after must be a job id")
			}
			s, err := sel.selection(cmd, time.Now())
			if err != nil {
				return err
			}
			s.Limit = limit
			return cli.WithConn(cmd, dbf, func(ctx context.Context, db runtime.DBTX) error {
				f := runtime.JobFilter{JobSelection: s, After: after}
				var next int64
				if asJSON {
					// The JSON carries each job whole, payload and metadata included.
					page, err := runtime.ListJobs(ctx, db, f)
					if err != nil {
						return err
					}
					out := jobPageJSON{Jobs: make([]jobJSON, len(page.Jobs)), More: page.More}
					for i, j := range page.Jobs {
						out.Jobs[i] = toJobJSON(j)
					}
					if page.More && len(page.Jobs) > 0 {
						next = page.Jobs[len(page.Jobs)-1].ID
						out.NextAfter = &next
					}
					return cli.WriteJSON(cmd.OutOrStdout(), out)
				}
				// The table shows no payload, so none is read (ListJobSummaries).
				page, err := runtime.ListJobSummaries(ctx, db, f)
				if err != nil {
					return err
				}
				if page.More && len(page.Jobs) > 0 {
					next = page.Jobs[len(page.Jobs)-1].ID
				}
				if len(page.Jobs) == 0 {
					// A sentence, not a table of headings only.
					if sel.any() || after > 0 {
						fmt.Fprintln(cmd.OutOrStdout(), "no jobs match")
					} else {
						fmt.Fprintln(cmd.OutOrStdout(), "no jobs")
					}
					return nil
				}
				t := cli.NewTable(cmd.OutOrStdout(), "ID", "KIND", "QUEUE", "STATE", "PRIORITY", "ATTEMPT", "VERSION", "CREATED", "LAST ERROR")
				for _, j := range page.Jobs {
					last := "-"
					if j.LastError != nil {
						last = cli.Truncate(lastError(*j.LastError), 60)
					}
					t.Row(j.ID, j.Kind, j.Queue, string(j.State), j.Priority, fmt.Sprintf("%d/%d", j.Attempt, j.MaxAttempts),
						fmt.Sprintf("v%d", j.PayloadVersion), j.CreatedAt.UTC().Format(time.DateTime), last)
				}
				if err := t.Flush(); err != nil {
					return err
				}
				if next > 0 {
					fmt.Fprintf(cmd.ErrOrStderr(), "more jobs match than --limit %d shows: pass --after %d for the next page\n", limit, next)
				}
				return nil
			})
		},
	}
	sel.register(cmd.Flags())
	cmd.Flags().Int64Var(&after, "after", 0, "only jobs with a smaller id than this one (the next page)")
	cmd.Flags().IntVar(&limit, "limit", 50, fmt.Sprintf("at most this many (up to %d)", maxListLimit))
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (fields in docs/cli.md)")
	return cmd
}

func lastError(e runtime.AttemptError) string {
	if e.Class == "" {
		return e.Error
	}
	return e.Class + ": " + e.Error
}

func newJobsShow(dbf *cli.DBFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one job, with its payload and the error of every attempt",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := jobID(cmd, args[0])
			if err != nil {
				return err
			}
			return cli.WithConn(cmd, dbf, func(ctx context.Context, db runtime.DBTX) error {
				j, err := runtime.GetJob(ctx, db, id)
				if err != nil {
					return err
				}
				waiting, err := whyWaiting(ctx, db, j)
				if err != nil {
					return err
				}
				if asJSON {
					out := toJobJSON(j)
					if waiting != nil {
						out.Waiting = toWaitingJSON(*waiting)
					}
					return cli.WriteJSON(cmd.OutOrStdout(), out)
				}
				return printJob(cmd, j, waiting)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (fields in docs/cli.md)")
	return cmd
}

// whyWaiting says why j, when available or scheduled, is not running; nil for a job
// in another state, or one that started or ended since it was read.
func whyWaiting(ctx context.Context, db runtime.DBTX, j *runtime.JobInfo) (*runtime.Waiting, error) {
	if j.State != runtime.StateAvailable && j.State != runtime.StateScheduled {
		return nil, nil
	}
	w, err := runtime.WhyWaiting(ctx, db, j.ID)
	if errors.Is(err, runtime.ErrJobNotFound) {
		return nil, nil // deleted since GetJob read it
	}
	if err != nil {
		return nil, err
	}
	if w.Cause == runtime.WaitRunning || w.Cause == runtime.WaitFinished {
		return nil, nil
	}
	return &w, nil
}

// printJob prints one job as "key value" lines, keys in lower case, with why it waits
// when it does, then its payload, metadata and result (a completed job of a job type
// with one) as indented JSON and its errors as a table.
func printJob(cmd *cobra.Command, j *runtime.JobInfo, waiting *runtime.Waiting) error {
	out := cmd.OutOrStdout()
	t := cli.NewTable(out)
	t.Row("id", j.ID)
	t.Row("kind", j.Kind)
	t.Row("queue", j.Queue)
	t.Row("state", string(j.State))
	t.Row("priority", j.Priority)
	t.Row("payload version", j.PayloadVersion)
	if j.ResultVersion > 0 {
		t.Row("result version", j.ResultVersion)
	}
	t.Row("attempt", fmt.Sprintf("%d of %d", j.Attempt, j.MaxAttempts))
	t.Row("unique key", orDash(j.UniqueKey))
	t.Row("created at", j.CreatedAt.UTC().Format(time.RFC3339))
	t.Row("available at", j.AvailableAt.UTC().Format(time.RFC3339))
	t.Row("attempted at", optTime(j.AttemptedAt))
	t.Row("finished at", optTime(j.FinishedAt))
	if waiting != nil {
		t.Row("waiting", waiting.Reason)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	for _, part := range []struct {
		name string
		raw  json.RawMessage
	}{{"payload", j.Payload}, {"metadata", j.Metadata}, {"result", j.Result}} {
		if len(part.raw) == 0 {
			continue
		}
		fmt.Fprintf(out, "%s:\n", part.name)
		if err := cli.WriteJSON(out, part.raw); err != nil {
			return err
		}
	}
	if len(j.Errors) > 0 {
		fmt.Fprintln(out, "errors:")
		t = cli.NewTable(out, "  ATTEMPT", "AT", "CLASS", "WORKER", "ERROR")
		for _, e := range j.Errors {
			t.Row(fmt.Sprintf("  %d", e.Attempt), e.At.UTC().Format(time.RFC3339), orDash(e.Class), orDash(e.Worker), orDash(e.Error))
		}
		return t.Flush()
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func optTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func newJobsCancel(dbf *cli.DBFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a job: at once if it has not started, through its handler's context if it runs",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := jobID(cmd, args[0])
			if err != nil {
				return err
			}
			return cli.WithConn(cmd, dbf, func(ctx context.Context, db runtime.DBTX) error {
				st, err := runtime.CancelJob(ctx, db, id)
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
}

// jobID parses a job id argument; anything else is a usage error of cmd.
func jobID(cmd *cobra.Command, s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, cli.Usagef(cmd, "%q is not a job id", s)
	}
	return id, nil
}
