package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/runtime"
)

func newMigrate() *cobra.Command {
	var url string
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply or inspect jobc's database migrations",
	}
	cmd.PersistentFlags().StringVar(&url, "database-url", "", "PostgreSQL connection string (default $DATABASE_URL)")
	up := &cobra.Command{
		Use:   "up",
		Short: "Apply every pending migration (safe to run from several processes at once)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			conn, err := connect(cmd.Context(), url)
			if err != nil {
				return err
			}
			defer conn.Close(context.WithoutCancel(cmd.Context()))
			done, err := runtime.Migrate(cmd.Context(), conn)
			for _, m := range done {
				fmt.Fprintf(cmd.OutOrStdout(), "applied %04d_%s\n", m.Version, m.Name)
			}
			if err != nil {
				return err
			}
			if len(done) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "already up to date")
			}
			return nil
		},
	}
	status := &cobra.Command{
		Use:   "status",
		Short: "List the migrations and whether each is applied; exit 3 when some are pending",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			conn, err := connect(cmd.Context(), url)
			if err != nil {
				return err
			}
			defer conn.Close(context.WithoutCancel(cmd.Context()))
			st, err := runtime.Migrations(cmd.Context(), conn)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, m := range st.Applied {
				fmt.Fprintf(out, "applied  %04d_%s\n", m.Version, m.Name)
			}
			for _, m := range st.Pending {
				fmt.Fprintf(out, "pending  %04d_%s\n", m.Version, m.Name)
			}
			if len(st.Pending) > 0 {
				return &exitError{code: 3, err: fmt.Errorf("jobc: %d migration(s) pending: run `jobc migrate up`", len(st.Pending))}
			}
			return runtime.CheckSchema(cmd.Context(), conn)
		},
	}
	cmd.AddCommand(up, status)
	return cmd
}

// connect opens one connection to url, or to $DATABASE_URL when url is empty.
func connect(ctx context.Context, url string) (*pgx.Conn, error) {
	if url == "" {
		url = os.Getenv("DATABASE_URL")
	}
	if url == "" {
		return nil, fmt.Errorf("jobc: no database: set DATABASE_URL or pass --database-url")
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		// pgx reports each host tried on its own line; keep the message to one.
		msg := strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
		return nil, fmt.Errorf("jobc: cannot reach PostgreSQL (%s): check DATABASE_URL and that the server is running", msg)
	}
	return conn, nil
}
