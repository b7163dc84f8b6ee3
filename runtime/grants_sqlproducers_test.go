package runtime_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jobc-dev/jobc/runtime"
)

// TestSQLProducersRunAsTheProducerRole: the generated SQL producers (applied by the
// migration role, like the migrations) need no grant beyond the producer role's: they
// run with the caller's rights and touch what Go's Enqueue touches. The producer role
// enqueues plain, unique (twice), scheduled and deduplicated jobs with them, wakes a
// sleeping worker, and an invalid payload is refused for what it is, not for a
// missing privilege.
func TestSQLProducersRunAsTheProducerRole(t *testing.T) {
	t.Parallel()
	e := newGrantsEnv(t)
	ctx := t.Context()
	migrator := e.pool(t, e.migrator, "app", nil)
	if _, err := runtime.Migrate(ctx, migrator); err != nil {
		t.Fatal(err)
	}
	sql, err := os.ReadFile(filepath.Join("..", "testdata", "sql_producers", "db", "jobc_producers.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrator.Exec(ctx, string(sql)); err != nil {
		t.Fatalf("apply the SQL producers as the migration role: %v", err)
	}
	if _, err := runtime.ApplyGrants(ctx, migrator, runtime.GrantRoles{Worker: e.worker, Producer: e.producer, ReadOnly: e.reader}); err != nil {
		t.Fatal(err)
	}
	e.exec(t, `INSERT INTO app.jobc_sleepers (queue, worker) VALUES ('email', 'asleep')`)
	producer := e.pool(t, e.producer, "app", nil)

	id := func(query string, args ...any) int64 {
		t.Helper()
		var id int64
		if err := producer.QueryRow(ctx, query, args...).Scan(&id); err != nil {
			t.Fatalf("%s as the producer: %v", query, err)
		}
		return id
	}
	receipt := `{"order_id": 7, "email": "ada@example.com"}`
	first := id(`SELECT jobc_enqueue_send_receipt($1)`, receipt)
	if again := id(`SELECT jobc_enqueue_send_receipt($1)`, receipt); again != first {
		t.Errorf("the same receipt again: job %d, want the duplicate %d", again, first)
	}
	if other := id(`SELECT jobc_enqueue_send_receipt($1, dedup_key => 'manual')`, receipt); other == first {
		t.Errorf("a dedup key of its own found job %d, want a new job", other)
	}
	id(`SELECT jobc_enqueue_purge_carts('{}', run_at => $1, priority => 1)`, time.Now().Add(time.Hour))

	_, err = producer.Exec(ctx, `SELECT jobc_enqueue_send_receipt('{"order_id": "7"}')`)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "22J01" {
		t.Errorf("an invalid payload as the producer: %v; want SQLSTATE 22J01", err)
	}
	var jobs int
	if err := migrator.QueryRow(ctx, `SELECT count(*) FROM jobc_jobs`).Scan(&jobs); err != nil || jobs != 3 {
		t.Errorf("%d jobs (%v), want 3", jobs, err)
	}
}
