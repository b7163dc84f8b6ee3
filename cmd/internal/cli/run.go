package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// NewRoot returns the root command "jobc" with the flags every command shares: -C,
// the project directory, into dir. The servers' binaries build the same root with
// their one command under it, so that `jobc-relay --to URL` and `jobc relay --to URL`
// say the same things.
func NewRoot(short string, dir *string) *cobra.Command {
	root := &cobra.Command{
		Use:           "jobc",
		Short:         short,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVarP(dir, "dir", "C", ".", "project directory (where jobc.yaml is)")
	return root
}

// Run executes the command line args on root (after EnforceUsage) and returns the exit
// status: 0 ok, 1 a finding or a failure, 2 a usage error (with the command's usage on
// stderr), or the status an error carries (ExitError).
func Run(ctx context.Context, root *cobra.Command, args []string, stdout, stderr io.Writer) int {
	EnforceUsage(root)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) && ee.Err == nil {
		return ee.Code // said already, by whoever chose the status
	}
	fmt.Fprintln(stderr, Message(err))
	var ue *UsageError
	if errors.As(err, &ue) {
		fmt.Fprint(stderr, "\n"+ue.cmd.UsageString())
	}
	return ExitCode(err)
}

// Message is err's text with the command prefix said once: the runtime's errors start
// with "jobc: " and the CLI's with "jobc: " or the command line ("jobc relay: "), so
// wrapping one in another ("jobc: retry job 5: jobc: job not found", "jobc relay:
// jobc relay: ...") would repeat it. Every such prefix after the first is dropped.
func Message(err error) string {
	segs := strings.Split(err.Error(), ": ")
	out := segs[:1]
	for _, s := range segs[1:] {
		if !IsCommandPrefix(s) {
			out = append(out, s)
		}
	}
	return strings.Join(out, ": ")
}

// IsCommandPrefix reports whether s is "jobc" or a jobc command line ("jobc relay",
// "jobc migrate grants"): lower-case words after "jobc", nothing else.
func IsCommandPrefix(s string) bool {
	words := strings.Split(s, " ")
	if words[0] != "jobc" {
		return false
	}
	for _, w := range words[1:] {
		if w == "" || strings.TrimFunc(w, func(r rune) bool { return r >= 'a' && r <= 'z' || r == '-' }) != "" {
			return false
		}
	}
	return true
}

// ExitError carries a specific exit status (1 is the default for any error). With a
// nil Err, Run prints nothing: the status is all there is to say.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}
func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode returns the status.
func (e *ExitError) ExitCode() int { return e.Code }

// exitCoder is an error that chooses its exit status: ExitError, and the errors of
// commands that keep a type of their own.
type exitCoder interface {
	error
	ExitCode() int
}

// ExitCode is the exit status of err: 2 for a usage error, the status an error
// chooses, 1 otherwise.
func ExitCode(err error) int {
	var ue *UsageError
	if errors.As(err, &ue) {
		return ExitUsage
	}
	var ec exitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return ExitFailure
}

// Truncate shortens s to n runes, the last an ellipsis.
func Truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// Main is the main function of a server binary that is one jobc command (jobc-relay
// is `jobc relay`): it runs command with the process's arguments on the root newRoot
// makes, until SIGINT or SIGTERM cancels its context, and exits with Run's status.
func Main(command string, newRoot func() *cobra.Command) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, newRoot(), append([]string{command}, os.Args[1:]...), os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
