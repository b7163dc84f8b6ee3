package schema

import "testing"

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
