package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
)

// exitNotInstalled is the status of `jobc relay` and `jobc metrics` when their binary
// is not installed: a shell's "command not found".
const exitNotInstalled = 127

// newServerCommand is a command that runs a binary of its own, as git runs git-foo
// for `git foo`: jobc relay runs jobc-relay, jobc metrics runs jobc-metrics. Their
// modules carry the brokers' and Prometheus's client libraries, which a project
// running jobc as a tool for `go generate` should not have to resolve.
func newServerCommand(name, short string) *cobra.Command {
	bin := "jobc-" + name
	return &cobra.Command{
		Use:   name + " [flags]",
		Short: short,
		Long: fmt.Sprintf(`jobc %[1]s runs %[2]s with the same arguments (and -C, when given before "%[1]s"),
and exits with its status: %[2]s is a binary and a module of its own
(%[3]s), so that its dependencies stay out of
the module graph of projects that run jobc as a tool. jobc looks for %[2]s beside its
own executable, then on PATH, then in $GOBIN (or $GOPATH/bin, by default ~/go/bin).
When it is not installed, jobc %[1]s says how to install it and exits %[4]d.
'jobc %[1]s --help' shows %[2]s's own help.`, name, bin, serverModule(bin), exitNotInstalled),
		// Every argument, flags and --help included, is the server's.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			path, looked := findServer(bin)
			if path == "" {
				return &cli.ExitError{Code: exitNotInstalled, Err: fmt.Errorf("jobc %s: %s is not installed (looked in %s): install it with `go install %s@%s`",
					name, bin, strings.Join(looked, ", "), serverModule(bin), ownVersion())}
			}
			c := exec.CommandContext(cmd.Context(), path, args...)
			c.Stdin, c.Stdout, c.Stderr = os.Stdin, cmd.OutOrStdout(), cmd.ErrOrStderr()
			// SIGINT or SIGTERM to jobc asks the server to stop as either would: it
			// finishes what is in flight, however long that takes.
			c.Cancel = func() error { return c.Process.Signal(os.Interrupt) }
			err := c.Run()
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.ExitCode() >= 0 {
				return &cli.ExitError{Code: ee.ExitCode()} // the server said why
			}
			if err != nil {
				return fmt.Errorf("jobc %s: %s: %w", name, path, err)
			}
			return nil
		},
	}
}

// serverModule is the module (and package) of a server binary.
func serverModule(bin string) string { return "github.com/jobc-dev/jobc/cmd/" + bin }

// findServer returns the path of the executable bin, or "" and the places it looked.
func findServer(bin string) (path string, looked []string) {
	var dirs []string
	if exe, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Dir(exe))
	}
	for _, d := range dirs {
		if p := filepath.Join(d, bin); isExecutable(p) {
			return p, nil
		}
	}
	looked = append(looked, dirs...)
	if p, err := exec.LookPath(bin); err == nil {
		return p, nil
	}
	looked = append(looked, "PATH")
	gobin := os.Getenv("GOBIN")
	if gobin == "" {
		gopath := filepath.SplitList(os.Getenv("GOPATH"))
		if len(gopath) > 0 && gopath[0] != "" {
			gobin = filepath.Join(gopath[0], "bin")
		} else if home, err := os.UserHomeDir(); err == nil {
			gobin = filepath.Join(home, "go", "bin")
		}
	}
	if gobin != "" {
		if p := filepath.Join(gobin, bin); isExecutable(p) {
			return p, nil
		}
		looked = append(looked, gobin)
	}
	return "", looked
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// ownVersion is the version of jobc's module this binary was built from, for the
// server to match it; "latest" when it was built from a checkout.
func ownVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "latest"
	}
	const self = "github.com/jobc-dev/jobc/cmd/jobc"
	mods := append([]*debug.Module{&bi.Main}, bi.Deps...)
	for _, m := range mods {
		if m.Path == self && m.Version != "" && m.Version != "(devel)" {
			return m.Version
		}
	}
	return "latest"
}
