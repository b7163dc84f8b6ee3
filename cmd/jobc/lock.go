package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
	"github.com/jobc-dev/jobc/generator/contract"
	"github.com/jobc-dev/jobc/generator/spec"
)

func newLock(o *options) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "lock",
		Short: "Record the payload contracts of jobc.yaml as released, in jobc.lock",
		Long: `jobc lock runs the checks of ` + "`jobc check`" + ` against the current jobc.lock and, when they
pass, rewrites jobc.lock with every kind of the spec: its aliases, its write_version,
and each version's canonical schema with its SHA-256. Run it when you release, and
commit jobc.lock: from then on ` + "`jobc check`" + ` fails when a released version changes.

With --force it writes jobc.lock even when the checks fail, or when the current
jobc.lock cannot be read.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := spec.Load(o.dir)
			if err != nil {
				return err
			}
			base, err := contract.LoadLock(o.dir)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				base = nil
			case err != nil && force:
				fmt.Fprintf(cmd.ErrOrStderr(), "jobc: lock: --force: replacing the unreadable %s:\n%v\n", contract.LockName, err)
				base = nil
			case err != nil:
				return err
			}
			findings, err := contract.Verify(p, base)
			if err != nil {
				return err
			}
			if err := findings.Write(cmd.OutOrStdout()); err != nil {
				return err
			}
			if n := findings.Errors(); n > 0 {
				if !force {
					return &cli.ExitError{Code: 1, Err: fmt.Errorf("jobc: lock: the check failed with %d error(s); %s is unchanged: fix them, or pass --force to lock anyway", n, contract.LockName)}
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "jobc: lock: --force: locking despite %d error(s)\n", n)
			}
			l, err := contract.Lock(p)
			if err != nil {
				return err
			}
			if err := contract.WriteLock(o.dir, l); err != nil {
				return err
			}
			versions := 0
			for _, contracts := range []map[string]*contract.LockedJob{l.Jobs, l.Events} {
				for _, j := range contracts {
					versions += len(j.Versions)
				}
			}
			what := fmt.Sprintf("%d kind(s)", len(l.Jobs))
			if len(l.Events) > 0 {
				what += fmt.Sprintf(", %d event(s)", len(l.Events))
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "jobc: locked %s, %d version(s) in %s\n", what, versions, filepath.Join(o.dir, contract.LockName))
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "write jobc.lock even when the checks fail")
	return cmd
}
