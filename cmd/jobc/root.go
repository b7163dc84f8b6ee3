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

// message is err's text with the command prefix said once: the runtime's errors start
// with "jobc: " and the CLI's with "jobc: " or the command line ("jobc relay: "), so
// wrapping one in another ("jobc: retry job 5: jobc: job not found", "jobc relay:
// jobc relay: ...") would repeat it. Every such prefix after the first is dropped.
func message(err error) string {
	segs := strings.Split(err.Error(), ": ")
	out := segs[:1]
	for _, s := range segs[1:] {
		if !isCommandPrefix(s) {
			out = append(out, s)
		}
	}
	return strings.Join(out, ": ")
}

// isCommandPrefix reports whether s is "jobc" or a jobc command line ("jobc relay",
// "jobc migrate grants"): lower-case words after "jobc", nothing else.
func isCommandPrefix(s string) bool {
	words := strings.Split(s, " ")
	if words[0] != "jobc" {
		return false
	}
	for _, w := range words[1:] {
		if w == "" || strings.TrimFunc(w, func(r rune) bool { return r >= 'a' && r <= 'z' || r == '-' }) != "" {
			return false
		}
	}
	return true
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
