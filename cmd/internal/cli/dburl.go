package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jobc-dev/jobc/runtime"
)

// Every command that opens the database bounds how long it waits for the server, so
// that a server (or a proxy, or a firewall) that accepts the connection and never
// answers, or a statement stuck behind a lock, fails the command instead of hanging it.
const (
	// DefaultConnectTimeout bounds opening one connection: TCP, TLS, authentication and
	// the session setup, per host of the connection string.
	DefaultConnectTimeout = 10 * time.Second
	// DefaultStatementTimeout bounds each statement, not a command: `jobc relay`,
	// `jobc metrics` and `jobc ui` run until stopped, each of their statements bounded.
	DefaultStatementTimeout = 30 * time.Second
	// MigrateStatementTimeout is the default of `jobc migrate up`, whose statements may
	// build an index or validate a constraint over the whole jobs table, and which waits
	// on purpose while another process applies a migration.
	MigrateStatementTimeout = 10 * time.Minute
)

// DBFlags are the flags of every command that opens the database. A command registers
// them with AddDBFlags and opens the database with WithConn or DBTarget.Pool, which read
// them through Target: one rule for a missing URL, one place for the timeouts.
type DBFlags struct {
	url              string
	connectTimeout   time.Duration
	statementTimeout time.Duration
	// The flags themselves, to tell a value given on the command line from the default:
	// a connection string's own timeouts give way to the former only.
	connectFlag, statementFlag *pflag.Flag
}

// AddDBFlags registers --database-url, --connect-timeout and --statement-timeout on fs
// (a command's flags, or a command group's persistent flags).
func AddDBFlags(fs *pflag.FlagSet, statementTimeout time.Duration) *DBFlags {
	f := &DBFlags{}
	fs.StringVar(&f.url, "database-url", "", "PostgreSQL connection string (default $DATABASE_URL)")
	fs.DurationVar(&f.connectTimeout, "connect-timeout", DefaultConnectTimeout,
		"give up opening a connection after this long (0: never); overrides connect_timeout in the connection string")
	fs.DurationVar(&f.statementTimeout, "statement-timeout", statementTimeout,
		"cancel any statement running longer than this (0: never); by default a statement_timeout the connection string or the server sets is kept")
	f.connectFlag, f.statementFlag = fs.Lookup("connect-timeout"), fs.Lookup("statement-timeout")
	return f
}

// DBTarget is the database a command runs against, resolved from its flags and the
// environment.
type DBTarget struct {
	url    string
	source string // where url came from, for messages: "--database-url" or "$DATABASE_URL"
	where  string // host:port/database, no user or password: safe to print

	connectTimeout   time.Duration
	connectFromURL   bool // the connection string's connect_timeout applies
	statementTimeout time.Duration
	statementForced  bool                             // --statement-timeout was given: it replaces any other
	statementFromURL bool                             // the connection string sets statement_timeout: keep it
	statementInForce atomic.Pointer[statementTimeout] // of the last connection opened
}

// Target resolves the database of cmd. A missing or unparseable URL and a negative
// timeout are usage errors (exit 2): nothing has run yet.
func (f *DBFlags) Target(cmd *cobra.Command) (*DBTarget, error) {
	t := &DBTarget{url: f.url, source: "--database-url"}
	if t.url == "" {
		t.url, t.source = os.Getenv("DATABASE_URL"), "$DATABASE_URL"
	}
	if t.url == "" {
		return nil, Usagef(cmd, "no database: pass --database-url or set $DATABASE_URL")
	}
	if f.connectTimeout < 0 || f.statementTimeout < 0 {
		return nil, Usagef(cmd, "--connect-timeout and --statement-timeout must not be negative (0: no bound)")
	}
	cfg, err := pgconn.ParseConfig(t.url)
	if err != nil {
		// pgconn's message shows the connection string with its password redacted.
		return nil, Usagef(cmd, "%s: %v", t.source, err)
	}
	t.where = DescribeTarget(cfg)
	t.connectTimeout = f.connectTimeout
	if !f.connectFlag.Changed && cfg.ConnectTimeout > 0 {
		t.connectTimeout, t.connectFromURL = cfg.ConnectTimeout, true
	}
	t.statementTimeout, t.statementForced = f.statementTimeout, f.statementFlag.Changed
	t.statementFromURL = setsStatementTimeout(cfg.RuntimeParams)
	return t, nil
}

// setsStatementTimeout reports whether a connection string's parameters (including
// PGOPTIONS, which pgconn reads into options) set statement_timeout, as a parameter of
// its own or as "-c statement_timeout=..." in options.
func setsStatementTimeout(params map[string]string) bool {
	if _, ok := params["statement_timeout"]; ok {
		return true
	}
	opts := params["options"]
	return strings.Contains(opts, "statement_timeout") || strings.Contains(opts, "statement-timeout")
}

// DescribeTarget names the hosts and the database of cfg, without credentials.
func DescribeTarget(cfg *pgconn.Config) string {
	hosts := []string{hostPort(cfg.Host, cfg.Port)}
	for _, fb := range cfg.Fallbacks {
		if hp := hostPort(fb.Host, fb.Port); hp != hosts[len(hosts)-1] { // TLS fallbacks repeat the host
			hosts = append(hosts, hp)
		}
	}
	return strings.Join(hosts, ",") + "/" + cfg.Database
}

func hostPort(host string, port uint16) string {
	if strings.HasPrefix(host, "/") { // a Unix socket's directory
		return host + "/.s.PGSQL." + strconv.Itoa(int(port))
	}
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// Configure applies the timeouts to a connection's configuration.
func (t *DBTarget) Configure(c *pgconn.Config) {
	if !t.connectFromURL {
		c.ConnectTimeout = t.connectTimeout
		c.DialFunc = (&net.Dialer{Timeout: t.connectTimeout}).DialContext
	}
	// The statement timeout is set after the connection is open rather than as a startup
	// parameter: that way the default replaces none that the role, the database or the
	// server configure, and the query that sets it is bounded by the connect timeout, so
	// a server that authenticates and then stops answering is caught there too.
	ms := strconv.FormatInt(max(t.statementTimeout.Milliseconds(), 0), 10)
	if t.statementTimeout > 0 && t.statementTimeout < time.Millisecond {
		ms = "1" // the server counts milliseconds; 0 would mean no bound
	}
	// Each query returns the statement_timeout in force and whether it is the flag's.
	query := "SELECT current_setting('statement_timeout'), false"
	switch {
	case t.statementForced:
		query = "SELECT set_config('statement_timeout', '" + ms + "', false), true"
	case !t.statementFromURL:
		query = "SELECT CASE WHEN s = '0' THEN set_config('statement_timeout', '" + ms + "', false) ELSE s END, s = '0'" +
			" FROM current_setting('statement_timeout') AS s"
	}
	next := c.AfterConnect
	c.AfterConnect = func(ctx context.Context, pc *pgconn.PgConn) error {
		if next != nil {
			if err := next(ctx, pc); err != nil {
				return err
			}
		}
		res := pc.ExecParams(ctx, query, nil, nil, nil, nil).Read()
		if res.Err != nil {
			return fmt.Errorf("set statement_timeout: %w", res.Err)
		}
		if len(res.Rows) == 1 && len(res.Rows[0]) == 2 {
			t.statementInForce.Store(&statementTimeout{value: string(res.Rows[0][0]), flag: string(res.Rows[0][1]) == "t"})
		}
		return nil
	}
}

// URL is the connection string.
func (t *DBTarget) URL() string { return t.url }

// statementTimeout is the statement_timeout of a connection: its value as the server
// prints it, and whether it is the flag's (given or default) or the connection
// string's, role's, database's or server's.
type statementTimeout struct {
	value string
	flag  bool
}

// connect opens one connection.
func (t *DBTarget) connect(ctx context.Context) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(t.url)
	if err != nil {
		return nil, fmt.Errorf("jobc: %s: %w", t.source, err)
	}
	t.Configure(&cfg.Config)
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, t.Explain(ctx, nil, err)
	}
	return conn, nil
}

// Pool opens a pool of at most maxConns connections (0: pgxpool's default, or the
// connection string's pool_max_conns) named app in pg_stat_activity (unless the
// connection string names it), and checks that the server answers.
func (t *DBTarget) Pool(ctx context.Context, app string, maxConns int32) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(t.url)
	if err != nil {
		return nil, fmt.Errorf("jobc: %s: %w", t.source, err)
	}
	t.Configure(&cfg.ConnConfig.Config)
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = app
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("jobc: %s: %w", app, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, t.Explain(ctx, nil, err)
	}
	return pool, nil
}

// WithConn runs fn on one connection to the database of cmd, and explains its error.
func WithConn(cmd *cobra.Command, f *DBFlags, fn func(ctx context.Context, db runtime.DBTX) error) error {
	return WithPGConn(cmd, f, false, func(ctx context.Context, conn *pgx.Conn) error { return fn(ctx, conn) })
}

// WithMigratedConn is WithConn for a command that reads across jobc's tables: it
// first checks that the database has every migration the binary needs.
func WithMigratedConn(cmd *cobra.Command, f *DBFlags, fn func(ctx context.Context, db runtime.DBTX) error) error {
	return WithPGConn(cmd, f, true, func(ctx context.Context, conn *pgx.Conn) error { return fn(ctx, conn) })
}

// WithPGConn is WithConn for what needs the connection itself (migrations).
func WithPGConn(cmd *cobra.Command, f *DBFlags, checkSchema bool, fn func(ctx context.Context, conn *pgx.Conn) error) error {
	t, err := f.Target(cmd)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	conn, err := t.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if checkSchema {
		if err := t.CheckSchema(ctx, conn); err != nil {
			return err
		}
	}
	if err := fn(ctx, conn); err != nil {
		if conn.IsClosed() {
			return t.Explain(ctx, nil, err)
		}
		return t.Explain(ctx, conn, err)
	}
	return nil
}

// Explain turns the database errors whose remedy is known into one line that names
// it: the server did not answer in time, a statement ran into the statement timeout,
// or jobc's tables or functions are missing (the database needs `jobc migrate up`).
// db, when not nil, is asked how far the database is migrated. Other errors pass
// unchanged.
func (t *DBTarget) Explain(ctx context.Context, db runtime.DBTX, err error) error {
	if err == nil || ctx.Err() != nil {
		return err // nothing to explain, or the command was interrupted
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) {
		if errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err) {
			return &explained{err: err, msg: fmt.Sprintf("jobc: cannot reach PostgreSQL at %s: no answer within %s (%s): check %s and that the server is running",
				t.where, t.connectTimeout, t.connectTimeoutSource(), t.source)}
		}
		return &explained{err: err, msg: fmt.Sprintf("jobc: cannot reach PostgreSQL at %s (%s): check %s and that the server is running",
			t.where, oneLine(err.Error()), t.source)}
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return err
	}
	switch {
	case pgErr.Code == "57014" && strings.Contains(pgErr.Message, "statement timeout"): // query_canceled
		st := statementTimeout{value: t.statementTimeout.String(), flag: true}
		if p := t.statementInForce.Load(); p != nil {
			st = *p
		}
		return &explained{err: err, msg: fmt.Sprintf("%s: a statement ran longer than the statement timeout (%s, %s) of %s: raise it with --statement-timeout (0: no bound)",
			oneLine(err.Error()), st.value, t.statementTimeoutSource(st.flag), t.where)}
	case isMissingObject(pgErr):
		return &explained{err: err, msg: t.missingObject(ctx, db, pgErr)}
	}
	return err
}

func (t *DBTarget) connectTimeoutSource() string {
	if t.connectFromURL {
		return "connect_timeout of " + t.source
	}
	return "--connect-timeout"
}

func (t *DBTarget) statementTimeoutSource(flag bool) string {
	switch {
	case flag:
		return "--statement-timeout"
	case t.statementFromURL:
		return "statement_timeout of " + t.source
	}
	return "the statement_timeout of the role, the database or the server"
}

// isMissingObject reports whether pgErr says that a table, function, type or column
// a statement names does not exist: what a database without jobc's migrations, or
// with fewer than this binary knows, answers.
func isMissingObject(pgErr *pgconn.PgError) bool {
	switch pgErr.Code {
	case "42P01", // undefined_table
		"42883", // undefined_function
		"42704", // undefined_object (a type, e.g. jobc_state)
		"42703": // undefined_column
		return true
	}
	return false
}

// MissingObjectErr reports whether err is a missing table, function, type or column.
func MissingObjectErr(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && isMissingObject(pgErr)
}

// missingObject says which object is missing, how far the database is migrated, where,
// and what to run.
func (t *DBTarget) missingObject(ctx context.Context, db runtime.DBTX, pgErr *pgconn.PgError) string {
	what := pgErr.Message // e.g. relation "jobc_jobs" does not exist
	state := ""
	if db != nil {
		where, ok := t.schemaOf(ctx, db)
		if !ok {
			return fmt.Sprintf("jobc: %s: %s: create it, then run `jobc migrate up` (%s points at %s)", what, where, t.source, t.where)
		}
		if st, err := runtime.GetMigrationStatus(ctx, db); err == nil {
			if len(st.Pending) == 0 {
				return fmt.Sprintf("jobc: %s, although %s has all %d jobc migrations: check the search_path and the role's privileges (%s points at %s)",
					what, where, st.Latest, t.source, t.where)
			}
			state = fmt.Sprintf(": %s has %d of the %d jobc migrations this binary needs", where, len(st.Applied)-len(st.Unknown), st.Latest)
		}
	}
	return fmt.Sprintf("jobc: %s%s: run `jobc migrate up` (%s points at %s)", what, state, t.source, t.where)
}

// schemaOf names where db looks for jobc's tables: the first schema of its search_path
// that exists. ok is false when none exists: migrations would have nowhere to go.
func (t *DBTarget) schemaOf(ctx context.Context, db runtime.DBTX) (where string, ok bool) {
	var s *string
	switch err := db.QueryRow(ctx, "SELECT current_schema()").Scan(&s); {
	case err != nil:
		return "the database", true
	case s == nil:
		return "no schema of the search_path exists", false
	}
	return "schema " + *s, true
}

// CheckSchema fails when the database lacks migrations this binary needs, naming the
// database and what to run. A database with newer migrations than the binary passes
// (see runtime.CheckSchema).
func (t *DBTarget) CheckSchema(ctx context.Context, db runtime.DBTX) error {
	st, err := runtime.GetMigrationStatus(ctx, db)
	if err != nil {
		return t.Explain(ctx, db, err)
	}
	if len(st.Pending) == 0 {
		return nil
	}
	where, ok := t.schemaOf(ctx, db)
	if !ok {
		return fmt.Errorf("jobc: %s: create it, then run `jobc migrate up` (%s points at %s)", where, t.source, t.where)
	}
	return fmt.Errorf("jobc: %s has %d of the %d jobc migrations this binary needs (next: %04d_%s): run `jobc migrate up` (%s points at %s)",
		where, len(st.Applied)-len(st.Unknown), st.Latest, st.Pending[0].Version, st.Pending[0].Name, t.source, t.where)
}

// explained is a database error with a message that says what to do; errors.As still
// finds the server's error in it.
type explained struct {
	msg string
	err error
}

func (e *explained) Error() string { return e.msg }
func (e *explained) Unwrap() error { return e.err }

// oneLine joins the lines of s: pgx reports a connection failure per host, each on a
// line of its own.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}
