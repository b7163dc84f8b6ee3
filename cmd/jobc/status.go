package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/runtime"
)

func newStatus() *cobra.Command {
	var (
		url           string
		within        time.Duration
		failUndecoded bool
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show migrations, live workers, and unfinished jobs by kind, version and state",
		Long: `Status shows what an operator needs during a rolling deploy: which workers are alive
and which payload versions each decodes, and how many unfinished jobs there are of each
kind, queue, payload version and state — with the live workers able to decode them.
Jobs that no live worker takes are marked NONE with the reason: no live worker serves
their queue, the workers of their queue do not handle their kind, or none of them
decodes their payload version (retire a version only once none of its jobs remain).
With --fail-undecodable, exit 1 when there are such jobs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			conn, err := connect(ctx, url)
			if err != nil {
				return err
			}
			defer conn.Close(context.WithoutCancel(ctx))
			out := cmd.OutOrStdout()
			st, err := runtime.Migrations(ctx, conn)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "migrations: %d of %d applied\n", len(st.Applied)-len(st.Unknown), st.Latest)
			if err := runtime.CheckSchema(ctx, conn); err != nil {
				return err
			}
			workers, err := runtime.Workers(ctx, conn, within)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "\nworkers (%d live, heartbeat within %s):\n", len(workers), within)
			t := newTable(out)
			for _, w := range workers {
				t.row("  "+w.ID, fmt.Sprintf("%s pid %d", w.Host, w.PID), "queues "+strings.Join(w.Queues, ","), kindRanges(w.Kinds))
			}
			if err := t.flush(); err != nil {
				return err
			}
			counts, err := runtime.UnfinishedByVersion(ctx, conn, within)
			if err != nil {
				return err
			}
			fmt.Fprintln(out, "\nunfinished jobs:")
			t = newTable(out, "  KIND", "QUEUE", "VERSION", "STATE", "JOBS", "DECODED BY")
			undecodable := int64(0)
			for _, c := range counts {
				by := fmt.Sprintf("%d worker(s)", len(c.Decoders))
				if len(c.Decoders) == 0 {
					by = "NONE: " + c.Problem
					undecodable += c.Jobs
				}
				t.row("  "+c.Kind, c.Queue, c.Version, c.State, c.Jobs, by)
			}
			if err := t.flush(); err != nil {
				return err
			}
			if failUndecoded && undecodable > 0 {
				return &exitError{code: 1, err: fmt.Errorf("jobc: %d unfinished job(s) that no live worker takes", undecodable)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&url, "database-url", "", "PostgreSQL connection string (default $DATABASE_URL)")
	cmd.Flags().DurationVar(&within, "live-within", time.Minute, "a worker is live if its last heartbeat is this recent")
	cmd.Flags().BoolVar(&failUndecoded, "fail-undecodable", false, "exit 1 when some unfinished jobs have no live worker that takes them")
	return cmd
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
