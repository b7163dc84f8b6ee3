package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// asURL returns the connection string cs, a URL or keyword/value pairs (a throwaway
// cluster's is the latter, with a Unix socket), as a URL with the same target, user,
// password, database and run-time parameters, so that tests can change its parts.
func asURL(t *testing.T, cs string) string {
	t.Helper()
	cfg, err := pgconn.ParseConfig(cs)
	if err != nil {
		t.Fatal(err)
	}
	u := &url.URL{Scheme: "postgres", User: url.User(cfg.User), Path: "/" + cfg.Database}
	if cfg.Password != "" {
		u.User = url.UserPassword(cfg.User, cfg.Password)
	}
	q := url.Values{}
	if strings.HasPrefix(cfg.Host, "/") {
		q.Set("host", cfg.Host)
		q.Set("port", strconv.Itoa(int(cfg.Port)))
	} else {
		u.Host = net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	}
	if cfg.TLSConfig == nil {
		q.Set("sslmode", "disable")
	}
	var opts []string
	for k, v := range cfg.RuntimeParams {
		if k == "options" {
			opts = append(opts, v)
		} else {
			opts = append(opts, "-c "+k+"="+v)
		}
	}
	sort.Strings(opts)
	if len(opts) > 0 {
		q.Set("options", strings.Join(opts, " "))
	}
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
	return u.String()
}

// withOption returns the connection string u as a URL with opt added to its options
// parameter.
func withOption(t *testing.T, u, opt string) string {
	t.Helper()
	parsed, err := url.Parse(asURL(t, u))
	if err != nil {
		t.Fatal(err)
	}
	q := parsed.Query()
	q.Set("options", strings.TrimSpace(q.Get("options")+" "+opt))
	// pgx does not decode '+' as a space; Encode writes a space as '+' and a '+' as %2B.
	parsed.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
	return parsed.String()
}

// offlineCommands read and write files only, and groupCommands only hold others. Every
// other command opens the database: a new command is one of them unless it is added
// here.
var (
	offlineCommands = map[string]bool{
		"jobc init": true, "jobc generate": true, "jobc diff": true, "jobc vet": true, "jobc check": true, "jobc lock": true,
		"jobc migrate sql": true, // prints SQL, reads no database
	}
	groupCommands = map[string]bool{"jobc": true, "jobc jobs": true, "jobc migrate": true}
)

// dbCommandArgs are the arguments a database command needs to get past its own
// argument checks, up to where it opens the database.
var dbCommandArgs = map[string][]string{
	"jobc jobs show":        {"1"},
	"jobc workflows show":   {"1"},
	"jobc workflows cancel": {"1"},
	"jobc workflows retry":  {"1"},
	"jobc jobs cancel":      {"1"},
	"jobc jobs retry":       {"1", "2"},
	"jobc jobs delete":      {"1", "2"},
	"jobc queues pause":     {"q"},
	"jobc queues resume":    {"q"},
	"jobc limits set":       {"kind", "k", "--concurrency", "2"},
	"jobc limits reset":     {"kind", "k"},
	"jobc migrate grants":   {"--worker", "w", "--readonly", "r"},
	"jobc ui":               {"--addr", "127.0.0.1:0"},
}

// ownDBSetup are the database commands that open the database their own way rather than
// through dbFlags: none today. A command added here is left out of the tests below.
var ownDBSetup = map[string]bool{}

// dbCommand is a database command and the command line that runs it.
type dbCommand struct {
	path string   // "jobc jobs list"
	args []string // without the database flags
}

// dbCommands lists every database command of the tree, so that none is left out of the
// tests below, including ones added later.
func dbCommands(t *testing.T) []dbCommand {
	t.Helper()
	var out []dbCommand
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.DisableFlagParsing {
			return // jobc relay and jobc metrics run binaries of their own, whose tests check them
		}
		if path := c.CommandPath(); c.Runnable() && !offlineCommands[path] && !groupCommands[path] {
			out = append(out, dbCommand{path: path, args: append(strings.Fields(path)[1:], dbCommandArgs[path]...)})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot())
	if len(out) < 15 {
		t.Fatalf("found %d database commands: %v", len(out), out)
	}
	return out
}

// TestMissingDatabaseURLIsUsageError: every database command without --database-url
// and $DATABASE_URL exits 2, naming both, with its usage, and prints nothing on stdout.
// Every one of them has the timeout flags, with the defaults the README states.
func TestMissingDatabaseURLIsUsageError(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	root := newRoot()
	for _, c := range dbCommands(t) {
		out, errOut, code := jobc(t, c.args...)
		if code != cli.ExitUsage || out != "" || !strings.Contains(errOut, "--database-url") || !strings.Contains(errOut, "DATABASE_URL") ||
			!strings.Contains(errOut, "Usage:") || strings.Count(errOut, "no database") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr:\n%s\nwant exit 2 naming --database-url and $DATABASE_URL, with the usage", c.path, code, out, errOut)
		}
		if ownDBSetup[c.path] {
			continue
		}
		cmd, _, err := root.Find(strings.Fields(c.path)[1:])
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"connect-timeout": "10s", "statement-timeout": "30s"}
		if c.path == "jobc migrate up" {
			want["statement-timeout"] = "10m0s"
		}
		for name, def := range want {
			f := cmd.Flags().Lookup(name)
			if f == nil {
				f = cmd.PersistentFlags().Lookup(name)
			}
			if f == nil {
				f = cmd.InheritedFlags().Lookup(name)
			}
			if f == nil || f.DefValue != def {
				t.Errorf("%s --%s: %+v, want the default %s", c.path, name, f, def)
			}
		}
	}
	// A value that is not a duration, or a negative one, is a usage error too.
	for _, args := range [][]string{{"status", "--connect-timeout", "-1s", "--database-url", "postgres://x@127.0.0.1:1/x"},
		{"workers", "--statement-timeout", "soon", "--database-url", "postgres://x@127.0.0.1:1/x"},
		{"queues", "--database-url", "postgres://x:s3cret@127.0.0.1:1/x?connect_timeout=never"}} {
		if _, errOut, code := jobc(t, args...); code != cli.ExitUsage || strings.Contains(errOut, "s3cret") {
			t.Errorf("jobc %s: exit %d: %s; want exit 2 (and no password)", strings.Join(args, " "), code, errOut)
		}
	}
}

// silentServer accepts TCP connections and never answers, like a server, proxy or
// firewall that has stopped responding. It counts the connections and how many of them
// the client closed.
type silentServer struct {
	ln net.Listener

	mu               sync.Mutex
	accepted, closed int
}

func newSilentServer(t *testing.T) *silentServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &silentServer{ln: ln}
	var wg sync.WaitGroup
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.accepted++
			conns = append(conns, c)
			s.mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = io.Copy(io.Discard, c) // returns when the client closes
				s.mu.Lock()
				s.closed++
				s.mu.Unlock()
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		s.mu.Unlock()
		wg.Wait()
	})
	return s
}

func (s *silentServer) counts() (accepted, closed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted, s.closed
}

// jobcWithin runs the CLI like jobc, cancelled after bound: a command that hangs then
// fails with the cancellation instead of the error the test expects.
func jobcWithin(t *testing.T, bound time.Duration, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), bound)
	defer cancel()
	var out, errOut bytes.Buffer
	code = run(ctx, args, &out, &errOut)
	return out.String(), errOut.String(), code
}

// TestSilentServerTimesOut: against a server that accepts the connection and never
// answers, every database command gives up after the connect timeout, closes the
// connection, exits 1 and says which host did not answer within what, and which
// setting bounds it: the flag, or the connection string's connect_timeout when only
// that is given.
func TestSilentServerTimesOut(t *testing.T) {
	const timeout = 200 * time.Millisecond
	s := newSilentServer(t)
	addr := s.ln.Addr().String()
	silentURL := "postgres://jobc@" + addr + "/silent?sslmode=disable"
	bound := 100 * timeout * slowdown // far beyond the timeout: only a hang reaches it
	ran := 0
	for _, c := range dbCommands(t) {
		if ownDBSetup[c.path] {
			continue
		}
		ran++
		args := append(c.args, "--database-url", silentURL, "--connect-timeout", timeout.String())
		out, errOut, code := jobcWithin(t, bound, args...)
		want := "jobc: cannot reach PostgreSQL at " + addr + "/silent: no answer within 200ms (--connect-timeout): check --database-url"
		if code != cli.ExitFailure || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d, stdout %q, stderr:\n%s\nwant exit 1 with %q", c.path, code, out, errOut, want)
		}
	}
	cases := []struct {
		name, url string
		args      []string
		want      string
	}{
		{"the URL's connect_timeout", silentURL + "&connect_timeout=1", nil, "no answer within 1s (connect_timeout of --database-url)"},
		{"the flag over the URL's", silentURL + "&connect_timeout=600", []string{"--connect-timeout", "200ms"}, "no answer within 200ms (--connect-timeout)"},
	}
	for _, c := range cases {
		ran++
		_, errOut, code := jobcWithin(t, bound, append([]string{"workers", "--database-url", c.url}, c.args...)...)
		if code != cli.ExitFailure || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d: %s; want %q", c.name, code, errOut, c.want)
		}
	}
	ran++
	t.Setenv("DATABASE_URL", silentURL)
	if _, errOut, code := jobcWithin(t, bound, "jobs", "list", "--connect-timeout", "200ms"); code != cli.ExitFailure || !strings.Contains(errOut, "check $DATABASE_URL") {
		t.Errorf("from $DATABASE_URL: exit %d: %s; want the message to name $DATABASE_URL", code, errOut)
	}
	// Each command reached the server and closed what it opened.
	waitFor(t, "the commands to close their connections", bound, func() (bool, string) {
		accepted, closed := s.counts()
		return accepted >= ran && closed == accepted, fmt.Sprintf("accepted %d, closed %d, commands %d", accepted, closed, ran)
	})
}

// TestStatementTimeout: a statement stuck behind a lock fails after the statement
// timeout, with a message naming it and where it came from: the flag, or the
// connection string's own statement_timeout, which the default does not replace.
func TestStatementTimeout(t *testing.T) {
	pool, dbURL := migratedDB(t)
	tx, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.WithoutCancel(t.Context()))
	if _, err := tx.Exec(t.Context(), "LOCK TABLE jobc_jobs IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	withURLTimeout := withOption(t, dbURL, "-c statement_timeout=150")
	roleURL := roleWithStatementTimeout(t, pool, dbURL, "100ms")
	bound := 10 * cli.DefaultStatementTimeout // only a hang reaches it
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"jobs", "list", "--database-url", dbURL, "--statement-timeout", "200ms"}, "statement timeout (200ms, --statement-timeout)"},
		{[]string{"queues", "--database-url", dbURL, "--statement-timeout", "200ms"}, "statement timeout (200ms, --statement-timeout)"},
		{[]string{"status", "--database-url", dbURL, "--statement-timeout", "200ms"}, "statement timeout (200ms, --statement-timeout)"},
		{[]string{"jobs", "list", "--database-url", withURLTimeout}, "statement timeout (150ms, statement_timeout of --database-url)"},
		{[]string{"jobs", "list", "--database-url", withURLTimeout, "--statement-timeout", "250ms"}, "statement timeout (250ms, --statement-timeout)"},
		{[]string{"jobs", "list", "--database-url", roleURL}, "statement timeout (100ms, the statement_timeout of the role, the database or the server)"},
	}
	for _, c := range cases {
		_, errOut, code := jobcWithin(t, bound, c.args...)
		if code != cli.ExitFailure || !strings.Contains(errOut, "canceling statement due to statement timeout") || !strings.Contains(errOut, c.want) ||
			!strings.Contains(errOut, "raise it with --statement-timeout") {
			t.Errorf("jobc %s: exit %d: %s; want exit 1 with %q", strings.Join(c.args, " "), code, errOut, c.want)
		}
	}
}

// TestStatementTimeoutDefault: the default applies where nothing else bounds
// statements, and gives way to the role's own statement_timeout; the flag replaces
// both.
func TestStatementTimeoutDefault(t *testing.T) {
	pool, dbURL := migratedDB(t)
	roleURL := roleWithStatementTimeout(t, pool, dbURL, "45s")
	cases := []struct {
		url  string
		args []string
		want string
	}{
		{dbURL, nil, "30s"},
		{dbURL, []string{"--statement-timeout", "0"}, "0"},
		{roleURL, nil, "45s"},
		{roleURL, []string{"--statement-timeout", "5s"}, "5s"},
		{withOption(t, dbURL, "-c statement_timeout=0"), nil, "0"},
	}
	for _, c := range cases {
		cmd := &cobra.Command{Use: "probe", RunE: func(*cobra.Command, []string) error { return nil }}
		dbf := cli.AddDBFlags(cmd.Flags(), cli.DefaultStatementTimeout)
		if err := cmd.Flags().Parse(append([]string{"--database-url", c.url}, c.args...)); err != nil {
			t.Fatal(err)
		}
		cmd.SetContext(t.Context())
		var got string
		err := cli.WithConn(cmd, dbf, func(ctx context.Context, db runtime.DBTX) error {
			return db.QueryRow(ctx, "SHOW statement_timeout").Scan(&got)
		})
		if err != nil || got != c.want {
			t.Errorf("%v on %s: statement_timeout %q, %v; want %q", c.args, c.url, got, err, c.want)
		}
	}
}

// roleWithStatementTimeout creates a role whose own statement_timeout is d, for this
// test only, and returns dbURL with that role as the user.
func roleWithStatementTimeout(t *testing.T, pool *pgxpool.Pool, dbURL, d string) string {
	t.Helper()
	role := "jobc_cli_" + pgtest.SchemaOf(pool)
	if _, err := pool.Exec(t.Context(), "CREATE ROLE "+role+" LOGIN SUPERUSER; ALTER ROLE "+role+" SET statement_timeout = '"+d+"'"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := pool.Exec(context.WithoutCancel(t.Context()), "DROP ROLE "+role); err != nil {
			t.Errorf("drop role %s: %v", role, err)
		}
	})
	u, err := url.Parse(asURL(t, dbURL))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	return u.String()
}

// TestUnmigratedDatabaseSaysMigrateUp: every database command against a schema without
// jobc's tables says what is missing, how far the database is migrated and to run
// `jobc migrate up`, naming the database without the password, on one line.
func TestUnmigratedDatabaseSaysMigrateUp(t *testing.T) {
	empty := pgtest.NewSchema(t, nil)
	u, err := url.Parse(asURL(t, pgtest.SchemaConnString(t, pgtest.SchemaOf(empty))))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "s3cret") // trust auth: never asked for
	emptyURL := u.String()
	cfg, err := pgconn.ParseConfig(emptyURL)
	if err != nil {
		t.Fatal(err)
	}
	where := cli.DescribeTarget(cfg)
	skip := map[string]string{
		"jobc migrate up": "it is the remedy",
		"jobc bench":      "it migrates a schema of its own",
	}
	for _, c := range dbCommands(t) {
		if ownDBSetup[c.path] || skip[c.path] != "" {
			continue
		}
		out, errOut, code := jobcWithin(t, 10*cli.DefaultStatementTimeout, append(c.args, "--database-url", emptyURL)...)
		want, wantCode := []string{"run `jobc migrate up`", "--database-url points at " + where, "has 0 of the"}, cli.ExitFailure
		switch c.path {
		case "jobc migrate status":
			want, wantCode = []string{"run `jobc migrate up`", "pending"}, 3
		case "jobc migrate grants":
			want = []string{"run `jobc migrate up`", "table jobc_jobs is not on the search_path"}
		}
		lines := strings.Count(strings.TrimSpace(errOut), "\n") + 1
		for _, w := range want {
			if code != wantCode || !strings.Contains(errOut, w) || strings.Contains(errOut, "s3cret") || lines != 1 {
				t.Errorf("%s: exit %d, stdout %q, stderr:\n%s\nwant exit %d and one line with %q, without the password", c.path, code, out, errOut, wantCode, w)
				break
			}
		}
	}
	// Behind the binary rather than empty: the missing function is named, with how
	// many migrations the database has.
	pool, dbURL := migratedDB(t)
	if _, err := pool.Exec(t.Context(), "DELETE FROM jobc_migrations WHERE version = (SELECT max(version) FROM jobc_migrations); DROP FUNCTION jobc_selected"); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := jobc(t, "jobs", "list", "--database-url", dbURL)
	if code != cli.ExitFailure || !strings.Contains(errOut, "function jobc_selected(") || !strings.Contains(errOut, "migrations this binary needs: run `jobc migrate up`") {
		t.Errorf("jobs list on a database one migration behind: exit %d: %s", code, errOut)
	}
}

// TestRetryNotFoundSaysJobcOnce: an error wrapped in another prints "jobc: " once.
func TestRetryNotFoundSaysJobcOnce(t *testing.T) {
	_, dbURL := migratedDB(t)
	for _, verb := range []string{"retry", "delete"} {
		_, errOut, code := jobc(t, "jobs", verb, "999999", "--database-url", dbURL)
		if code != cli.ExitFailure || strings.Count(errOut, "jobc: ") != 2 || !strings.Contains(errOut, "jobc: "+verb+" job 999999: job not found") {
			t.Errorf("jobs %s 999999: exit %d:\n%s\nwant one \"jobc: \" a line", verb, code, errOut)
		}
	}
	for in, want := range map[string]string{
		"jobc: a: jobc: b: jobc: c":                   "jobc: a: b: c",
		"jobc relay: jobc relay: x":                   "jobc relay: x",
		"jobc relay: jobc: x: jobc relay retry: y":    "jobc relay: x: y",
		"jobc migrate grants: jobc migrate grants: z": "jobc migrate grants: z",
		"jobc relay: jobcnats: x":                     "jobc relay: jobcnats: x",
		"jobc: run `jobc migrate up`: jobc: x":        "jobc: run `jobc migrate up`: x",
		"jobc ui: a: jobc Ui: b":                      "jobc ui: a: jobc Ui: b",
	} {
		if got := cli.Message(errors.New(in)); got != want {
			t.Errorf("cli.Message(%q) = %q, want %q", in, got, want)
		}
	}
}
