package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
	"github.com/jobc-dev/jobc/generator"
	"github.com/jobc-dev/jobc/generator/contract"
	"github.com/jobc-dev/jobc/generator/spec"
)

func newCheck(o *options) *cobra.Command {
	var against string
	var noSamples bool
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check the payload contracts for safe rolling deploys; exit 1 on errors",
		Long: `jobc check loads jobc.yaml and checks that every payload version can be read by the
workers that will meet it:

  - each version after the first is reached from its predecessor: its declared changes
    turn every old payload into a valid new one, or, when the versions are not
    compatible and declare no changes, the output package has a hand-written
    Upcast<Name>V<n-1>ToV<n>;
  - against the released contracts in jobc.lock (or, with --against, the spec at a git
    revision): no released version changed, write_version does not move past what
    released workers decode, and no released kind or alias disappeared;
  - when those pass, sample documents of every older version (bounds, each enum
    value, optional fields present and absent, formats, nested arrays) go through the
    upcast chain, hand-written or generated from changes, in a throwaway build of the
    generated package (go run in your module), and each result must be a valid
    newest-version payload. --no-samples skips this; it is skipped with a warning
    when the generated files are stale or there is no go.mod.

Check reads files only, never the database: ` + "`jobc status`" + ` shows what is queued.

Findings are printed as file:line:col: path: message [RULE]; "note:" marks findings that
do not fail the check. Rules:

  RELEASED_VERSION_CHANGED  a released version's schema changed (a diff follows)
  UPCAST_MISSING            an incompatible version has no changes and no hand-written upcast
  UPCAST_SIGNATURE          the hand-written upcast has the wrong signature
  UPCAST_HAND_WRITTEN       note: an incompatible version is upcast by a hand-written function
  CHANGES_INCORRECT         the changes leave some old payloads invalid
  CHANGE_DEFAULT_INVALID    the default of an added field does not validate
  CHANGE_NOT_APPLICABLE     a change names a field the versions do not have
  WRITE_VERSION_AHEAD       write_version is newer than released workers decode
  VERSION_RETIRED           note: a released version was removed
  KIND_REMOVED              a released kind or alias is gone
  UPCAST_OUTPUT_INVALID     a sample upcast to the newest version is rejected by its schema
  UPCAST_FAILED             a sample's upcast returned an error

Notes that explain an incompatibility carry the compatibility rule, such as
MAX_LENGTH_DECREASED, at the place in the new schema where the difference is.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := spec.Load(o.dir)
			if err != nil {
				return err
			}
			base, err := loadBaseline(cmd.Context(), o.dir, against)
			if err != nil {
				return err
			}
			if base == nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "jobc: no %s: checked the upcasts only; run `jobc lock` when you release to record the released contracts\n", contract.LockName)
			}
			findings, err := contract.Verify(p, base)
			if err != nil {
				return err
			}
			if findings.Errors() == 0 && !noSamples {
				more, err := exercise(cmd.Context(), cmd.ErrOrStderr(), o.dir, p)
				if err != nil {
					return err
				}
				findings = append(findings, more...)
			}
			if err := findings.Write(cmd.OutOrStdout()); err != nil {
				return err
			}
			if n := findings.Errors(); n > 0 {
				return &cli.ExitError{Code: 1, Err: fmt.Errorf("jobc: check: %d error(s), %d note(s)", n, len(findings)-n)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&against, "against", "", "compare with the spec at this git revision instead of "+contract.LockName)
	cmd.Flags().BoolVar(&noSamples, "no-samples", false, "do not run sample documents through the upcasts")
	return cmd
}

// loadBaseline returns the released contracts: the spec at a git revision when ref is
// set, else jobc.lock, else nil when there is no lock file.
func loadBaseline(ctx context.Context, dir, ref string) (*contract.LockFile, error) {
	if ref != "" {
		return contract.GitBaseline(ctx, dir, ref)
	}
	l, err := contract.LoadLock(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return l, err
}

// exercise runs contract.Exercise when the generated files are up to date; otherwise,
// or without a go.mod, it warns on w and finds nothing.
func exercise(ctx context.Context, w io.Writer, dir string, p *spec.Project) (contract.Findings, error) {
	if !hasUpcasts(p) {
		return nil, nil
	}
	res, err := generator.Generate(ctx, dir)
	if err != nil {
		return nil, err
	}
	changes, err := generator.Diff(res)
	if err != nil {
		return nil, err
	}
	if len(changes) > 0 {
		fmt.Fprintf(w, "jobc: warning: %d generated file(s) differ from the spec: upcasts not exercised; run `jobc generate`\n", len(changes))
		return nil, nil
	}
	ex, err := contract.Exercise(ctx, p)
	if err != nil {
		return nil, err
	}
	if ex.Skipped != "" {
		fmt.Fprintf(w, "jobc: warning: upcasts not exercised: %s\n", ex.Skipped)
	}
	return ex.Findings, nil
}

func hasUpcasts(p *spec.Project) bool {
	for _, k := range p.Contracts() {
		if len(k.Payload.Versions) > 1 {
			return true
		}
	}
	return false
}
