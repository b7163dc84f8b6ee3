package runtime_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/schema"
)

func pgtestSchemaWithoutMigrations(t *testing.T) *pgxpool.Pool {
	return pgtest.NewSchema(t, nil)
}

// TestConcurrentMigrate: many processes migrating at once apply each migration once.
func TestConcurrentMigrate(t *testing.T) {
	t.Parallel()
	pool := pgtestSchemaWithoutMigrations(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	applied := make([]int, 8)
	errs := make([]error, 8)
	for i := range applied {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done, err := runtime.Migrate(ctx, pool)
			applied[i], errs[i] = len(done), err
		}()
	}
	wg.Wait()
	total := 0
	for i := range applied {
		if errs[i] != nil {
			t.Errorf("migrator %d: %v", i, errs[i])
		}
		total += applied[i]
	}
	if want := schema.Latest(); total != want {
		t.Errorf("migrations applied %d times in all, want %d (each once)", total, want)
	}
	st, err := runtime.GetMigrationStatus(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Pending) != 0 || len(st.Applied) != schema.Latest() {
		t.Errorf("status after migrating: %+v", st)
	}
	if err := runtime.CheckSchema(ctx, pool); err != nil {
		t.Errorf("CheckSchema after migrating: %v", err)
	}
	// Migrating again is a no-op.
	if done, err := runtime.Migrate(ctx, pool); err != nil || len(done) != 0 {
		t.Errorf("second Migrate applied %v, err %v", done, err)
	}
}

// TestUnreachableDatabase: a database that is not there gives one line that says what
// to check, and nothing panics.
func TestUnreachableDatabase(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, "postgres://nobody@127.0.0.1:1/none?connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	_, err = runtime.Migrate(ctx, pool)
	if err == nil || !strings.Contains(err.Error(), "cannot reach PostgreSQL") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Migrate: %v; want one line saying PostgreSQL cannot be reached", err)
	}
	_, err = runtime.Enqueue(ctx, pool, emailType(t, nil), emailPayload{N: 1, Email: "ada@example.com"})
	if err == nil || !strings.Contains(err.Error(), "cannot reach PostgreSQL") {
		t.Errorf("Enqueue: %v; want a message saying PostgreSQL cannot be reached", err)
	}
}

// TestNewerSchemaIsAccepted: a database that a newer release already migrated (mid
// rolling deploy) still runs this binary's workers; the worker says so at start. A
// database that lacks a migration this binary needs is refused.
func TestNewerSchemaIsAccepted(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	newer := schema.Latest() + 1
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_migrations (version, name) VALUES ($1, 'from_the_next_release')`, newer); err != nil {
		t.Fatal(err)
	}
	if err := runtime.CheckSchema(ctx, pool); err != nil {
		t.Fatalf("CheckSchema with migration %d from a newer release: %v", newer, err)
	}

	logs := &syncBuffer{}
	cfg := testConfig(nil)
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	w := runtime.NewWorker(pool, cfg)
	jt := emailType(t, nil)
	ran := make(chan struct{}, 1)
	if err := runtime.Handle(w, jt, func(context.Context, *runtime.Job, emailPayload) error {
		ran <- struct{}{}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	if _, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "ada@example.com"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ran:
	case <-time.After(100 * cfg.PollInterval): // a hundred polls
		t.Fatalf("the worker ran no job on a newer schema; its log:\n%s", logs.String())
	}
	if want := fmt.Sprintf("newest=%d known=%d", newer, schema.Latest()); !strings.Contains(logs.String(), want) {
		t.Errorf("the worker's log does not mention the newer migration (%s):\n%s", want, logs.String())
	}

	if _, err := pool.Exec(ctx, `DELETE FROM jobc_migrations WHERE version = $1`, schema.Latest()); err != nil {
		t.Fatal(err)
	}
	err := runtime.CheckSchema(ctx, pool)
	if err == nil || !strings.Contains(err.Error(), "jobc migrate up") {
		t.Errorf("CheckSchema with migration %d missing: %v; want an error saying to run jobc migrate up", schema.Latest(), err)
	}
}

// sentinelQuote replaces a library function with one that says it was not replaced,
// to see whether a later Migrate applies the library again.
const sentinelQuote = `CREATE OR REPLACE FUNCTION jobc_go_quote(p text, p_style text DEFAULT 'message') RETURNS text
	LANGUAGE sql IMMUTABLE AS $$ SELECT 'sentinel' $$`

func goQuote(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	var q string
	if err := pool.QueryRow(t.Context(), `SELECT jobc_go_quote('it''s')`).Scan(&q); err != nil {
		t.Fatal(err)
	}
	return q
}

// TestLibraryIsNeverDowngraded is the rolling deploy: once the next release applied a
// newer function library, a binary of this one that starts and migrates leaves it in
// place, and its CheckSchema accepts it. The same version with another checksum (a
// development build whose library changed) is applied again.
func TestLibraryIsNeverDowngraded(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	lib, err := schema.FunctionLibrary()
	if err != nil {
		t.Fatal(err)
	}
	if q := goQuote(t, pool); q != `'it\'s'` {
		t.Fatalf("jobc_go_quote after migrating: %s", q)
	}
	if _, err := pool.Exec(ctx, sentinelQuote); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_library (version, checksum) VALUES ($1, 'sha256:next')`, lib.Version+1); err != nil {
		t.Fatal(err)
	}
	if _, err := runtime.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if q := goQuote(t, pool); q != "sentinel" {
		t.Errorf("Migrate replaced the newer library with its own v%d: jobc_go_quote gives %s", lib.Version, q)
	}
	if err := runtime.CheckSchema(ctx, pool); err != nil {
		t.Errorf("CheckSchema with a newer library: %v", err)
	}

	if _, err := pool.Exec(ctx, `DELETE FROM jobc_library WHERE version > $1`, lib.Version); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE jobc_library SET checksum = 'sha256:other' WHERE version = $1`, lib.Version); err != nil {
		t.Fatal(err)
	}
	if _, err := runtime.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if q := goQuote(t, pool); q != `'it\'s'` {
		t.Errorf("Migrate left v%d with another checksum in place: jobc_go_quote gives %s", lib.Version, q)
	}
	var sum string
	if err := pool.QueryRow(ctx, `SELECT checksum FROM jobc_library WHERE version = $1`, lib.Version).Scan(&sum); err != nil || sum != lib.Checksum {
		t.Errorf("recorded checksum %q (%v), want %q", sum, err, lib.Checksum)
	}
}

// TestLibraryIsRequired: a database with every migration but without the function
// library, or with an older one, is refused by CheckSchema, saying what to run; the
// library is also safe to apply over itself (as `jobc migrate sql` output may be).
func TestLibraryIsRequired(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	lib, err := schema.FunctionLibrary()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, lib.SQL); err != nil {
		t.Fatalf("applying the library again: %v", err)
	}
	if _, err := pool.Exec(ctx, `UPDATE jobc_library SET version = version - 1`); err != nil {
		t.Fatal(err)
	}
	if err := runtime.CheckSchema(ctx, pool); err == nil || !strings.Contains(err.Error(), "function library") || !strings.Contains(err.Error(), "jobc migrate up") {
		t.Errorf("CheckSchema with an older library: %v", err)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM jobc_library`); err != nil {
		t.Fatal(err)
	}
	if err := runtime.CheckSchema(ctx, pool); err == nil || !strings.Contains(err.Error(), "lacks jobc's function library") {
		t.Errorf("CheckSchema without the library: %v", err)
	}
	if _, err := runtime.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := runtime.CheckSchema(ctx, pool); err != nil {
		t.Errorf("CheckSchema after migrating: %v", err)
	}
}

// TestPreBaselineDatabaseIsRefused: a database migrated by a development build from
// before the schema baseline records other migrations under the same numbers; the
// migrator says so and changes nothing rather than guessing.
func TestPreBaselineDatabaseIsRefused(t *testing.T) {
	t.Parallel()
	pool := pgtestSchemaWithoutMigrations(t)
	ctx := t.Context()
	if _, err := pool.Exec(ctx, schema.Bootstrap()+`; INSERT INTO jobc_migrations (version, name) VALUES (1, 'jobs'), (2, 'shared_rules')`); err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{
		"Migrate":     func() error { _, err := runtime.Migrate(ctx, pool); return err }(),
		"CheckSchema": runtime.CheckSchema(ctx, pool),
	} {
		if err == nil || !strings.Contains(err.Error(), "0001_jobs where this binary has 0001_baseline") {
			t.Errorf("%s on a pre-baseline database: %v", what, err)
		}
	}
	if n := countRows(t, pool, `SELECT count(*) FROM pg_class WHERE relname = 'jobc_jobs' AND relnamespace = current_schema()::regnamespace`); n != 0 {
		t.Errorf("Migrate created jobc_jobs in a pre-baseline database")
	}
}
