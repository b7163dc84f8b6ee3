package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
	"github.com/jobc-dev/jobc/generator"
)

func newDiff(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "diff",
		Short: "Exit 1 with a unified diff when generated files are stale, missing or extra",
		Long: `jobc diff generates the code in memory and compares it with the files on disk. It prints
a unified diff and exits 1 when any generated file is stale, missing, or no longer
produced by the spec (the producers files of producers: {sql, typescript} included);
it exits 0 and prints nothing when everything is up to date.
Use it in CI to catch a forgotten ` + "`go generate`" + `. Like generate, it reads
jobc.lock and fails on an edit of a released version.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := generator.Generate(cmd.Context(), o.dir)
			if err != nil {
				return err
			}
			changes, err := generator.Diff(res)
			if err != nil {
				return err
			}
			for _, c := range changes {
				fmt.Fprint(cmd.OutOrStdout(), c.Diff)
			}
			if len(changes) > 0 {
				return &cli.ExitError{Code: 1, Err: fmt.Errorf("jobc: %d generated file(s) differ from jobc.yaml: run `jobc generate`", len(changes))}
			}
			return nil
		},
	}
}
