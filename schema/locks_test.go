package schema

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMigrationsHoldNoLongLocks: after the baseline (which creates its tables empty),
// no migration holds a lock that stops workers while it reads or rewrites a table.
func TestMigrationsHoldNoLongLocks(t *testing.T) {
	ms, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms[1:] {
		for _, l := range LongLocks(m) {
			t.Errorf("%04d_%s.sql, %s", m.Version, m.Name, l)
		}
	}
}

var want = regexp.MustCompile(`--\s*want:\s*(.+)$`)

// TestLongLocksCases: each case in testdata/locks marks the statements the rules flag
// with "-- want: <a phrase of the reason>" on the statement's first line; nothing else
// may be flagged.
func TestLongLocksCases(t *testing.T) {
	files, err := filepath.Glob("testdata/locks/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases in testdata/locks: %v", err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		wants := map[int]string{}
		for i, line := range strings.Split(string(b), "\n") {
			if m := want.FindStringSubmatch(line); m != nil {
				wants[i+1] = strings.TrimSpace(m[1])
			}
		}
		for _, l := range LongLocks(Migration{Version: 2, Name: "case", SQL: string(b)}) {
			w, ok := wants[l.Line]
			switch {
			case !ok:
				t.Errorf("%s:%d: flagged, but no want: %s", file, l.Line, l.Why)
			case !strings.Contains(l.Why, w):
				t.Errorf("%s:%d: flagged with %q, want a reason with %q", file, l.Line, l.Why, w)
			}
			delete(wants, l.Line)
		}
		for line, w := range wants {
			t.Errorf("%s:%d: not flagged, want %q", file, line, w)
		}
	}
}

func TestStatementsSplitOutsideQuotes(t *testing.T) {
	sql := "-- a comment; with a semicolon\nSELECT ';' AS \"a;b\";\n" +
		"CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1; $$;\n" +
		"/* block; comment */ SELECT $t$ it's; $t$ ; SELECT 'it''s;'\n"
	got := Statements(sql)
	want := []Statement{
		{Line: 2, SQL: `SELECT ';' AS "a;b"`},
		{Line: 3, SQL: "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1; $$"},
		{Line: 4, SQL: "SELECT $t$ it's; $t$"},
		{Line: 4, SQL: "SELECT 'it''s;'"},
	}
	if len(got) != len(want) {
		t.Fatalf("Statements = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("statement %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// ConcurrentIndex names the index a concurrent build makes, which the migrator drops
// when a failed build left it invalid; other statements name none.
func TestConcurrentIndex(t *testing.T) {
	for sql, want := range map[string]string{
		`CREATE INDEX CONCURRENTLY IF NOT EXISTS jobs_x_idx ON jobc_jobs (x)`:          "jobs_x_idx",
		`create unique index concurrently "Jobs_Y" on jobc_jobs (y)`:                   `"Jobs_Y"`,
		`CREATE INDEX CONCURRENTLY ON jobc_jobs (x)`:                                   "",
		`CREATE INDEX IF NOT EXISTS jobs_z_idx ON jobc_jobs (z)`:                       "",
		`CREATE INDEX CONCURRENTLY IF NOT EXISTS p_idx ON ONLY jobc_jobs_finished (x)`: "p_idx",
	} {
		got, ok := Statement{SQL: sql}.ConcurrentIndex()
		if got != want || ok != (want != "") {
			t.Errorf("%s: %q, %v; want %q", sql, got, ok, want)
		}
	}
}
