package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// Exit statuses are a contract scripts rely on (documented in docs/cli.md):
const (
	ExitOK      = 0 // the command did what was asked
	ExitFailure = 1 // a finding (diff, vet, check, --fail-*) or a failure (database, bad job)
	ExitUsage   = 2 // the command line is wrong: nothing ran
)

// UsageError is a mistake on the command line: exit status 2, with the usage of the
// command it concerns printed after the message.
type UsageError struct {
	cmd *cobra.Command
	err error
}

// Error names the command once: a runtime error's own "jobc: " prefix is dropped.
func (e *UsageError) Error() string {
	return e.cmd.CommandPath() + ": " + strings.TrimPrefix(e.err.Error(), "jobc: ")
}
func (e *UsageError) Unwrap() error { return e.err }

// Usagef returns a usage error of cmd.
func Usagef(cmd *cobra.Command, format string, a ...any) error {
	return &UsageError{cmd: cmd, err: fmt.Errorf(format, a...)}
}

// AsUsage turns err into a usage error of cmd unless it already carries an exit status.
func AsUsage(cmd *cobra.Command, err error) error {
	if err == nil {
		return nil
	}
	var ue *UsageError
	var ec exitCoder
	if errors.As(err, &ue) || errors.As(err, &ec) {
		return err
	}
	return &UsageError{cmd: cmd, err: err}
}

// EnforceUsage makes every command in the tree below c report command-line mistakes as
// usage errors: cobra's own argument checks and flag errors return plain errors (exit
// 1), and a command group invoked without or with an unknown subcommand prints its
// help and succeeds, so a script calling `jobc jobs retyr 13` would think it worked.
// It runs once, after the tree is built, so a new command gets it without doing
// anything.
func EnforceUsage(c *cobra.Command) {
	if c.HasSubCommands() && !c.Runnable() {
		c.Args = cobra.ArbitraryArgs // checked below, where the message can name the command
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return Usagef(cmd, "missing command")
			}
			return Usagef(cmd, "unknown command %q", args[0])
		}
	}
	if c.Args == nil {
		c.Args = cobra.ArbitraryArgs
	}
	validate := c.Args
	c.Args = func(cmd *cobra.Command, args []string) error { return AsUsage(cmd, validate(cmd, args)) }
	if !c.HasParent() {
		// Inherited by every command that sets none of its own.
		c.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return AsUsage(cmd, err) })
	}
	for _, sub := range c.Commands() {
		EnforceUsage(sub)
	}
}
