package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// Exit statuses are a contract scripts rely on (documented in docs/cli.md):
const (
	exitOK      = 0 // the command did what was asked
	exitFailure = 1 // a finding (diff, vet, check, --fail-*) or a failure (database, bad job)
	exitUsage   = 2 // the command line is wrong: nothing ran
)

// usageError is a mistake on the command line: exit status 2, with the usage of the
// command it concerns printed after the message.
type usageError struct {
	cmd *cobra.Command
	err error
}

// Error names the command once: a runtime error's own "jobc: " prefix is dropped.
func (e *usageError) Error() string {
	return e.cmd.CommandPath() + ": " + strings.TrimPrefix(e.err.Error(), "jobc: ")
}
func (e *usageError) Unwrap() error { return e.err }

// usagef returns a usage error of cmd.
func usagef(cmd *cobra.Command, format string, a ...any) error {
	return &usageError{cmd: cmd, err: fmt.Errorf(format, a...)}
}

// asUsage turns err into a usage error of cmd unless it already carries an exit status.
func asUsage(cmd *cobra.Command, err error) error {
	if err == nil {
		return nil
	}
	var ue *usageError
	var ee *exitError
	if errors.As(err, &ue) || errors.As(err, &ee) {
		return err
	}
	return &usageError{cmd: cmd, err: err}
}

// enforceUsage makes every command in the tree below c report command-line mistakes as
// usage errors: cobra's own argument checks and flag errors return plain errors (exit
// 1), and a command group invoked without or with an unknown subcommand prints its
// help and succeeds, so a script calling `jobc jobs retyr 13` would think it worked.
// It runs once, after the tree is built, so a new command gets it without doing
// anything.
func enforceUsage(c *cobra.Command) {
	if c.HasSubCommands() && !c.Runnable() {
		c.Args = cobra.ArbitraryArgs // checked below, where the message can name the command
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef(cmd, "missing command")
			}
			return usagef(cmd, "unknown command %q", args[0])
		}
	}
	if c.Args == nil {
		c.Args = cobra.ArbitraryArgs
	}
	validate := c.Args
	c.Args = func(cmd *cobra.Command, args []string) error { return asUsage(cmd, validate(cmd, args)) }
	if !c.HasParent() {
		// Inherited by every command that sets none of its own.
		c.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return asUsage(cmd, err) })
	}
	for _, sub := range c.Commands() {
		enforceUsage(sub)
	}
}
