package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/generator/contract"
)

const initConfig = `# jobc.yaml: the job types of this module. Run ` + "`go generate ./...`" + ` after editing.
version: 1
package: jobs
out: internal/jobs
error_classes:
  transient: {retry: true}
  invalid: {retry: false}
jobs:
  send_welcome_email:
    description: Welcomes a new user.
    queue: email
    timeout: 30s
    retry: {max_attempts: 10, backoff: exponential, initial: 5s, max: 1h, jitter: 0.1}
    errors: [transient, invalid]
    default_error: transient
    payload:
      versions:
        1:
          schema:
            type: object
            additionalProperties: false
            required: [user_id, email]
            properties:
              user_id: {type: integer}
              email: {type: string, format: email}
`

func newInit(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "init",
		Short: "Create jobc.yaml with one job, an empty jobc.lock, and the go:generate directive",
		Long: `jobc init writes jobc.yaml (one example job type), an empty jobc.lock (nothing is
released yet: ` + "`jobc lock`" + ` records the versions of a release), and
internal/jobs/generate.go, which holds "//go:generate go tool jobc generate": add jobc
as a tool of your module with ` + "`go get -tool github.com/jobc-dev/jobc/cmd/jobc`" + `
(unless go.mod already names it), then run ` + "`go generate ./...`" + `. It never
overwrites a file.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := filepath.Join(o.dir, "jobc.yaml")
			gen := filepath.Join(o.dir, "internal", "jobs", "generate.go")
			lock := filepath.Join(o.dir, contract.LockName)
			for _, p := range []string{cfg, gen, lock} {
				if _, err := os.Stat(p); err == nil {
					return fmt.Errorf("jobc: %s already exists: init never overwrites a file", p)
				} else if !errors.Is(err, fs.ErrNotExist) {
					return fmt.Errorf("jobc: %w", err)
				}
			}
			isTool, err := jobcIsTool(o.dir)
			if err != nil {
				return err
			}
			if err := os.WriteFile(cfg, []byte(initConfig), 0o644); err != nil {
				return fmt.Errorf("jobc: %w", err)
			}
			if err := os.MkdirAll(filepath.Dir(gen), 0o755); err != nil {
				return fmt.Errorf("jobc: %w", err)
			}
			src := "package jobs\n\n//go:generate go tool jobc generate -C ../..\n"
			if err := os.WriteFile(gen, []byte(src), 0o644); err != nil {
				return fmt.Errorf("jobc: %w", err)
			}
			if err := contract.WriteLock(o.dir, contract.NewLock()); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "created %s, %s and %s\n", cfg, lock, gen)
			fmt.Fprintln(out, "next:")
			if !isTool {
				fmt.Fprintln(out, "  go get -tool "+toolPath)
			}
			fmt.Fprint(out, `  go generate ./...
  jobc migrate up   # with DATABASE_URL set
  jobc lock         # when you release: records the released versions
`)
			return nil
		},
	}
}

// toolPath is the package `go get -tool` adds for `go tool jobc`.
const toolPath = "github.com/jobc-dev/jobc/cmd/jobc"

// jobcIsTool reports whether the go.mod of the module holding dir (the first one in
// dir or above it) names jobc as a tool, in a tool directive of its own or in a tool
// block; false without a go.mod.
func jobcIsTool(dir string) (bool, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false, fmt.Errorf("jobc: %w", err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(abs, "go.mod"))
		if err == nil {
			return namesTool(string(b), toolPath), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("jobc: %w", err)
		}
		parent := filepath.Dir(abs)
		if parent == abs {
			return false, nil
		}
		abs = parent
	}
}

// namesTool reports whether the go.mod text gomod has a tool directive for path:
// "tool path" or a line "path" inside "tool ( ... )". Comments are ignored.
func namesTool(gomod, path string) bool {
	inBlock := false
	for line := range strings.Lines(gomod) {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		switch {
		case inBlock && len(f) == 1 && f[0] == ")":
			inBlock = false
		case inBlock && len(f) == 1 && unquote(f[0]) == path:
			return true
		case !inBlock && len(f) == 2 && f[0] == "tool" && f[1] == "(":
			inBlock = true
		case !inBlock && len(f) == 2 && f[0] == "tool" && unquote(f[1]) == path:
			return true
		}
	}
	return false
}

// unquote removes the quotes go.mod allows around a path.
func unquote(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return s
}
