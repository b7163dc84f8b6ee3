package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// catalog describes every jobc object of the pool's schema, one line each, with the
// schema's name taken out, so that two schemas can be compared: columns (type, NOT
// NULL, default, identity, generation), constraints, indexes, views, functions (their
// whole definition, rights and search_path), triggers, enum labels, privileges, and
// the migrator's records.
func catalog(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(t.Context(), `
WITH ns AS (SELECT current_schema()::regnamespace AS oid)
SELECT 'column ' || c.relname || ' ' || c.relkind::text || c.relpersistence::text || ' ' || a.attnum || ' ' || a.attname || ' '
       || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull || ' ' || a.attidentity::text || a.attgenerated::text || ' '
       || coalesce(pg_get_expr(d.adbin, d.adrelid), '') || ' ' || coalesce(c.relacl::text, '')
FROM pg_class c JOIN ns ON c.relnamespace = ns.oid
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
UNION ALL
SELECT 'constraint ' || r.conrelid::regclass::text || ' ' || r.conname || ' ' || pg_get_constraintdef(r.oid) || ' ' || r.convalidated
FROM pg_constraint r JOIN ns ON r.connamespace = ns.oid
UNION ALL
SELECT 'index ' || pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN ns ON c.relnamespace = ns.oid
UNION ALL
SELECT 'view ' || c.relname || ' ' || pg_get_viewdef(c.oid) FROM pg_class c JOIN ns ON c.relnamespace = ns.oid WHERE c.relkind = 'v'
UNION ALL
SELECT 'function ' || pg_get_functiondef(p.oid) || ' ' || coalesce(p.proacl::text, '') FROM pg_proc p JOIN ns ON p.pronamespace = ns.oid
UNION ALL
SELECT 'trigger ' || pg_get_triggerdef(g.oid) FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid JOIN ns ON c.relnamespace = ns.oid
WHERE NOT g.tgisinternal
UNION ALL
SELECT 'enum ' || y.typname || ' ' || string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder)
FROM pg_type y JOIN ns ON y.typnamespace = ns.oid JOIN pg_enum e ON e.enumtypid = y.oid GROUP BY y.typname
UNION ALL
SELECT 'migration ' || version || ' ' || name FROM jobc_migrations
UNION ALL
SELECT 'library ' || version || ' ' || checksum FROM jobc_library`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	schema := pgtest.SchemaOf(pool)
	var out []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.ReplaceAll(line, schema, "SCHEMA"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// sameCatalog reports the lines of want and got that differ.
func sameCatalog(t *testing.T, what string, want, got []string) {
	t.Helper()
	for _, l := range want {
		if !slices.Contains(got, l) {
			t.Errorf("%s lacks: %.300s", what, l)
		}
	}
	for _, l := range got {
		if !slices.Contains(want, l) {
			t.Errorf("%s has in addition: %.300s", what, l)
		}
	}
}

// execSimple runs sql as psql and golang-migrate do: in one simple-protocol round
// trip, with any number of statements.
func execSimple(t *testing.T, pool *pgxpool.Pool, what, sql string) {
	t.Helper()
	conn, err := pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Conn().PgConn().Exec(t.Context(), sql).ReadAll(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// TestMigrateSQLAgreesWithMigrateUp: the SQL `jobc migrate sql` prints, applied by
// hand to a fresh schema (in one file, or as the files of --dir, one transaction
// each), gives the schema `jobc migrate up` gives, with the same records, so a later
// `jobc migrate up` or runtime.Migrate finds nothing to do.
func TestMigrateSQLAgreesWithMigrateUp(t *testing.T) {
	ctx := t.Context()
	migrated, _ := migratedDB(t)
	want := catalog(t, migrated)
	if len(want) < 100 || !slices.ContainsFunc(want, func(l string) bool { return strings.HasPrefix(l, "library 1 sha256:") }) {
		t.Fatalf("the catalog of a migrated schema is too small or lacks the library: %q", want)
	}

	out, errOut, code := jobc(t, "migrate", "sql")
	if code != cli.ExitOK || errOut != "" || strings.Count(out, "BEGIN;") != strings.Count(out, "COMMIT;") {
		t.Fatalf("migrate sql: exit %d: %s", code, errOut)
	}
	byHand := pgtest.NewSchema(t, nil)
	execSimple(t, byHand, "the output of migrate sql", out)
	sameCatalog(t, "the schema migrate sql made", want, catalog(t, byHand))

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "0001_app_users.up.sql"), []byte("-- the application's own"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = jobc(t, "migrate", "sql", "--dir", dir, "--start", "2")
	if code != cli.ExitOK || !strings.Contains(out, "0002_jobc_baseline.up.sql") || !strings.Contains(out, "0003_jobc_library_v1.up.sql") {
		t.Fatalf("migrate sql --dir: exit %d: %s%s", code, out, errOut)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*_jobc_*.up.sql"))
	if err != nil || len(files) != 2 {
		t.Fatalf("files written: %q, %v", files, err)
	}
	byTool := pgtest.NewSchema(t, nil)
	for _, f := range files { // Glob sorts: the apply order
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "BEGIN;") {
			t.Errorf("%s has its own BEGIN: a tool's transaction around it would end early", f)
		}
		execSimple(t, byTool, f, string(b))
	}
	sameCatalog(t, "the schema the files of migrate sql --dir made", want, catalog(t, byTool))
	if done, err := runtime.Migrate(ctx, byTool); err != nil || len(done) != 0 {
		t.Errorf("Migrate after the files: applied %v, %v; want nothing", done, err)
	}
	if err := runtime.CheckSchema(ctx, byTool); err != nil {
		t.Errorf("CheckSchema after the files: %v", err)
	}
	sameCatalog(t, "the schema after the files and Migrate", want, catalog(t, byTool))
	url := pgtest.SchemaConnString(t, pgtest.SchemaOf(byHand))
	if out, errOut, code := jobc(t, "migrate", "up", "--database-url", url); code != cli.ExitOK || out != "already up to date\n" {
		t.Errorf("migrate up after migrate sql: exit %d: %s%s", code, out, errOut)
	}

	// A second run into the same directory overwrites nothing.
	if _, errOut, code := jobc(t, "migrate", "sql", "--dir", dir, "--start", "2"); code != cli.ExitFailure || !strings.Contains(errOut, "exists") {
		t.Errorf("migrate sql --dir over existing files: exit %d: %s", code, errOut)
	}
}

// TestMigrateSQLNeverDowngradesTheLibrary: where a newer jobc recorded a newer
// function library, the library printed by this one fails and changes nothing.
func TestMigrateSQLNeverDowngradesTheLibrary(t *testing.T) {
	pool, _ := migratedDB(t)
	if _, err := pool.Exec(t.Context(), `INSERT INTO jobc_library (version, checksum) VALUES (1000, 'sha256:next')`); err != nil {
		t.Fatal(err)
	}
	out, _, code := jobc(t, "migrate", "sql", "--from", "2")
	if code != cli.ExitOK || strings.Contains(out, "jobc migration 0001") {
		t.Fatalf("migrate sql --from 2: exit %d: %.200s", code, out)
	}
	conn, err := pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	_, err = conn.Conn().PgConn().Exec(context.Background(), out).ReadAll()
	if err == nil || !strings.Contains(err.Error(), "newer function library") {
		t.Errorf("applying an older library over a newer one: %v", err)
	}
}
