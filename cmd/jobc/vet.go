package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
	"github.com/jobc-dev/jobc/generator"
	"github.com/jobc-dev/jobc/generator/spec"
)

func newVet(o *options) *cobra.Command {
	var skip []string
	cmd := &cobra.Command{
		Use:   "vet",
		Short: "Lint jobc.yaml for settings that are legal but likely mistakes; exit 1 on findings",
		Long:  "jobc vet loads and checks the spec like generate, then runs these lints:\n\n" + ruleList(),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := spec.Load(o.dir)
			if err != nil {
				return err
			}
			known := map[string]bool{}
			for _, r := range generator.VetRules() {
				known[r.Name] = true
			}
			skipped := map[string]bool{}
			for _, s := range skip {
				if !known[s] {
					return fmt.Errorf("jobc: --skip %s: no such lint (see jobc vet --help)", s)
				}
				skipped[s] = true
			}
			findings := generator.Vet(p, skipped)
			for _, f := range findings {
				fmt.Fprintln(cmd.OutOrStdout(), f)
			}
			if len(findings) > 0 {
				return &cli.ExitError{Code: 1, Err: fmt.Errorf("jobc: vet: %d finding(s)", len(findings))}
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&skip, "skip", nil, "lints to skip, by name")
	return cmd
}

func ruleList() string {
	var b strings.Builder
	for _, r := range generator.VetRules() {
		fmt.Fprintf(&b, "  %-22s %s\n", r.Name, r.Doc)
	}
	return b.String()
}
