package runtime_test

import (
	"context"
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
	st, err := runtime.Migrations(ctx, pool)
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
