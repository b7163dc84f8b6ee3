package main

import (
	"errors"

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
	root.AddCommand(newInit(o), newGenerate(o), newDiff(o), newVet(o), newMigrate(), newStatus(), newJobs(), newBench(), newCheck(o), newLock(o))
	return root
}

// exitError carries a specific exit status (1 is the default for any error).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}
