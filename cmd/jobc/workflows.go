package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
	"github.com/jobc-dev/jobc/runtime"
)

func newWorkflows() *cobra.Command {
	cmd := &cobra.Command{Use: "workflows", Short: "List, show, retry and cancel workflows, with each step's state and result"}
	dbf := cli.AddDBFlags(cmd.PersistentFlags(), cli.DefaultStatementTimeout)
	cmd.AddCommand(newWorkflowsList(dbf), newWorkflowsShow(dbf), newWorkflowsRetry(dbf), newWorkflowsCancel(dbf))
	return cmd
}

var workflowStates = []runtime.WorkflowState{runtime.WorkflowRunning, runtime.WorkflowCompleted, runtime.WorkflowFailed, runtime.WorkflowCancelled}

// workflowJSON is a workflow in `jobc workflows show --json` and (without input and
// steps) `jobc workflows list --json`; the field names are documented in docs/cli.md.
type workflowJSON struct {
	ID           int64           `json:"id"`
	Name         string          `json:"name"`
	State        string          `json:"state"`
	Steps        int             `json:"steps"`
	StepsLeft    int             `json:"steps_left"`
	FailedSteps  int             `json:"failed_steps"`
	CreatedAt    time.Time       `json:"created_at"`
	FinishedAt   *time.Time      `json:"finished_at"`
	InputVersion int             `json:"input_version,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	StepStates   []stepJSON      `json:"step_states,omitempty"`
	Signals      []signalJSON    `json:"signals,omitempty"`
}

type signalJSON struct {
	Name    string          `json:"name"`
	Version int             `json:"version"`
	Payload json.RawMessage `json:"payload"`
	SentAt  time.Time       `json:"sent_at"`
}

type stepJSON struct {
	Name          string          `json:"name"`
	Kind          string          `json:"kind"`
	State         string          `json:"state"`
	After         []string        `json:"after"`
	WaitingOn     string          `json:"waiting_on,omitempty"`
	JobID         *int64          `json:"job_id"`
	Items         *itemsJSON      `json:"items,omitempty"`
	Signal        string          `json:"signal,omitempty"`
	WakeAt        *time.Time      `json:"wake_at,omitempty"`
	Error         string          `json:"error,omitempty"`
	ResultVersion int             `json:"result_version,omitempty"`
	Result        json.RawMessage `json:"result,omitempty"`
	StartedAt     *time.Time      `json:"started_at"`
	FinishedAt    *time.Time      `json:"finished_at"`
}

func newWorkflowsList(dbf *cli.DBFlags) *cobra.Command {
	var (
		name, state string
		after       int64
		limit       int
		asJSON      bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the newest workflows, a page at a time",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 || limit > maxListLimit {
				return cli.Usagef(cmd, "--limit must be between 1 and %d", maxListLimit)
			}
			if after < 0 {
				return cli.Usagef(cmd, "--after must be a workflow id")
			}
			if state != "" && !slices.Contains(workflowStates, runtime.WorkflowState(state)) {
				return cli.Usagef(cmd, "--state %q: want one of running, completed, failed, cancelled", state)
			}
			return cli.WithConn(cmd, dbf, func(ctx context.Context, db runtime.DBTX) error {
				page, err := runtime.ListWorkflows(ctx, db, runtime.WorkflowFilter{Name: name, State: runtime.WorkflowState(state),
					After: runtime.WorkflowID(after), Limit: limit})
				if err != nil {
					return err
				}
				var next int64
				if page.More && len(page.Workflows) > 0 {
					next = int64(page.Workflows[len(page.Workflows)-1].ID)
				}
				if asJSON {
					out := struct {
						Workflows []workflowJSON `json:"workflows"`
						More      bool           `json:"more"`
						NextAfter *int64         `json:"next_after"`
					}{Workflows: []workflowJSON{}, More: page.More}
					for _, w := range page.Workflows {
						out.Workflows = append(out.Workflows, workflowJSON{ID: int64(w.ID), Name: w.Name, State: string(w.State), Steps: w.Steps,
							StepsLeft: w.StepsLeft, FailedSteps: w.Failed, CreatedAt: w.CreatedAt, FinishedAt: w.FinishedAt})
					}
					if next > 0 {
						out.NextAfter = &next
					}
					return cli.WriteJSON(cmd.OutOrStdout(), out)
				}
				if len(page.Workflows) == 0 {
					fmt.Fprintln(cmd.OutOrStdout(), "no workflows")
					return nil
				}
				t := cli.NewTable(cmd.OutOrStdout(), "ID", "NAME", "STATE", "STEPS LEFT", "FAILED", "CREATED", "FINISHED")
				for _, w := range page.Workflows {
					t.Row(w.ID, w.Name, string(w.State), fmt.Sprintf("%d/%d", w.StepsLeft, w.Steps), w.Failed,
						w.CreatedAt.UTC().Format(time.DateTime), optTime(w.FinishedAt))
				}
				if err := t.Flush(); err != nil {
					return err
				}
				if next > 0 {
					fmt.Fprintf(cmd.ErrOrStderr(), "more workflows match than --limit %d shows: pass --after %d for the next page\n", limit, next)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "only workflows of this name")
	cmd.Flags().StringVar(&state, "state", "", "only workflows in this state: running, completed, failed or cancelled")
	cmd.Flags().Int64Var(&after, "after", 0, "only workflows with a smaller id than this one (the next page)")
	cmd.Flags().IntVar(&limit, "limit", 50, fmt.Sprintf("at most this many (up to %d)", maxListLimit))
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (fields in docs/cli.md)")
	return cmd
}

// itemsJSON counts a for_each step's items.
type itemsJSON struct {
	Total     int `json:"total"`
	Left      int `json:"left"`
	Failed    int `json:"failed"`
	Cancelled int `json:"cancelled"`
}

func newWorkflowsRetry(dbf *cli.DBFlags) *cobra.Command {
	return workflowAction(dbf, "retry ID",
		"Resume a failed or cancelled workflow from the steps that did not complete, keeping completed steps' results",
		runtime.RetryWorkflow, "workflow %d runs again from the steps that did not complete\n")
}

func newWorkflowsCancel(dbf *cli.DBFlags) *cobra.Command {
	return workflowAction(dbf, "cancel ID",
		"Cancel a running workflow: its waiting steps and jobs are cancelled, its running jobs asked to stop",
		runtime.CancelWorkflow, "workflow %d cancelled\n")
}

// workflowAction is a command that does act to the workflow its one argument names,
// then prints done with the id.
func workflowAction(dbf *cli.DBFlags, use, short string, act func(context.Context, runtime.DBTX, runtime.WorkflowID) error, done string) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := workflowID(cmd, args[0])
			if err != nil {
				return err
			}
			return cli.WithConn(cmd, dbf, func(ctx context.Context, db runtime.DBTX) error {
				if err := act(ctx, db, runtime.WorkflowID(id)); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), done, id)
				return nil
			})
		},
	}
}

func workflowID(cmd *cobra.Command, s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, cli.Usagef(cmd, "%q is not a workflow id", s)
	}
	return id, nil
}

func newWorkflowsShow(dbf *cli.DBFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one workflow: its input, and each step's state, job and result",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := workflowID(cmd, args[0])
			if err != nil {
				return err
			}
			return cli.WithConn(cmd, dbf, func(ctx context.Context, db runtime.DBTX) error {
				w, err := runtime.GetWorkflow(ctx, db, runtime.WorkflowID(id))
				if err != nil {
					return err
				}
				if asJSON {
					return cli.WriteJSON(cmd.OutOrStdout(), toWorkflowJSON(w))
				}
				return printWorkflow(cmd, w)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (fields in docs/cli.md)")
	return cmd
}

func toWorkflowJSON(w *runtime.WorkflowInfo) workflowJSON {
	out := workflowJSON{ID: int64(w.ID), Name: w.Name, State: string(w.State), Steps: len(w.Steps), CreatedAt: w.CreatedAt,
		FinishedAt: w.FinishedAt, InputVersion: w.InputVersion, Input: rawOrNull(w.Input), StepStates: []stepJSON{}}
	for _, s := range w.Steps {
		sj := stepJSON{Name: s.Name, Kind: string(s.Kind), State: string(s.State), After: s.After, WaitingOn: s.WaitingOn,
			Signal: s.Signal, WakeAt: s.WakeAt, Error: s.Error, ResultVersion: s.ResultVersion, Result: s.Result,
			StartedAt: s.StartedAt, FinishedAt: s.FinishedAt}
		if s.Kind == runtime.StepForEach && s.StartedAt != nil {
			sj.Items = &itemsJSON{Total: s.Items, Left: s.ItemsLeft, Failed: s.ItemsFailed, Cancelled: s.ItemsCancelled}
		}
		if sj.After == nil {
			sj.After = []string{}
		}
		if s.JobID != 0 {
			id := s.JobID
			sj.JobID = &id
		}
		switch s.State {
		case runtime.StepCompleted:
		case runtime.StepFailed, runtime.StepCancelled:
			out.FailedSteps++
		default:
			out.StepsLeft++
		}
		out.StepStates = append(out.StepStates, sj)
	}
	for _, g := range w.Signals {
		out.Signals = append(out.Signals, signalJSON{Name: g.Name, Version: g.Version, Payload: g.Payload, SentAt: g.SentAt})
	}
	return out
}

// printWorkflow prints a workflow as "key value" lines, its input as indented JSON,
// and its steps as a table, each with what it waits on while it waits, and the
// results of those that have one after it.
func printWorkflow(cmd *cobra.Command, w *runtime.WorkflowInfo) error {
	out := cmd.OutOrStdout()
	t := cli.NewTable(out)
	t.Row("id", int64(w.ID))
	t.Row("name", w.Name)
	t.Row("state", string(w.State))
	t.Row("created at", w.CreatedAt.UTC().Format(time.RFC3339))
	t.Row("finished at", optTime(w.FinishedAt))
	if err := t.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "input (version %d):\n", w.InputVersion)
	if err := cli.WriteJSON(out, w.Input); err != nil {
		return err
	}
	fmt.Fprintln(out, "steps:")
	t = cli.NewTable(out, "  STEP", "KIND", "STATE", "AFTER", "JOB", "WAITING ON", "ERROR")
	for _, s := range w.Steps {
		job := "-"
		switch {
		case s.JobID != 0:
			job = strconv.FormatInt(s.JobID, 10)
		case s.Kind == runtime.StepForEach && s.StartedAt != nil:
			job = fmt.Sprintf("%d items, %d failed, %d cancelled", s.Items, s.ItemsFailed, s.ItemsCancelled)
		}
		t.Row("  "+s.Name, string(s.Kind), string(s.State), orDash(strings.Join(s.After, ",")), job, orDash(s.WaitingOn), orDash(s.Error))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	for _, s := range w.Steps {
		if len(s.Result) == 0 {
			continue
		}
		fmt.Fprintf(out, "result of %s (version %d):\n", s.Name, s.ResultVersion)
		if err := cli.WriteJSON(out, s.Result); err != nil {
			return err
		}
	}
	for _, g := range w.Signals {
		fmt.Fprintf(out, "signal %s (version %d) sent at %s:\n", g.Name, g.Version, g.SentAt.UTC().Format(time.RFC3339))
		if err := cli.WriteJSON(out, g.Payload); err != nil {
			return err
		}
	}
	return nil
}
