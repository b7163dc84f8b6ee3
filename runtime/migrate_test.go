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
