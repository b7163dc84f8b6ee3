package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
)

// TestUsageErrorsExit2: every kind of command-line mistake, on every command, exits 2
// with the message and the command's usage on stderr, prints nothing on stdout, and
// never reaches the database (DATABASE_URL is empty, so a command that tried to connect
// would say "no database" instead of the message wanted).
func TestUsageErrorsExit2(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	type usageCase struct {
		args []string
		want string // in the message
	}
	cases := []usageCase{
		{nil, "jobc: missing command"},
		{[]string{"bogus"}, `jobc: unknown command "bogus"`},
		{[]string{"--bogus"}, "unknown flag: --bogus"},
		{[]string{"jobs"}, "jobc jobs: missing command"},
		{[]string{"jobs", "retyr", "13"}, `jobc jobs: unknown command "retyr"`},
		{[]string{"migrate"}, "jobc migrate: missing command"},
		{[]string{"migrate", "sideways"}, `unknown command "sideways"`},
		{[]string{"jobs", "retry"}, "give job ids or at least one filter"},
		{[]string{"jobs", "retry", "x1"}, `"x1" is not a job id`},
		{[]string{"jobs", "retry", "13", "--kind", "k"}, "job ids or filters, not both"},
		{[]string{"jobs", "retry", "--state", "running"}, "retry takes --state failed, cancelled or scheduled"},
		{[]string{"jobs", "retry", "--since", "yesterday"}, `invalid argument "yesterday" for "--since"`},
		{[]string{"jobs", "delete"}, "give job ids or at least one filter"},
		{[]string{"jobs", "delete", "0"}, `"0" is not a job id`},
		{[]string{"jobs", "delete", "--state", "sleeping"}, "unknown state"},
		{[]string{"jobs", "list", "--state", "sleeping"}, "unknown state"},
		{[]string{"jobs", "list", "extra"}, `unknown command "extra" for "jobc jobs list"`},
		{[]string{"jobs", "list", "--limit", "ten"}, `invalid argument "ten" for "--limit"`},
		{[]string{"jobs", "list", "--limit", "0"}, "--limit must be between 1 and 10000"},
		{[]string{"jobs", "list", "--after", "-3"}, "--after must be a job id"},
		{[]string{"jobs", "show"}, "accepts 1 arg(s), received 0"},
		{[]string{"jobs", "show", "x1"}, `"x1" is not a job id`},
		{[]string{"jobs", "cancel"}, "accepts 1 arg(s), received 0"},
		{[]string{"jobs", "cancel", "1", "2"}, "accepts 1 arg(s), received 2"},
		{[]string{"queues", "extra"}, `unknown command "extra" for "jobc queues"`},
		{[]string{"queues", "pause"}, "accepts 1 arg(s), received 0"},
		{[]string{"queues", "pause", ""}, "queue name is empty"},
		{[]string{"queues", "resume"}, "accepts 1 arg(s), received 0"},
		{[]string{"queues", "--json=maybe"}, `invalid argument "maybe" for "--json"`},
		{[]string{"limits", "extra"}, `unknown command "extra" for "jobc limits"`},
		{[]string{"limits", "set", "kind"}, "accepts 2 arg(s), received 1"},
		{[]string{"limits", "set", "job", "send_email", "--concurrency", "2"}, `"job" is not a scope: want kind or queue`},
		{[]string{"limits", "set", "kind", "", "--concurrency", "2"}, "the kind name is empty"},
		{[]string{"limits", "set", "kind", "send_email"}, "nothing to set: give --concurrency, --rate or both"},
		{[]string{"limits", "set", "kind", "send_email", "--concurrency", "0"}, "--concurrency 0: want at least 1"},
		{[]string{"limits", "set", "kind", "send_email", "--concurrency", "two"}, `invalid argument "two" for "--concurrency"`},
		{[]string{"limits", "set", "queue", "email", "--rate", "100"}, `--rate "100": want LIMIT/PERIOD, such as 100/1m`},
		{[]string{"limits", "set", "queue", "email", "--rate", "100/soon"}, `"soon" is not a positive duration`},
		{[]string{"limits", "set", "queue", "email", "--rate", "0/1m"}, `"0" is not a count of at least 1`},
		{[]string{"limits", "reset", "queue"}, "accepts 2 arg(s), received 1"},
		{[]string{"limits", "reset", "kinds", "send_email"}, `"kinds" is not a scope`},
		{[]string{"workers", "extra"}, `unknown command "extra" for "jobc workers"`},
		{[]string{"workers", "--live-within", "soon"}, `invalid argument "soon" for "--live-within"`},
		{[]string{"status", "--fail-oldest", "old"}, `invalid argument "old" for "--fail-oldest"`},
		{[]string{"status", "extra"}, `unknown command "extra" for "jobc status"`},
		{[]string{"bench", "--jobs", "many"}, `invalid argument "many" for "--jobs"`},
		{[]string{"migrate", "up", "extra"}, `unknown command "extra"`},
		{[]string{"migrate", "status", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"migrate", "grants", "--owner", "o"}, "unknown flag: --owner"},
		{[]string{"migrate", "sql", "--from", "0"}, "--from 0: there is no such migration"},
		{[]string{"migrate", "sql", "--from", "99"}, "--from 99: there is no such migration"},
		{[]string{"migrate", "sql", "--start", "3"}, "give --dir too"},
		{[]string{"migrate", "sql", "--dir", "d", "--start", "0"}, "--start must be 1 or more"},
		{[]string{"migrate", "sql", "--from", "one"}, `invalid argument "one" for "--from"`},
	}
	// Every command, including ones added later, rejects an unknown flag and (unless it
	// takes arguments) an extra argument.
	takesArgs := map[string]bool{"jobc jobs retry": true, "jobc jobs delete": true, "jobc jobs show": true, "jobc jobs cancel": true,
		"jobc queues pause": true, "jobc queues resume": true,
		"jobc limits set": true, "jobc limits reset": true}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.DisableFlagParsing {
			return // jobc relay and jobc metrics pass every argument on (TestServerDispatch)
		}
		path := strings.Fields(c.CommandPath())[1:]
		cases = append(cases, usageCase{append(append([]string{}, path...), "--no-such-flag"), "unknown flag: --no-such-flag"})
		if c.Runnable() && !c.HasSubCommands() && !takesArgs[c.CommandPath()] {
			cases = append(cases, usageCase{append(append([]string{}, path...), "surplus"), `"surplus"`})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot())
	for _, c := range cases {
		out, errOut, code := jobc(t, c.args...)
		if code != cli.ExitUsage || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "sage:") || out != "" {
			t.Errorf("jobc %s: exit %d, stdout %q, stderr:\n%s\nwant exit 2 with %q and the usage", strings.Join(c.args, " "), code, out, errOut, c.want)
		}
	}
	// Help is not a mistake: it goes to stdout and exits 0.
	for _, args := range [][]string{{"--help"}, {"help", "jobs"}, {"jobs", "retry", "--help"}} {
		if out, errOut, code := jobc(t, args...); code != cli.ExitOK || !strings.Contains(out, "Usage:") {
			t.Errorf("jobc %s: exit %d, stdout %q, stderr %q; want the help and exit 0", strings.Join(args, " "), code, out, errOut)
		}
	}
}

// TestHelpNamesTheCommand: a command's long help that starts with its subject starts
// with the command line a user types ("jobc ui serves ..."), never with the command's
// name turned into a word of English ("Ui serves ..."), on every command, including
// ones added later.
func TestHelpNamesTheCommand(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		first, _, _ := strings.Cut(c.Long, " ")
		if strings.EqualFold(first, c.Name()) {
			t.Errorf("%s --help starts %q: say %q", c.CommandPath(), first, c.CommandPath())
		}
		if first == "jobc" && !strings.HasPrefix(c.Long, c.CommandPath()+" ") {
			t.Errorf("%s --help starts with another command: %.40q", c.CommandPath(), c.Long)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot())
}
