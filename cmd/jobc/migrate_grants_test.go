package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// TestMigrateGrantsUsage: mistakes on the command line exit 2 with the synopsis,
// before anything connects.
func TestMigrateGrantsUsage(t *testing.T) {
	t.Setenv("DATABASE_URL", "") // nothing to connect to: usage errors come first
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"migrate", "grants"}, "--worker ROLE is required"},
		{[]string{"migrate", "grants", "--worker", "w"}, "--readonly ROLE is required"},
		{[]string{"migrate", "grants", "--worker", "w", "--readonly", "w"}, "must name different roles"},
		{[]string{"migrate", "grants", "--worker", "w", "--readonly", "r", "--producer", "r"}, "must name different roles"},
		{[]string{"migrate", "grants", "--worker", "w", "--readonly", "r", "--owner", "o"}, "unknown flag: --owner"},
		{[]string{"migrate", "grants", "--worker", "w", "--readonly", "r", "extra"}, `unexpected argument "extra"`},
		{[]string{"migrate", "grants", "--worker"}, "flag needs an argument"},
	} {
		out, errOut, code := jobc(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, grantsUsage) || out != "" {
			t.Errorf("jobc %s: exit %d, stdout %q, stderr %q; want exit 2 with %q and the synopsis",
				strings.Join(c.args, " "), code, out, errOut, c.want)
		}
	}
	// Valid flags without a database fail as any database command does (exit 2).
	if _, errOut, code := jobc(t, "migrate", "grants", "--worker", "w", "--readonly", "r"); code != cli.ExitUsage || !strings.Contains(errOut, "DATABASE_URL") {
		t.Errorf("without a database: exit %d, %q", code, errOut)
	}
}

// TestMigrateGrantsPrintAndApply: the command prints exactly runtime.ListGrants'
// statements without changing anything, names a missing role, and with --apply
// grants them in the database.
func TestMigrateGrantsPrintAndApply(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := pgtest.NewSchema(t, nil)
	dsn := pgtest.SchemaConnString(t, pgtest.SchemaOf(pool))

	// Before migrating there is nothing to grant on.
	if _, errOut, code := jobc(t, "migrate", "grants", "--database-url", dsn, "--worker", "w", "--readonly", "r"); code != 1 || !strings.Contains(errOut, "jobc migrate up") {
		t.Errorf("unmigrated: exit %d, %q; want exit 1 saying to migrate first", code, errOut)
	}
	if _, err := runtime.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	worker, producer, reader := newRole(t, pool, "worker"), newRole(t, pool, "producer"), newRole(t, pool, "reader")

	_, errOut, code := jobc(t, "migrate", "grants", "--database-url", dsn, "--worker", worker, "--readonly", "no_such_"+reader)
	if code != 1 || !strings.Contains(errOut, `role "no_such_`+reader+`" does not exist`) {
		t.Errorf("missing role: exit %d, %q; want exit 1 naming the role", code, errOut)
	}

	args := []string{"migrate", "grants", "--database-url", dsn, "--worker", worker, "--producer", producer, "--readonly", reader}
	out, errOut, code := jobc(t, args...)
	if code != 0 {
		t.Fatalf("print: exit %d: %s", code, errOut)
	}
	want, err := runtime.ListGrants(ctx, pool, runtime.GrantRoles{Worker: worker, Producer: producer, ReadOnly: reader})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("printed:\n%s\nwant runtime.ListGrants:\n%s", out, strings.Join(want, "\n"))
	}
	if !strings.Contains(out, `TO "`+producer+`";`) || !strings.Contains(out, pgx.Identifier{pgtest.SchemaOf(pool), "jobc_jobs"}.Sanitize()) {
		t.Errorf("printed statements do not grant to the producer on the schema's jobc_jobs:\n%s", out)
	}
	privileges := func() string {
		var s string
		err := pool.QueryRow(ctx, `SELECT concat_ws(' ',
			has_table_privilege($1, 'jobc_jobs', 'UPDATE'), has_table_privilege($1, 'jobc_jobs', 'TRUNCATE'),
			has_column_privilege($2, 'jobc_jobs', 'payload', 'INSERT') AND NOT has_column_privilege($2, 'jobc_jobs', 'id', 'INSERT'),
			has_table_privilege($2, 'jobc_jobs', 'DELETE'),
			has_table_privilege($3, 'jobc_jobs_finished', 'SELECT'), has_table_privilege($3, 'jobc_jobs_finished', 'DELETE'))`,
			worker, producer, reader).Scan(&s)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if got := privileges(); got != "f f f f f f" {
		t.Errorf("printing changed privileges: %s", got)
	}

	out, errOut, code = jobc(t, append(args, "--apply")...)
	if code != 0 || !strings.Contains(out, "applied") {
		t.Fatalf("apply: exit %d: %s%s", code, out, errOut)
	}
	// worker UPDATE yes, TRUNCATE no; producer INSERT of a new job's columns (never an id) yes, DELETE no; reader SELECT yes, DELETE no.
	if got := privileges(); got != "t f t f t f" {
		t.Errorf("after --apply, privileges %s; want t f t f t f", got)
	}
	// Applying again is a no-op that succeeds.
	if _, errOut, code := jobc(t, append(args, "--apply")...); code != 0 {
		t.Errorf("second apply: exit %d: %s", code, errOut)
	}
}

// newRole creates a login role with a unique name (roles are cluster-wide) and drops
// it, with its privileges in the package database, when the test ends.
func newRole(t *testing.T, pool *pgxpool.Pool, prefix string) string {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := "jobc_test_" + prefix + "_" + hex.EncodeToString(b[:])
	id := pgx.Identifier{name}.Sanitize()
	if _, err := pool.Exec(t.Context(), "CREATE ROLE "+id+" LOGIN"); err != nil {
		t.Fatalf("create role: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, s := range []string{"DROP OWNED BY " + id, "DROP ROLE " + id} {
			if _, err := pool.Exec(ctx, s); err != nil {
				t.Errorf("%s: %v", s, err)
			}
		}
	})
	return name
}

// TestMigrateGrantsRolesRunTheCLI: after `jobc migrate grants --apply`, the read-only
// role runs `jobc status` and `jobc jobs list` but cannot cancel a job; the worker
// role can.
func TestMigrateGrantsRolesRunTheCLI(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := pgtest.NewSchema(t, func(ctx context.Context, pool *pgxpool.Pool) error {
		_, err := runtime.Migrate(ctx, pool)
		return err
	})
	dsn := pgtest.SchemaConnString(t, pgtest.SchemaOf(pool))
	worker, reader := newRole(t, pool, "worker"), newRole(t, pool, "reader")
	if _, errOut, code := jobc(t, "migrate", "grants", "--database-url", dsn, "--worker", worker, "--readonly", reader, "--apply"); code != 0 {
		t.Fatalf("apply: exit %d: %s", code, errOut)
	}
	jt, err := runtime.NewJobType(runtime.JobType{Kind: "send_report", Queue: "reports", Priority: 5, MaxAttempts: 3,
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}}})
	if err != nil {
		t.Fatal(err)
	}
	job, err := runtime.Enqueue(ctx, pool, jt, map[string]any{}, runtime.RunAfter(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	id := strconv.FormatInt(job.ID, 10)

	asReader, asWorker := withRole(t, dsn, reader), withRole(t, dsn, worker)
	if out, errOut, code := jobc(t, "status", "--database-url", asReader); code != 0 || !strings.Contains(out, "send_report") {
		t.Errorf("status as the read-only role: exit %d: %s%s", code, out, errOut)
	}
	if out, errOut, code := jobc(t, "jobs", "list", "--database-url", asReader); code != 0 || !strings.Contains(out, "send_report") {
		t.Errorf("jobs list as the read-only role: exit %d: %s%s", code, out, errOut)
	}
	if _, errOut, code := jobc(t, "jobs", "cancel", id, "--database-url", asReader); code != 1 ||
		!strings.Contains(errOut, "permission denied for table jobc_jobs") || !strings.Contains(errOut, "42501") {
		t.Errorf("jobs cancel as the read-only role: exit %d: %s; want exit 1, permission denied for table jobc_jobs", code, errOut)
	}
	if out, errOut, code := jobc(t, "jobs", "cancel", id, "--database-url", asWorker); code != 0 || !strings.Contains(out, "cancelled") {
		t.Errorf("jobs cancel as the worker role: exit %d: %s%s", code, out, errOut)
	}
}

// withRole returns connString with the session's role set to role at connection
// start ("-c role=...", as SET ROLE does), so the test needs no password for it: the
// test server's user may act as any role.
func withRole(t *testing.T, connString, role string) string {
	t.Helper()
	cfg, err := pgconn.ParseConfig(connString)
	if err != nil {
		t.Fatal(err)
	}
	opts := strings.TrimSpace(cfg.RuntimeParams["options"] + " -c role=" + role)
	if strings.HasPrefix(connString, "postgres://") || strings.HasPrefix(connString, "postgresql://") {
		u, err := url.Parse(connString)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("options", opts)
		u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20") // pgx reads '+' literally
		return u.String()
	}
	return connString + " options='" + strings.ReplaceAll(opts, "'", `\'`) + "'"
}
