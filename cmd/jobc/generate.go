package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/generator"
	"github.com/jobc-dev/jobc/generator/contract"
)

func newGenerate(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "generate",
		Short: "Write the Go code of the job types declared in jobc.yaml",
		Long: `jobc generate reads jobc.yaml (and the job files it includes), checks it, and writes
one Go file per job type plus jobc.go into the configured output directory. Generated
files that the spec no longer produces are removed (under go generate, one that go
generate has yet to read is emptied instead, and deleted when go generate reaches
it). With producers: {sql: FILE, typescript: FILE} in jobc.yaml, it also writes the
SQL functions jobc_enqueue_<kind> and the TypeScript types and enqueue functions for
node-postgres that call them. Problems are printed as file:line:col: path: message,
all of them.

Generate reads jobc.lock and refuses a spec that edits a released version in place
(RELEASED_VERSION_CHANGED, as ` + "`jobc check`" + ` reports it); it warns, with the
finding of ` + "`jobc check`" + `, about a released kind, alias or event no longer in the
spec (KIND_REMOVED, EVENT_REMOVED), and without jobc.lock that released versions are
unprotected.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := generator.Generate(cmd.Context(), o.dir)
			if err != nil {
				return err
			}
			wd, err := os.Getwd()
			if err != nil {
				return fmt.Errorf("jobc: %w", err)
			}
			opts := generator.WriteOptions{GoGenerate: generator.GoGenerateFromEnv(os.Getenv, wd)}
			if err := generator.WriteWith(res, opts); err != nil {
				return err
			}
			for _, f := range res.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), warningLine(f))
			}
			if res.Unlocked {
				fmt.Fprintf(cmd.ErrOrStderr(), "jobc: warning: no %s: released versions are unprotected from edits in place; run `jobc lock` when you release\n", contract.LockName)
			}
			what := fmt.Sprintf("%d job types", len(res.Project.Jobs))
			if n := len(res.Project.Events); n > 0 {
				what += fmt.Sprintf(" and %d event(s)", n)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "jobc: generated %s into %s\n", what, res.Project.Out)
			for _, f := range []string{res.Project.Producers.SQL, res.Project.Producers.TypeScript} {
				if f != "" {
					fmt.Fprintf(cmd.ErrOrStderr(), "jobc: generated the producers in %s\n", f)
				}
			}
			return nil
		},
	}
}

// warningLine formats a finding that does not fail generate as `jobc check` prints it,
// marked as a warning: file:line:col: path: warning: message [RULE].
func warningLine(f contract.Finding) string {
	d := f.Diagnostic
	d.Message = "warning: " + d.Message
	return fmt.Sprintf("%s [%s]", d, f.Rule)
}
