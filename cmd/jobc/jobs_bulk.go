package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
	"github.com/jobc-dev/jobc/runtime"
)

// bulkVerb is what differs between jobs retry and jobs delete.
type bulkVerb struct {
	name, past string
	// eligible are the states the verb acts on; a --state outside them is a usage error.
	eligible []runtime.State
	// skipped says why a matched job was left alone.
	skipped string
	one     func(ctx context.Context, db runtime.DBTX, id int64) (string, error)
	many    func(ctx context.Context, db runtime.DBTX, sel runtime.JobSelection) (runtime.BulkResult, error)
	count   func(ctx context.Context, db runtime.DBTX, sel runtime.JobSelection) (int, error)
}

func newJobsRetry(dbf *cli.DBFlags) *cobra.Command {
	return newBulk(dbf, bulkVerb{
		name: "retry", past: "retried",
		eligible: []runtime.State{runtime.StateFailed, runtime.StateCancelled, runtime.StateScheduled},
		skipped:  "their unique key is held by another job, or they are not failed, cancelled or scheduled",
		one: func(ctx context.Context, db runtime.DBTX, id int64) (string, error) {
			j, err := runtime.RetryJob(ctx, db, id)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("job %d retried: available now, attempt %d of %d next", j.ID, j.Attempt+1, j.MaxAttempts), nil
		},
		many:  runtime.RetryJobs,
		count: runtime.CountRetryableJobs,
	}, `jobc jobs retry makes failed, cancelled or scheduled jobs available now. Each keeps the errors of its
earlier attempts; one whose attempts are used up gets one more. A job whose unique key
another job holds now is not retried: the message names that job.

With ids, each job is retried on its own (exit 1 if any could not be). With filters
instead, every matching failed, cancelled or scheduled job is retried at once, and the
command prints how many changed and how many it left alone; at least one filter is
required, so that no typo retries every job there is.`)
}

func newJobsDelete(dbf *cli.DBFlags) *cobra.Command {
	return newBulk(dbf, bulkVerb{
		name: "delete", past: "deleted",
		eligible: []runtime.State{runtime.StateAvailable, runtime.StateScheduled, runtime.StateCompleted, runtime.StateFailed, runtime.StateCancelled},
		skipped:  "they are running: cancel them first",
		one: func(ctx context.Context, db runtime.DBTX, id int64) (string, error) {
			if err := runtime.DeleteJob(ctx, db, id); err != nil {
				return "", err
			}
			return fmt.Sprintf("job %d deleted", id), nil
		},
		many:  runtime.DeleteJobs,
		count: runtime.CountDeletableJobs,
	}, `jobc jobs delete removes finished, available or scheduled jobs, with their unique keys. A running
job is refused: cancel it first.

With ids, each job is deleted on its own (exit 1 if any could not be). With filters
instead, every matching job that is not running is deleted at once; at least one filter
is required.`)
}

func newBulk(dbf *cli.DBFlags, v bulkVerb, long string) *cobra.Command {
	var (
		sel    selectionFlags
		limit  int
		dryRun bool
	)
	cmd := &cobra.Command{
		Use:   v.name + " (ID... | --kind K --queue Q --state S --since D --error-class C) [--dry-run]",
		Short: strings.ToUpper(v.name[:1]) + v.name[1:] + " jobs by id, or every job a filter matches",
		Long:  long,
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && !sel.any() {
				return cli.Usagef(cmd, "give job ids or at least one filter (--kind, --queue, --state, --since, --error-class)")
			}
			if len(args) > 0 && sel.any() {
				return cli.Usagef(cmd, "give job ids or filters, not both")
			}
			if limit < 0 {
				return cli.Usagef(cmd, "--limit must not be negative")
			}
			ids := make([]int64, len(args))
			for i, a := range args {
				id, err := jobID(cmd, a)
				if err != nil {
					return err
				}
				ids[i] = id
			}
			s, err := sel.selection(cmd, time.Now())
			if err != nil {
				return err
			}
			for _, st := range s.States {
				if !eligible(v.eligible, st) {
					return cli.Usagef(cmd, "%s takes --state %s, not %s", v.name, stateList(v.eligible), st)
				}
			}
			s.Limit = limit
			return cli.WithConn(cmd, dbf, func(ctx context.Context, db runtime.DBTX) error {
				out := cmd.OutOrStdout()
				if dryRun {
					if len(ids) > 0 {
						s = runtime.JobSelection{IDs: ids}
					}
					n, err := v.count(ctx, db, s)
					if err != nil {
						return bulkError(cmd, err)
					}
					fmt.Fprintf(out, "would %s %d job(s) (dry run: nothing changed)\n", v.name, n)
					return nil
				}
				if len(ids) > 0 {
					return eachID(cmd, db, v, ids)
				}
				res, err := v.many(ctx, db, s)
				if err != nil {
					return bulkError(cmd, err)
				}
				fmt.Fprintf(out, "%s %d job(s)", v.past, res.Changed)
				if res.Skipped > 0 {
					fmt.Fprintf(out, "; skipped %d: %s", res.Skipped, v.skipped)
				}
				fmt.Fprintln(out)
				if len(res.IDs) > 0 {
					fmt.Fprintf(out, "ids: %s\n", idList(res.IDs, res.Changed))
				}
				// Jobs the statement failed on are left as they were; the others went
				// through. Each is named, and the command fails, so that a script notices.
				for _, r := range res.Refused {
					fmt.Fprintf(cmd.ErrOrStderr(), "jobc: job %d was left alone: %s\n", r.ID, cli.Esc(r.Reason))
				}
				if len(res.Refused) > 0 {
					return &cli.ExitError{Code: cli.ExitFailure, Err: fmt.Errorf("jobc: %d job(s) not %s", len(res.Refused), v.past)}
				}
				return nil
			})
		},
	}
	sel.register(cmd.Flags())
	cmd.Flags().IntVar(&limit, "limit", 0, "act on at most this many of the matching jobs (0: all)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "only print how many jobs would change")
	return cmd
}

// eachID applies the verb to every id on its own, so one bad id does not hold back the
// others, and fails at the end when any did not go through.
func eachID(cmd *cobra.Command, db runtime.DBTX, v bulkVerb, ids []int64) error {
	failed := 0
	for _, id := range ids {
		msg, err := v.one(cmd.Context(), db, id)
		if cli.MissingObjectErr(err) {
			return err // the schema, not the job: every other id would fail the same way
		}
		if err != nil {
			failed++
			fmt.Fprintln(cmd.ErrOrStderr(), cli.Esc(cli.Message(err)))
			continue
		}
		fmt.Fprintln(cmd.OutOrStdout(), msg)
	}
	if failed > 0 {
		return &cli.ExitError{Code: cli.ExitFailure, Err: fmt.Errorf("jobc: %d of %d job(s) not %s", failed, len(ids), v.past)}
	}
	return nil
}

// bulkError makes the runtime's refusal of an unfiltered bulk call a usage error (the
// command checks first, so it only happens if the two disagree).
func bulkError(cmd *cobra.Command, err error) error {
	if errors.Is(err, runtime.ErrNoFilter) {
		return cli.AsUsage(cmd, err)
	}
	return err
}

func eligible(states []runtime.State, st runtime.State) bool {
	for _, s := range states {
		if s == st {
			return true
		}
	}
	return false
}

func stateList(states []runtime.State) string {
	parts := make([]string, len(states))
	for i, s := range states {
		parts[i] = string(s)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// idList prints the changed ids, saying how many more there are beyond those listed.
func idList(ids []int64, changed int) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	s := strings.Join(parts, " ")
	if changed > len(ids) {
		s += fmt.Sprintf(" (and %d more)", changed-len(ids))
	}
	return s
}
