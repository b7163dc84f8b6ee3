package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// options are the flags every command shares.
type options struct {
	dir string // project directory
}

func newRoot() *cobra.Command {
	o := &options{}
	root := &cobra.Command{
		Use:           "jobc",
		Short:         "Type-safe background jobs on PostgreSQL, generated from YAML",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVarP(&o.dir, "dir", "C", ".", "project directory (where jobc.yaml is)")
	root.AddCommand(newInit(o), newGenerate(o), newDiff(o), newVet(o), newMigrate(o), newStatus(), newJobs(), newBench(), newCheck(o), newLock(o))
	root.AddCommand(newQueues(o), newWorkers())
	root.AddCommand(newUI(o))
	root.AddCommand(newMetrics())
	root.AddCommand(newRelay(o))
	enforceUsage(root)
	return root
}

// run executes the command line args and returns the exit status: 0 ok, 1 a finding
// or a failure, 2 a usage error (with the command's usage on stderr).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, message(err))
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprint(stderr, "\n"+ue.cmd.UsageString())
	}
	return exitCode(err)
}

// message is err's text with the "jobc: " that the runtime's errors start with said
// once: wrapping one in another ("jobc: retry job 5: jobc: job not found") repeats it.
func message(err error) string {
	msg := err.Error()
	head, rest, found := strings.Cut(msg, ": jobc: ")
	for found {
		msg = head + ": " + rest
		head, rest, found = strings.Cut(msg, ": jobc: ")
	}
	return msg
}

// exitError carries a specific exit status (1 is the default for any error).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func exitCode(err error) int {
	var ue *usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitFailure
}
