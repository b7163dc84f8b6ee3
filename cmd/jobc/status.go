package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/relay"
)

// statusJSON is the output of `jobc status --json`; the field names are documented in
// docs/cli.md and stay stable.
type statusJSON struct {
	Migrations struct {
		Applied int `json:"applied"`
		Latest  int `json:"latest"`
	} `json:"migrations"`
	Queues     []queueJSON      `json:"queues"`
	Workers    []workerJSON     `json:"workers"`
	Unfinished []unfinishedJSON `json:"unfinished"`
	History    []historyJSON    `json:"history"`
	JobsTable  jobsTableJSON    `json:"jobs_table"`
	Events     eventsJSON       `json:"events"`
}

// jobsTableJSON is what jobc_jobs weighs and when it was last vacuumed
// (runtime.JobsTable).
type jobsTableJSON struct {
	Bytes          int64      `json:"bytes"`
	LiveRows       int64      `json:"live_rows"`
	DeadRows       int64      `json:"dead_rows"`
	LastVacuum     *time.Time `json:"last_vacuum"`     // null: none since the statistics began
	LastAutovacuum *time.Time `json:"last_autovacuum"` // null: none since the statistics began
}

// historyJSON is how one finished state's history is kept (runtime.History).
type historyJSON struct {
	State       string     `json:"state"`
	Partitions  int        `json:"partitions"`
	From        *time.Time `json:"from"`  // the oldest partition's start; null when none
	Until       *time.Time `json:"until"` // the newest partition's end; null when none
	CoversNow   bool       `json:"covers_now"`
	DefaultRows int64      `json:"default_rows"`
}

// eventsJSON is the outbox: what the relays have yet to publish, how far behind they
// are, the events waiting to be sent again (the soonest due, at most
// statusRetryingEvents) and the events failed for good (the newest, at most
// statusFailedEvents).
type eventsJSON struct {
	Pending         int64                 `json:"pending"`
	Failed          int64                 `json:"failed"`
	RelayLagSeconds float64               `json:"relay_lag_seconds"`
	RetryingEvents  []retryingEventJSON   `json:"retrying_events"`
	FailedEvents    []cli.FailedEventJSON `json:"failed_events"`
}

// retryingEventJSON is an event whose publication failed, waiting for its next
// attempt; behind counts the events of its ordering key waiting behind it, up to
// statusBehindMax (behind_at_least: there may be more).
type retryingEventJSON struct {
	ID            int64     `json:"id"`
	Event         string    `json:"event"`
	Version       int       `json:"version"`
	Subject       string    `json:"subject"`
	OrderingKey   string    `json:"ordering_key"`
	Attempts      int       `json:"attempts"`
	CreatedAt     time.Time `json:"created_at"`
	NextAttemptAt time.Time `json:"next_attempt_at"`
	Error         string    `json:"error"`
	Behind        int64     `json:"behind"`
	BehindAtLeast bool      `json:"behind_at_least"`
}

const (
	statusFailedEvents   = 5     // how many failed events status lists
	statusRetryingEvents = 5     // how many retrying events status lists
	statusBehindMax      = 10000 // how far status counts the events behind a retrying one
)

func toRetryingEventsJSON(retrying []relay.RetryingEvent) []retryingEventJSON {
	out := make([]retryingEventJSON, len(retrying))
	for i, r := range retrying {
		out[i] = retryingEventJSON{ID: r.ID, Event: r.Event, Version: r.Version, Subject: r.Subject, OrderingKey: r.OrderingKey,
			Attempts: r.Attempts, CreatedAt: r.CreatedAt, NextAttemptAt: r.NextAttempt, Error: r.Error,
			Behind: r.Behind, BehindAtLeast: r.Behind >= statusBehindMax}
	}
	return out
}

// unfinishedJSON is one count of unfinished jobs of a kind, queue, version and state.
type unfinishedJSON struct {
	Kind     string   `json:"kind"`
	Queue    string   `json:"queue"`
	Version  int      `json:"version"`
	State    string   `json:"state"`
	Jobs     int64    `json:"jobs"`
	Decoders []string `json:"decoders"` // ids of the live workers that take them
	Problem  string   `json:"problem"`  // why no live worker takes them; "" when some does
}

func newStatus() *cobra.Command {
	var (
		dbf           *cli.DBFlags
		within        time.Duration
		failUndecoded bool
		failOldest    time.Duration
		failRelayLag  time.Duration
		asJSON        bool
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show queues, live workers, and unfinished jobs by kind, version and state",
		Long: `jobc status shows what an operator needs first: per queue the jobs available, scheduled and
running, how long the oldest available job has waited, the jobs completed and failed in
the last hour, and whether the queue is paused; then which workers are alive and which
payload versions each decodes, and how many unfinished jobs there are of each kind,
queue, payload version and state — with the live workers able to decode them.
Jobs that no live worker takes are marked NONE with the reason: no live worker serves
their queue, the workers of their queue do not handle their kind, or none of them
decodes their payload version (retire a version only once none of its jobs remain).
Then history: per finished state, the partitions by finish time the workers' pruners
keep (how many, from when to when) and about how many rows the DEFAULT partition holds;
a state whose partitions do not cover now is flagged, because its finished jobs then
go to the DEFAULT partition (no worker's pruner has run for a while). Then the table of
unfinished jobs: its size, its live and dead row versions, and when the workers (or an
operator) and autovacuum last vacuumed it.
Last, the outbox: the events not yet published, the relay lag (the age of the oldest of
them), the events waiting to be sent again after a failed publication (the soonest due
first, each with how many events of its ordering key wait behind it) and the events
failed for good, newest first.

For cron jobs and health checks: with --fail-oldest D, exit 1 when the oldest available
job of any queue has waited longer than D; with --fail-undecodable, exit 1 when there are
jobs no live worker takes; with --fail-relay-lag D, exit 1 when the relay lag exceeds D.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if failOldest < 0 || failRelayLag < 0 {
				return cli.Usagef(cmd, "--fail-oldest and --fail-relay-lag must not be negative")
			}
			return cli.WithMigratedConn(cmd, dbf, func(ctx context.Context, db runtime.DBTX) error {
				st, err := runtime.GetMigrationStatus(ctx, db)
				if err != nil {
					return err
				}
				stats, err := runtime.ListQueueStats(ctx, db)
				if err != nil {
					return err
				}
				workers, err := runtime.ListWorkers(ctx, db, within)
				if err != nil {
					return err
				}
				counts, err := runtime.CountUnfinishedByVersion(ctx, db, within)
				if err != nil {
					return err
				}
				history, err := runtime.ListHistory(ctx, db)
				if err != nil {
					return err
				}
				jobsTable, err := runtime.ReadJobsTable(ctx, db)
				if err != nil {
					return err
				}
				outbox, err := relay.ReadStats(ctx, db)
				if err != nil {
					return err
				}
				failedEvents, err := relay.ListFailed(ctx, db, statusFailedEvents)
				if err != nil {
					return err
				}
				retrying, err := relay.ListRetrying(ctx, db, statusRetryingEvents, statusBehindMax)
				if err != nil {
					return err
				}
				undecodable := int64(0)
				for _, c := range counts {
					if len(c.Decoders) == 0 {
						undecodable += c.Jobs
					}
				}
				if asJSON {
					s := toStatusJSON(len(st.Applied)-len(st.Unknown), st.Latest, stats, workers, counts)
					s.History = toHistoryJSON(history, time.Now())
					s.JobsTable = toJobsTableJSON(jobsTable)
					s.Events = eventsJSON{Pending: outbox.Pending, Failed: outbox.Failed, RelayLagSeconds: cli.Seconds(outbox.Lag),
						RetryingEvents: toRetryingEventsJSON(retrying), FailedEvents: cli.ToFailedEventsJSON(failedEvents)}
					err = cli.WriteJSON(cmd.OutOrStdout(), s)
				} else {
					err = printStatus(cmd, len(st.Applied)-len(st.Unknown), st.Latest, within, stats, workers, counts)
					if err == nil {
						err = printHistory(cmd, history, time.Now())
					}
					if err == nil {
						err = printJobsTable(cmd, jobsTable, time.Now())
					}
					if err == nil {
						err = printOutbox(cmd, outbox, retrying, failedEvents)
					}
				}
				if err != nil {
					return err
				}
				var findings []error
				if failOldest > 0 {
					for _, q := range oldestOver(stats, failOldest) {
						findings = append(findings, fmt.Errorf("jobc: queue %s: the oldest available job has waited %s, more than %s",
							cli.Esc(q.Queue), cli.Age(q.OldestAvailableAge), failOldest))
					}
				}
				if failRelayLag > 0 && outbox.Lag > failRelayLag {
					findings = append(findings, fmt.Errorf("jobc: the relay lag is %s, more than %s: the oldest of %d pending events waits for a relay",
						cli.Age(outbox.Lag), failRelayLag, outbox.Pending))
				}
				if failUndecoded && undecodable > 0 {
					findings = append(findings, fmt.Errorf("jobc: %d unfinished job(s) that no live worker takes", undecodable))
				}
				if len(findings) > 0 {
					return &cli.ExitError{Code: cli.ExitFailure, Err: errors.Join(findings...)}
				}
				return nil
			})
		},
	}
	dbf = cli.AddDBFlags(cmd.Flags(), cli.DefaultStatementTimeout)
	cmd.Flags().DurationVar(&within, "live-within", time.Minute, "a worker is live if its last heartbeat is this recent")
	cmd.Flags().BoolVar(&failUndecoded, "fail-undecodable", false, "exit 1 when some unfinished jobs have no live worker that takes them")
	cmd.Flags().DurationVar(&failOldest, "fail-oldest", 0, "exit 1 when any queue's oldest available job has waited longer than this (e.g. 5m)")
	cmd.Flags().DurationVar(&failRelayLag, "fail-relay-lag", 0, "exit 1 when the oldest unpublished event is older than this (e.g. 1m)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (fields in docs/cli.md)")
	return cmd
}

// printJobsTable prints what jobc_jobs weighs and when it was last vacuumed.
func printJobsTable(cmd *cobra.Command, t runtime.JobsTable, now time.Time) error {
	ago := func(at time.Time) string {
		if at.IsZero() {
			return "never"
		}
		return cli.Age(now.Sub(at)) + " ago"
	}
	_, err := fmt.Fprintf(cmd.OutOrStdout(), "\njobc_jobs (unfinished jobs): %.1f MB with its indexes, about %d live and %d dead row versions;\n"+
		"  last VACUUM (the workers' vacuumer or an operator) %s, last autovacuum %s\n",
		float64(t.Bytes)/1e6, t.LiveRows, t.DeadRows, ago(t.LastVacuum), ago(t.LastAutovacuum))
	return err
}

// printHistory prints the history section of status, and flags each state whose
// partitions do not cover now.
func printHistory(cmd *cobra.Command, hs []runtime.History, now time.Time) error {
	out := cmd.OutOrStdout()
	fmt.Fprintln(out, "\nhistory (partitions by finish time, added and dropped by the workers' pruners):")
	t := cli.NewTable(out, "  STATE", "PARTITIONS", "FROM (UTC)", "UNTIL (UTC)", "DEFAULT PARTITION")
	var uncovered []string
	for _, h := range hs {
		from, until := "-", "-"
		if h.Partitions > 0 {
			from, until = h.From.UTC().Format(time.DateTime), h.Until.UTC().Format(time.DateTime)
		}
		t.Row("  "+string(h.State), h.Partitions, from, until, fmt.Sprintf("about %d rows", h.DefaultRows))
		if !h.Covers(now) {
			uncovered = append(uncovered, string(h.State))
		}
	}
	if err := t.Flush(); err != nil {
		return err
	}
	if len(uncovered) > 0 {
		_, err := fmt.Fprintf(out, "  no partition covers now for %s: those jobs finish into the DEFAULT partition, pruned row by row;\n"+
			"  partitions are added by every worker's pruner (Retention, PruneInterval): is no worker running?\n", strings.Join(uncovered, ", "))
		return err
	}
	return nil
}

func toJobsTableJSON(t runtime.JobsTable) jobsTableJSON {
	at := func(t time.Time) *time.Time {
		if t.IsZero() {
			return nil
		}
		return &t
	}
	return jobsTableJSON{Bytes: t.Bytes, LiveRows: t.LiveRows, DeadRows: t.DeadRows,
		LastVacuum: at(t.LastVacuum), LastAutovacuum: at(t.LastAutovacuum)}
}

func toHistoryJSON(hs []runtime.History, now time.Time) []historyJSON {
	out := make([]historyJSON, len(hs))
	for i, h := range hs {
		out[i] = historyJSON{State: string(h.State), Partitions: h.Partitions, CoversNow: h.Covers(now), DefaultRows: h.DefaultRows}
		if h.Partitions > 0 {
			from, until := h.From.UTC(), h.Until.UTC()
			out[i].From, out[i].Until = &from, &until
		}
	}
	return out
}

// printOutbox prints the outbox's section of status.
func printOutbox(cmd *cobra.Command, s relay.Stats, retrying []relay.RetryingEvent, failed []relay.FailedEvent) error {
	out := cmd.OutOrStdout()
	lag := "none"
	if s.Pending > 0 {
		lag = cli.Age(s.Lag)
	}
	fmt.Fprintf(out, "\nevents: %d pending, relay lag %s, %d failed\n", s.Pending, lag, s.Failed)
	if len(retrying) > 0 {
		fmt.Fprintln(out, "  waiting to be sent again after a failed publication, the soonest due first (each holds back the later events of its key):")
		t := cli.NewTable(out, "  ID", "EVENT", "KEY", "ATTEMPTS", "NEXT ATTEMPT IN", "BEHIND", "ERROR")
		for _, r := range retrying {
			behind := strconv.FormatInt(r.Behind, 10)
			if r.Behind >= statusBehindMax {
				behind += "+"
			}
			t.Row("  "+strconv.FormatInt(r.ID, 10), cli.Esc(r.Event), cli.Esc(r.OrderingKey), r.Attempts,
				cli.Age(time.Until(r.NextAttempt)), behind, cli.Esc(cli.Truncate(r.Error, 100)))
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if len(failed) == 0 {
		return nil
	}
	if s.Failed > int64(len(failed)) {
		fmt.Fprintf(out, "  the newest %d failed (all: jobc relay failed; send again: jobc relay retry):\n", len(failed))
	}
	return cli.PrintFailedEvents(cmd, failed, "  ")
}

func printStatus(cmd *cobra.Command, applied, latest int, within time.Duration, stats []runtime.QueueStat, workers []runtime.WorkerInfo, counts []runtime.VersionCount) error {
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "migrations: %d of %d applied\n", applied, latest)
	fmt.Fprintln(out, "\nqueues:")
	if err := printQueues(cmd, stats, "  "); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nworkers (%d live, heartbeat within %s):\n", len(workers), within)
	t := cli.NewTable(out)
	for _, w := range workers {
		t.Row("  "+w.ID, fmt.Sprintf("%s pid %d", w.Host, w.PID), "queues "+strings.Join(w.Queues, ","), kindRanges(w.Kinds))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out, "\nunfinished jobs:")
	if len(counts) == 0 {
		_, err := fmt.Fprintln(out, "  none")
		return err
	}
	t = cli.NewTable(out, "  KIND", "QUEUE", "VERSION", "STATE", "JOBS", "DECODED BY")
	for _, c := range counts {
		by := fmt.Sprintf("%d worker(s)", len(c.Decoders))
		if len(c.Decoders) == 0 {
			by = "NONE: " + c.Problem
		}
		t.Row("  "+c.Kind, c.Queue, c.Version, string(c.State), c.Jobs, by)
	}
	return t.Flush()
}

func toStatusJSON(applied, latest int, stats []runtime.QueueStat, workers []runtime.WorkerInfo, counts []runtime.VersionCount) statusJSON {
	var s statusJSON
	s.Migrations.Applied, s.Migrations.Latest = applied, latest
	s.Queues = toQueueJSON(stats)
	s.Workers = toWorkersJSON(workers, time.Now())
	s.Unfinished = make([]unfinishedJSON, len(counts))
	for i, c := range counts {
		s.Unfinished[i] = unfinishedJSON{Kind: c.Kind, Queue: c.Queue, Version: c.Version, State: string(c.State), Jobs: c.Jobs,
			Decoders: cli.NonNil(c.Decoders), Problem: c.Problem}
	}
	return s
}

func kindRanges(kinds map[string][2]int) string {
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		r := kinds[k]
		if r[0] == r[1] {
			parts[i] = fmt.Sprintf("%s v%d", k, r[0])
		} else {
			parts[i] = fmt.Sprintf("%s v%d..%d", k, r[0], r[1])
		}
	}
	return strings.Join(parts, ", ")
}
