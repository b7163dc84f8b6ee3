package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/generator/contract"
)

// initConfig is the jobc.yaml init writes, after the modeline (see modeline).
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
overwrites a file. jobc.yaml starts with a modeline naming the JSON Schema of jobc.yaml
(jobc.schema.json in jobc's repository), so that editors with a YAML language server
complete and check the spec.`,
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
			if err := os.WriteFile(cfg, []byte(modeline(rootVersion())+initConfig), 0o644); err != nil {
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

// modulePath is jobc's root module: the spec language, its JSON Schema included.
const modulePath = "github.com/jobc-dev/jobc"

// schemaFile is the JSON Schema of jobc.yaml, at the root of jobc's repository.
const schemaFile = "jobc.schema.json"

// modeline is the first line of the jobc.yaml init writes: it names the JSON Schema of
// jobc.yaml, through which YAML language servers complete and check the spec.
func modeline(version string) string {
	return "# yaml-language-server: $schema=" + schemaURL(version) + "\n"
}

// schemaURL is where an editor reads the JSON Schema for the jobc of root module
// version version: the raw file in the repository at that release's tag, which stays
// the schema of the language that release reads whatever later releases add; at main
// for a build that is not a release (a development tree, a pseudo-version), which has
// no tag.
func schemaURL(version string) string {
	ref := "main"
	if releaseVersion.MatchString(version) {
		ref = version
	}
	return "https://raw.githubusercontent.com/jobc-dev/jobc/" + ref + "/" + schemaFile
}

// releaseVersion matches a release tag, v1.2.3 or v1.2.3-rc.1; a pseudo-version
// (v1.2.4-0.20240501093000-abcdef123456) has a second hyphen and does not match.
var releaseVersion = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$`)

// rootVersion returns the version of jobc's root module this binary was built with:
// "" when it is replaced (a development tree) or the build has no module information.
func rootVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	if info.Main.Path == modulePath {
		return info.Main.Version
	}
	for _, d := range info.Deps {
		if d.Path == modulePath && d.Replace == nil {
			return d.Version
		}
	}
	return ""
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
