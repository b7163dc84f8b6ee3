package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
	"github.com/jobc-dev/jobc/runtime"
)

// limitJSON is one limit in `jobc limits --json`; the field names are documented in
// docs/cli.md and stay stable.
type limitJSON struct {
	Scope        string          `json:"scope"`
	Name         string          `json:"name"`
	By           []string        `json:"by"`
	Fair         bool            `json:"fair"`
	Sequence     bool            `json:"sequence"`
	Spec         limitValuesJSON `json:"spec"`
	Override     limitValuesJSON `json:"override"`
	Effective    limitValuesJSON `json:"effective"`
	RegisteredAt time.Time       `json:"registered_at"`
	ChangedAt    *time.Time      `json:"changed_at"`
	ChangedBy    string          `json:"changed_by"`
	Waiting      int64           `json:"waiting"`
	Running      int64           `json:"running"`
	Keys         int64           `json:"keys"`
}

// limitValuesJSON is a limit's numbers; null where it sets none.
type limitValuesJSON struct {
	Concurrency *int      `json:"concurrency"`
	Rate        *rateJSON `json:"rate"`
}

type rateJSON struct {
	Limit      int     `json:"limit"`
	PerSeconds float64 `json:"per_seconds"`
}

func toLimitValuesJSON(v runtime.LimitValues) limitValuesJSON {
	var out limitValuesJSON
	if v.Concurrency > 0 {
		n := v.Concurrency
		out.Concurrency = &n
	}
	if !v.Rate.IsZero() {
		out.Rate = &rateJSON{Limit: v.Rate.Limit, PerSeconds: cli.Seconds(v.Rate.Per)}
	}
	return out
}

func toLimitsJSON(ls []runtime.Limit) []limitJSON {
	out := make([]limitJSON, len(ls))
	for i, l := range ls {
		out[i] = limitJSON{Scope: string(l.Scope), Name: l.Name, By: cli.NonNil(l.By), Fair: l.Fair, Sequence: l.Sequence,
			Spec: toLimitValuesJSON(l.Spec), Override: toLimitValuesJSON(l.Override), Effective: toLimitValuesJSON(l.Effective),
			RegisteredAt: l.RegisteredAt, ChangedAt: l.ChangedAt, ChangedBy: l.ChangedBy,
			Waiting: l.Waiting, Running: l.Running, Keys: l.Keys}
	}
	return out
}

// limitValues prints a limit's numbers for a table cell: "2 running, 100/1m"; "-"
// for none.
func limitValues(v runtime.LimitValues) string {
	var parts []string
	if v.Concurrency > 0 {
		parts = append(parts, fmt.Sprintf("%d running", v.Concurrency))
	}
	if !v.Rate.IsZero() {
		parts = append(parts, v.Rate.String())
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// limitMode is what a limit does beyond its numbers: fair, sequence, or "-".
func limitMode(l runtime.Limit) string {
	switch {
	case l.Sequence:
		return "sequence"
	case l.Fair:
		return "fair"
	}
	return "-"
}

func newLimits() *cobra.Command {
	var (
		dbf    *cli.DBFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "limits",
		Short: "List the flow control of kinds and queues: spec, override, effective, and the jobs under it; set and reset it",
		Long: `jobc limits lists the flow control (concurrency and rate limits, fairness, sequences) that job
types and queues declare in jobc.yaml, as workers recorded it in the database: the spec's
numbers, an operator's override ("jobc limits set"), the numbers in force, and the jobs
that run and wait under it and their keys. A kind or queue appears once a worker with
its job type has started.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cli.WithConn(cmd, dbf, func(ctx context.Context, db runtime.DBTX) error {
				ls, err := runtime.ListLimits(ctx, db)
				if err != nil {
					return err
				}
				if asJSON {
					return cli.WriteJSON(cmd.OutOrStdout(), toLimitsJSON(ls))
				}
				if len(ls) == 0 {
					_, err := fmt.Fprintln(cmd.OutOrStdout(), "no limits: no job type or queue with flow control has had a worker start yet")
					return err
				}
				t := cli.NewTable(cmd.OutOrStdout(), "SCOPE", "NAME", "BY", "MODE", "SPEC", "OVERRIDE", "EFFECTIVE", "RUNNING", "KEYS", "WAITING")
				for _, l := range ls {
					t.Row(string(l.Scope), l.Name, orDash(strings.Join(l.By, ",")), limitMode(l),
						limitValues(l.Spec), limitValues(l.Override), limitValues(l.Effective), l.Running, l.Keys, l.Waiting)
				}
				return t.Flush()
			})
		},
	}
	dbf = cli.AddDBFlags(cmd.PersistentFlags(), cli.DefaultStatementTimeout)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (fields in docs/cli.md)")
	cmd.AddCommand(newLimitsSet(dbf), newLimitsReset(dbf))
	return cmd
}

func newLimitsSet(dbf *cli.DBFlags) *cobra.Command {
	var (
		concurrency int
		rate        string
	)
	cmd := &cobra.Command{
		Use:   "set kind|queue NAME [--concurrency N] [--rate LIMIT/PERIOD]",
		Short: "Override a kind's or queue's limits on every worker, within one poll interval (persisted until reset)",
		Long: `jobc limits set replaces the spec's concurrency or rate limit of a kind or queue with the
given one: every worker applies it from its next claim, within one poll interval. The
override is stored in the database, so it holds across restarts and deploys until
"jobc limits reset". Only what is given changes: --rate alone keeps the concurrency in
force. A kind or queue whose spec declares no flow control has no limits to change.

  jobc limits set kind send_email --concurrency 5
  jobc limits set queue email --rate 100/1m`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			scope, err := limitScope(cmd, args)
			if err != nil {
				return err
			}
			c := runtime.LimitChange{Scope: scope, Name: args[1], By: actor()}
			if cmd.Flags().Changed("concurrency") {
				if concurrency < 1 {
					return cli.Usagef(cmd, "--concurrency %d: want at least 1 (jobc limits reset restores the spec's)", concurrency)
				}
				c.Concurrency = concurrency
			}
			if cmd.Flags().Changed("rate") {
				if c.Rate, err = runtime.ParseRate(rate); err != nil {
					return cli.Usagef(cmd, "--%s", err)
				}
			}
			if c.Concurrency == 0 && c.Rate.IsZero() {
				return cli.Usagef(cmd, "nothing to set: give --concurrency, --rate or both")
			}
			return cli.WithConn(cmd, dbf, func(ctx context.Context, db runtime.DBTX) error {
				if err := runtime.SetLimit(ctx, db, c); err != nil {
					return noLimit(err)
				}
				var set []string
				if c.Concurrency > 0 {
					set = append(set, fmt.Sprintf("concurrency %d", c.Concurrency))
				}
				if !c.Rate.IsZero() {
					set = append(set, "rate "+c.Rate.String())
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s %s: %s set; workers apply it from their next claim, within one poll interval\n",
					scope, cli.Esc(c.Name), strings.Join(set, ", "))
				return nil
			})
		},
	}
	cmd.Flags().IntVar(&concurrency, "concurrency", 0, "at most this many running jobs per key (per kind or queue when it has no by fields)")
	cmd.Flags().StringVar(&rate, "rate", "", "at most LIMIT starts per key in any window of PERIOD, written LIMIT/PERIOD: 100/1m")
	return cmd
}

func newLimitsReset(dbf *cli.DBFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "reset kind|queue NAME",
		Short: "Drop an operator's override: the spec's limits apply again from every worker's next claim",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			scope, err := limitScope(cmd, args)
			if err != nil {
				return err
			}
			return cli.WithConn(cmd, dbf, func(ctx context.Context, db runtime.DBTX) error {
				if err := runtime.ResetLimit(ctx, db, scope, args[1], actor()); err != nil {
					return noLimit(err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s %s: the spec's limits apply again from the next claim\n", scope, cli.Esc(args[1]))
				return nil
			})
		},
	}
}

// limitScope reads the kind|queue NAME arguments of limits set and reset.
func limitScope(cmd *cobra.Command, args []string) (runtime.LimitScope, error) {
	scope := runtime.LimitScope(args[0])
	if scope != runtime.LimitKind && scope != runtime.LimitQueue {
		return "", cli.Usagef(cmd, "%q is not a scope: want kind or queue, then its name", args[0])
	}
	if strings.TrimSpace(args[1]) == "" {
		return "", cli.Usagef(cmd, "the %s name is empty", scope)
	}
	return scope, nil
}

// noLimit adds what to do to ErrNoLimit.
func noLimit(err error) error {
	if errors.Is(err, runtime.ErrNoLimit) {
		return fmt.Errorf("%w; `jobc limits` lists the kinds and queues that have limits", err)
	}
	return err
}

// actor names who runs the command, for the record of a change: "cli:" and the
// user's login name.
func actor() string {
	name := os.Getenv("USER")
	if name == "" {
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
	}
	if name == "" {
		return "cli"
	}
	return "cli:" + name
}
