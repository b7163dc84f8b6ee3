package main

import (
	"context"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
	"github.com/jobc-dev/jobc/runtime"
)

// The plumbing jobc shares with jobc-relay and jobc-metrics lives in
// github.com/jobc-dev/jobc/cmd/internal/cli; these names are its short forms inside
// this package.

type (
	dbFlags         = cli.DBFlags
	failedEventJSON = cli.FailedEventJSON
)

const (
	exitOK      = cli.ExitOK
	exitFailure = cli.ExitFailure
	exitUsage   = cli.ExitUsage

	defaultStatementTimeout = cli.DefaultStatementTimeout
	migrateStatementTimeout = cli.MigrateStatementTimeout
)

// exitError carries a specific exit status (1 is the default for any error); cli.Run
// exits with its ExitCode. The commands of this package, migrate.go's too, build it as
// &exitError{code, err}; cli.ExitError is the same for the servers' binaries.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// ExitCode is the status cli.Run exits with.
func (e *exitError) ExitCode() int { return e.code }

func addDBFlags(fs *pflag.FlagSet, statementTimeout time.Duration) *dbFlags {
	return cli.AddDBFlags(fs, statementTimeout)
}

func withConn(cmd *cobra.Command, f *dbFlags, fn func(ctx context.Context, db runtime.DBTX) error) error {
	return cli.WithConn(cmd, f, fn)
}

func withMigratedConn(cmd *cobra.Command, f *dbFlags, fn func(ctx context.Context, db runtime.DBTX) error) error {
	return cli.WithMigratedConn(cmd, f, fn)
}

func withPGConn(cmd *cobra.Command, f *dbFlags, checkSchema bool, fn func(ctx context.Context, conn *pgx.Conn) error) error {
	return cli.WithPGConn(cmd, f, checkSchema, fn)
}

func usagef(cmd *cobra.Command, format string, a ...any) error {
	return cli.Usagef(cmd, format, a...)
}

func asUsage(cmd *cobra.Command, err error) error { return cli.AsUsage(cmd, err) }
func message(err error) string                    { return cli.Message(err) }
func missingObjectErr(err error) bool             { return cli.MissingObjectErr(err) }

func newTable(w io.Writer, headings ...string) *cli.Table { return cli.NewTable(w, headings...) }
func writeJSON(w io.Writer, v any) error                  { return cli.WriteJSON(w, v) }
func seconds(d time.Duration) float64                     { return cli.Seconds(d) }
func age(d time.Duration) string                          { return cli.Age(d) }
func esc(s string) string                                 { return cli.Esc(s) }
func truncate(s string, n int) string                     { return cli.Truncate(s, n) }
func nonNil[T any](s []T) []T                             { return cli.NonNil(s) }
