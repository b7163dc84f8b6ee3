package schema

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestMigrationsAreNumberedInOrder(t *testing.T) {
	ms, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("no migrations embedded")
	}
	for i, m := range ms {
		if m.Version != i+1 {
			t.Errorf("migration %d has version %d", i, m.Version)
		}
		if m.SQL == "" || m.Name == "" {
			t.Errorf("migration %d is empty or unnamed: %+v", m.Version, m)
		}
	}
	if Latest() != ms[len(ms)-1].Version {
		t.Errorf("Latest() = %d, want %d", Latest(), ms[len(ms)-1].Version)
	}
	if Bootstrap() == "" {
		t.Error("bootstrap.sql is empty")
	}
}

// TestMigrationsOnlyAdd: after the first, a migration may add tables, columns, indexes,
// views and functions, but not drop, rename or retype what an earlier one made. That
// is what lets the binaries of the previous release run against a database migrated
// by the next one while a deploy rolls out (runtime.CheckSchema accepts it).
func TestMigrationsOnlyAdd(t *testing.T) {
	ms, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms[1:] {
		for _, bad := range destructive(m.SQL) {
			t.Errorf("%04d_%s.sql: %q takes away what earlier releases use: add alongside instead, and remove it in a major release", m.Version, m.Name, bad)
		}
	}
}

func TestDestructiveStatementsAreFound(t *testing.T) {
	for _, sql := range []string{
		"DROP TABLE jobc_jobs;",
		"alter table jobc_jobs drop column payload;",
		"ALTER TABLE jobc_jobs RENAME COLUMN kind TO job_kind;",
		"ALTER TABLE jobc_jobs ALTER COLUMN priority TYPE int;",
		"ALTER TABLE jobc_jobs ALTER COLUMN metadata SET NOT NULL;",
		"DROP FUNCTION jobc_wake(text);",
	} {
		if len(destructive(sql)) == 0 {
			t.Errorf("destructive(%q) found nothing", sql)
		}
	}
	for _, sql := range []string{
		"CREATE TABLE jobc_queues (name text PRIMARY KEY); -- no DROP here",
		"ALTER TABLE jobc_jobs ADD COLUMN aged boolean NOT NULL DEFAULT false;",
		"CREATE INDEX jobc_jobs_finished_at ON jobc_jobs_finished (finished_at);",
		"DROP INDEX IF EXISTS jobc_jobs_old_idx;",
	} {
		if got := destructive(sql); len(got) != 0 {
			t.Errorf("destructive(%q) = %q, want nothing", sql, got)
		}
	}
}

// TestLibraryVersionIsRecorded: the embedded library's checksum is the one
// library/versions records for its version, so a change to the library cannot ship
// under the version of another: a migrator that finds a version recorded in the
// database must be able to trust that it is the library it knows by that number.
func TestLibraryVersionIsRecorded(t *testing.T) {
	lib, err := FunctionLibrary()
	if err != nil {
		t.Fatal(err)
	}
	versions, err := libraryVersions()
	if err != nil {
		t.Fatal(err)
	}
	last := versions[len(versions)-1]
	if lib.Checksum != last.Checksum {
		t.Errorf("schema/library changed: its checksum is %s, library/versions records %s for version %d.\n"+
			"Append the line\n\t%d %s\n(or replace the last line if version %d is not released yet)",
			lib.Checksum, last.Checksum, last.Version, last.Version+1, lib.Checksum, last.Version)
	}
	if !strings.Contains(lib.SQL, "CREATE OR REPLACE FUNCTION jobc_format_uuid(") {
		t.Errorf("the library lacks jobc_format_uuid: %.200s", lib.SQL)
	}
}

// TestLibraryOnlyReplacesFunctions: outside the functions' bodies, the library is
// CREATE OR REPLACE FUNCTION statements and comments, so applying it again, or a newer
// version over an older one, changes nothing but the functions, and no version takes
// away what an older release's generated functions call.
func TestLibraryOnlyReplacesFunctions(t *testing.T) {
	lib, err := FunctionLibrary()
	if err != nil {
		t.Fatal(err)
	}
	if bad := libraryStatements(lib.SQL); len(bad) > 0 {
		t.Errorf("the library holds statements other than CREATE OR REPLACE FUNCTION: %q", bad)
	}
	for _, sql := range []string{
		"CREATE TABLE jobc_x (a int);",
		"CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$; DROP FUNCTION g();",
		"CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;",
		"CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql SECURITY DEFINER AS $$ SELECT 1 $$;",
	} {
		if len(libraryStatements(sql)) == 0 {
			t.Errorf("libraryStatements(%q) found nothing", sql)
		}
	}
}

// libraryStatements returns what, outside $$-quoted bodies and -- comments, is not the
// head of a CREATE OR REPLACE FUNCTION running with the caller's rights.
func libraryStatements(sql string) []string {
	var bad []string
	for i, part := range strings.Split(sql, "$$") {
		if i%2 == 1 {
			continue // a body
		}
		var code strings.Builder
		for line := range strings.Lines(part) {
			if j := strings.Index(line, "--"); j >= 0 {
				line = line[:j] + "\n"
			}
			code.WriteString(line)
		}
		for _, stmt := range strings.Split(code.String(), ";") {
			stmt = strings.Join(strings.Fields(stmt), " ")
			if stmt == "" {
				continue
			}
			if !strings.HasPrefix(stmt, "CREATE OR REPLACE FUNCTION ") || strings.Contains(strings.ToUpper(stmt), "SECURITY DEFINER") {
				bad = append(bad, stmt)
			}
		}
	}
	return bad
}

// TestScriptsTakeTheMigratorsLock: the scripts `jobc migrate sql` prints take the
// advisory lock runtime.Migrate takes, so a script applied by another tool and a
// migrating binary never run at once.
func TestScriptsTakeTheMigratorsLock(t *testing.T) {
	q, err := os.ReadFile("../queries/migrate.sql")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(q), "-- name: MigrationLock :exec\n"+migrationLock+"\n") {
		t.Errorf("queries/migrate.sql's MigrationLock is not %q", migrationLock)
	}
	scripts, err := Scripts(1)
	if err != nil {
		t.Fatal(err)
	}
	if len(scripts) != Latest()+1 || scripts[0].Name != "0001_baseline" || scripts[len(scripts)-1].Name != "library_v1" {
		t.Errorf("Scripts(1) = %d scripts, first %q, last %q", len(scripts), scripts[0].Name, scripts[len(scripts)-1].Name)
	}
	for _, s := range scripts {
		if !strings.Contains(s.SQL, migrationLock) {
			t.Errorf("script %s does not take the lock", s.Name)
		}
	}
	if only, err := Scripts(Latest() + 1); err != nil || len(only) != 1 {
		t.Errorf("Scripts(%d) = %d scripts, %v; want the library alone", Latest()+1, len(only), err)
	}
	for _, from := range []int{0, Latest() + 2} {
		if _, err := Scripts(from); err == nil {
			t.Errorf("Scripts(%d) gave no error", from)
		}
	}
}

// TestNoTransactionScripts: a migration marked NoTransaction is printed to run outside
// a transaction: the migrator's lock taken for the session and released at its end,
// the migrator's lock timeout set (the same as runtime/internal/migrate's), and the
// migration recorded after its statements.
func TestNoTransactionScripts(t *testing.T) {
	ms, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	body := NoTransaction + "\nCREATE INDEX CONCURRENTLY IF NOT EXISTS jobc_jobs_created_idx ON jobc_jobs (created_at);\n"
	ms = append(ms, Migration{Version: len(ms) + 1, Name: "created_idx", SQL: body})
	got, err := scripts(ms, len(ms))
	if err != nil || len(got) != 2 {
		t.Fatalf("scripts = %v, %v", got, err)
	}
	s := got[0]
	record := fmt.Sprintf("INSERT INTO jobc_migrations (version, name) VALUES (%d, 'created_idx');", len(ms))
	order := []string{MigrationSessionLock, "SET lock_timeout = '1000ms';", strings.TrimSpace(body), record, MigrationSessionUnlock}
	at := 0
	for _, part := range order {
		i := strings.Index(s.SQL[at:], part)
		if i < 0 {
			t.Fatalf("script %s lacks, or has out of order, %q:\n%s", s.Name, part, s.SQL)
		}
		at += i + len(part)
	}
	if !s.NoTransaction || strings.Contains(s.SQL, migrationLock) || got[1].NoTransaction {
		t.Errorf("script %s: NoTransaction %v, takes the transaction's lock %v; the library's NoTransaction %v",
			s.Name, s.NoTransaction, strings.Contains(s.SQL, migrationLock), got[1].NoTransaction)
	}
}
