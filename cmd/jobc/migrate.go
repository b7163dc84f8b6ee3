package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
	"github.com/jobc-dev/jobc/generator/spec"
	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/schema"
)

// applySQLProducers applies the SQL producers file of the project in dir, if its spec
// names one; a directory without a spec has none.
func applySQLProducers(cmd *cobra.Command, conn *pgx.Conn, dir string) error {
	p, _ := spec.Load(dir) // a spec with problems still names its file; generate reports them
	if p == nil || p.Producers.SQL == "" {
		return nil
	}
	path := filepath.Join(dir, filepath.FromSlash(p.Producers.SQL))
	sql, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("jobc: %s names SQL producers %s, which does not exist: run `jobc generate`", p.File, p.Producers.SQL)
	}
	if err != nil {
		return fmt.Errorf("jobc: read the SQL producers: %w", err)
	}
	if _, err := conn.Exec(cmd.Context(), string(sql)); err != nil {
		return fmt.Errorf("jobc: apply the SQL producers %s: %w", p.Producers.SQL, err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "applied SQL producers %s\n", p.Producers.SQL)
	return nil
}

func newMigrate(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply, inspect or print jobc's database migrations",
	}
	var upDB, statusDB *cli.DBFlags
	up := &cobra.Command{
		Use:   "up",
		Short: "Apply every pending migration and the function library (safe to run from several processes at once)",
		Long: `Apply every pending migration (safe to run from several processes at once), then
jobc's function library (the functions the SQL producers call) when the database has an
older one or none; a newer one, applied by a newer jobc, is left in place.

When the project directory (-C) has a jobc.yaml with producers.sql, the SQL producers
file it names (written by "jobc generate") is applied after the migrations, every time:
it only replaces functions, so applying it again is harmless.

Each statement is bounded by --statement-timeout, 10m by default rather than the 30s of
the other commands: a migration may build an index or validate a constraint over the
whole jobs table, and a second "migrate up" waits while another applies a migration.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cli.WithPGConn(cmd, upDB, false, func(ctx context.Context, conn *pgx.Conn) error {
				before, err := runtime.GetMigrationStatus(ctx, conn)
				if err != nil {
					return err
				}
				done, err := runtime.Migrate(ctx, conn)
				for _, m := range done {
					fmt.Fprintf(cmd.OutOrStdout(), "applied %04d_%s\n", m.Version, m.Name)
				}
				if err != nil {
					return err
				}
				after, err := runtime.GetMigrationStatus(ctx, conn)
				if err != nil {
					return err
				}
				if after.LibraryApplied != before.LibraryApplied {
					fmt.Fprintf(cmd.OutOrStdout(), "applied function library v%d\n", after.LibraryApplied)
				}
				if len(done) == 0 && after.LibraryApplied == before.LibraryApplied {
					fmt.Fprintln(cmd.OutOrStdout(), "already up to date")
				}
				return applySQLProducers(cmd, conn, o.dir)
			})
		},
	}
	upDB = cli.AddDBFlags(up.Flags(), cli.MigrateStatementTimeout)
	status := &cobra.Command{
		Use:   "status",
		Short: "List the migrations and the function library, and whether each is applied; exit 3 when some are pending",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cli.WithConn(cmd, statusDB, func(ctx context.Context, db runtime.DBTX) error {
				st, err := runtime.GetMigrationStatus(ctx, db)
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
				pending := len(st.Pending)
				if st.LibraryApplied >= st.Library {
					fmt.Fprintf(out, "applied  function library v%d\n", st.LibraryApplied)
				} else {
					fmt.Fprintf(out, "pending  function library v%d\n", st.Library)
					pending++
				}
				if pending > 0 {
					return &cli.ExitError{Code: 3, Err: fmt.Errorf("jobc: %d migration(s) pending: run `jobc migrate up`", pending)}
				}
				return nil
			})
		},
	}
	statusDB = cli.AddDBFlags(status.Flags(), cli.DefaultStatementTimeout)
	cmd.AddCommand(up, status, newMigrateSQL(), newMigrateGrants())
	return cmd
}

func newMigrateSQL() *cobra.Command {
	var (
		from, start int
		dir         string
	)
	cmd := &cobra.Command{
		Use:   "sql [--from N] [--dir DIR [--start N]]",
		Short: "Print the migrations and the function library as SQL, for golang-migrate, goose, Atlas or psql",
		Long: `jobc migrate sql prints what "jobc migrate up" applies, for teams that apply migrations
with their own tool: each numbered migration from --from on, then jobc's function
library (the functions the SQL producers call), in apply order. Each comes with the
bookkeeping of jobc's own migrator, so that a later "jobc migrate up", runtime.Migrate
or runtime.CheckSchema agrees with what was applied: it takes the migrator's advisory
lock, creates the tables jobc_migrations and jobc_library if missing and records
itself there. The library refuses to run where a newer one is recorded.

Each unit must run in one transaction, except a migration whose first line is
"-- jobc:no-transaction" (CREATE INDEX CONCURRENTLY, batched backfills), which must run
outside one, a statement at a time (golang-migrate: x-multi-statement; goose: "-- +goose
NO TRANSACTION"). On standard output every other unit is wrapped in BEGIN and COMMIT,
for psql:

  jobc migrate sql | psql -v ON_ERROR_STOP=1 "$DATABASE_URL"

With --dir, each unit is written to a file of its own, NNNN_jobc_NAME.up.sql, without
BEGIN and COMMIT (golang-migrate and Atlas run each file in a transaction; goose needs
its "-- +goose Up" annotation added). Files are numbered from --start, so that they
follow the migrations already in DIR; an existing file is never overwritten.

After upgrading jobc, print what the database lacks: --from the first migration that
"jobc migrate status" lists as pending (or the number after the last one, for the
library alone). No database is needed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("start") && dir == "" {
				return cli.Usagef(cmd, "--start numbers the files of --dir: give --dir too")
			}
			if start < 1 {
				return cli.Usagef(cmd, "--start must be 1 or more")
			}
			scripts, err := schema.Scripts(from)
			if err != nil {
				return cli.Usagef(cmd, "--from %d: there is no such migration: the migrations are 1 to %d (%d: the function library alone)", from, schema.Latest(), schema.Latest()+1)
			}
			out := cmd.OutOrStdout()
			if dir == "" {
				for _, s := range scripts {
					if s.NoTransaction {
						fmt.Fprintf(out, "%s\n", s.SQL)
						continue
					}
					fmt.Fprintf(out, "BEGIN;\n\n%s\nCOMMIT;\n\n", s.SQL)
				}
				return nil
			}
			for i, s := range scripts {
				name := filepath.Join(dir, fmt.Sprintf("%04d_jobc_%s.up.sql", start+i, strings.TrimLeft(s.Name, "0123456789_")))
				f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
				if err != nil {
					return fmt.Errorf("jobc: write migration file: %w", err)
				}
				_, err = f.WriteString(s.SQL)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					return fmt.Errorf("jobc: write %s: %w", name, err)
				}
				fmt.Fprintf(out, "wrote %s\n", name)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&from, "from", 1, "the first numbered migration to print; the function library always follows")
	f.StringVar(&dir, "dir", "", "write one file per migration into this directory instead of printing")
	f.IntVar(&start, "start", 1, "with --dir: the number of the first file")
	return cmd
}

// grantsUsage is the synopsis usage errors of `jobc migrate grants` repeat.
const grantsUsage = "usage: jobc migrate grants --worker ROLE --readonly ROLE [--producer ROLE] [--apply]"

func newMigrateGrants() *cobra.Command {
	var (
		roles runtime.GrantRoles
		apply bool
		dbf   *cli.DBFlags
	)
	cmd := &cobra.Command{
		Use:   "grants --worker ROLE --readonly ROLE [--producer ROLE] [--apply]",
		Short: "Print, or apply, the privileges that let workers, producers and dashboards run without owning the tables",
		Long: `jobc migrate grants prints the GRANT statements, one per line, that give existing roles what jobc's
statements need on the jobc tables of the database's search_path, and nothing more:

  --worker    runs workers, and may enqueue and cancel: row privileges (SELECT, INSERT,
              UPDATE, DELETE) on the tables its statements touch, USAGE on the id sequence
  --producer  only enqueues: INSERT on jobc_jobs and jobc_unique_keys, the id sequence,
              and SELECT on what enqueue reads back (optional)
  --readonly  jobc status, jobc jobs list/show and dashboards: SELECT only

None gets DDL, TRUNCATE or ownership: the role that runs "jobc migrate up" owns the tables.
With --apply, the statements run in one transaction, as that owner (or a superuser).
Run it again after "jobc migrate up" applies new migrations.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return grantsUsageError(fmt.Errorf("unexpected argument %q", args[0]))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkGrantRoles(roles); err != nil {
				return err
			}
			return cli.WithPGConn(cmd, dbf, false, func(ctx context.Context, conn *pgx.Conn) error {
				out := cmd.OutOrStdout()
				if !apply {
					stmts, err := runtime.ListGrants(ctx, conn, roles)
					if err != nil {
						return err
					}
					for _, s := range stmts {
						fmt.Fprintln(out, s)
					}
					return nil
				}
				stmts, err := runtime.ApplyGrants(ctx, conn, roles)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "applied %d GRANT statements in one transaction\n", len(stmts))
				return nil
			})
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return grantsUsageError(err) })
	f := cmd.Flags()
	f.StringVar(&roles.Worker, "worker", "", "role that runs workers (and may enqueue and cancel)")
	f.StringVar(&roles.Producer, "producer", "", "role that only enqueues (optional)")
	f.StringVar(&roles.ReadOnly, "readonly", "", "role for jobc status and dashboards (SELECT only)")
	f.BoolVar(&apply, "apply", false, "apply the statements in one transaction instead of printing them")
	dbf = cli.AddDBFlags(f, cli.DefaultStatementTimeout)
	return cmd
}

// checkGrantRoles reports missing or repeated role flags as usage errors, before
// anything connects.
func checkGrantRoles(r runtime.GrantRoles) error {
	if r.Worker == "" {
		return grantsUsageError(errors.New("--worker ROLE is required"))
	}
	if r.ReadOnly == "" {
		return grantsUsageError(errors.New("--readonly ROLE is required"))
	}
	if r.Worker == r.ReadOnly || r.Worker == r.Producer || r.Producer == r.ReadOnly {
		return grantsUsageError(errors.New("--worker, --producer and --readonly must name different roles: each gets different privileges"))
	}
	return nil
}

// grantsUsageError is a command-line mistake: exit status 2, with the synopsis.
func grantsUsageError(err error) error {
	return &cli.ExitError{Code: 2, Err: fmt.Errorf("jobc migrate grants: %w\n%s", err, grantsUsage)}
}
