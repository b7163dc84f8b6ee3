package runtime_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime"
	steps "github.com/jobc-dev/jobc/testdata/workflow_steps/jobs"
)

// TestSQLProducersRunAsTheProducerRole: the generated SQL producers (applied by the
// migration role, like the migrations) need no grant beyond the producer role's: they
// run with the caller's rights and touch what Go's Enqueue touches. The producer role
// enqueues plain, unique (twice), scheduled and deduplicated jobs with them, wakes a
// sleeping worker, and an invalid payload is refused for what it is, not for a
// missing privilege.
func TestSQLProducersRunAsTheProducerRole(t *testing.T) {
	t.Parallel()
	e, migrator := producersEnv(t, "sql_producers")
	ctx := t.Context()
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

	_, err := producer.Exec(ctx, `SELECT jobc_enqueue_send_receipt('{"order_id": "7"}')`)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "22J01" {
		t.Errorf("an invalid payload as the producer: %v; want SQLSTATE 22J01", err)
	}
	var jobs int
	if err := migrator.QueryRow(ctx, `SELECT count(*) FROM jobc_jobs`).Scan(&jobs); err != nil || jobs != 3 {
		t.Errorf("%d jobs (%v), want 3", jobs, err)
	}
}

// TestSQLProducersStartWorkflows: the generated jobc_start_<workflow> and
// jobc_signal_<workflow>_<signal> (of the golden case testdata/workflow_steps) run as
// the producer role: a workflow started from SQL records the definition Go's Start
// records; an invalid input is refused with Go's message; a signal from SQL completes
// the wait step with its payload; an unknown or ended workflow is refused with its
// own SQLSTATE.
func TestSQLProducersStartWorkflows(t *testing.T) {
	t.Parallel()
	e, migrator := producersEnv(t, "workflow_steps")
	ctx := t.Context()
	producer := e.pool(t, e.producer, "app", nil)
	input := `{"order_id": "o-1", "items": [{"sku": "a", "qty": 1}]}`
	var id int64
	if err := producer.QueryRow(ctx, `SELECT jobc_start_fulfil_order($1)`, input).Scan(&id); err != nil {
		t.Fatalf("jobc_start_fulfil_order as the producer: %v", err)
	}
	var keyed, again int64
	if err := producer.QueryRow(ctx, `SELECT jobc_start_fulfil_order($1, 'order-1'), jobc_start_fulfil_order($1, key => 'order-1')`, input).Scan(&keyed, &again); err != nil || again != keyed || keyed == id {
		t.Errorf("two starts with one key from SQL: %d and %d (%v); want one new workflow, returned twice", keyed, again, err)
	}
	var def []byte
	if err := migrator.QueryRow(ctx, `SELECT d.definition FROM jobc_workflows w JOIN jobc_workflow_definitions d ON d.id = w.definition_id
		WHERE w.id = $1`, id).Scan(&def); err != nil {
		t.Fatal(err)
	}
	wt := steps.WorkflowTypes()[0]
	if !jsonEqual(string(def), string(wt.Definition())) {
		t.Errorf("SQL recorded the definition\n%s\nGo records\n%s", def, wt.Definition())
	}
	// SQL embeds the very text Go sends: workflows started from either name one
	// stored definition.
	goID, err := runtime.StartWorkflow(ctx, producer, wt, json.RawMessage(input))
	if err != nil {
		t.Fatal(err)
	}
	var defs int
	if err := migrator.QueryRow(ctx, `SELECT count(DISTINCT definition_id) FROM jobc_workflows WHERE id = ANY($1)`,
		[]int64{id, keyed, int64(goID)}).Scan(&defs); err != nil || defs != 1 {
		t.Errorf("workflows started from SQL and Go name %d definitions (%v); want 1", defs, err)
	}

	bad := `{"order_id": 7, "items": [{"sku": "a", "qty": 0}]}`
	_, err = producer.Exec(ctx, `SELECT jobc_start_fulfil_order($1)`, bad)
	_, goErr := runtime.StartWorkflow(ctx, producer, wt, json.RawMessage(bad))
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "22J01" || goErr == nil || pgErr.Message != goErr.Error() {
		t.Errorf("an invalid input from SQL: %v; want SQLSTATE 22J01 with Go's message %q", err, goErr)
	}

	signal := func(workflow int64, payload string) (int, error) {
		var n int
		err := producer.QueryRow(ctx, `SELECT jobc_signal_fulfil_order_payment_confirmed($1, $2)`, workflow, payload).Scan(&n)
		return n, err
	}
	if n, err := signal(id, `{"ref": "p-1"}`); err != nil || n != 0 {
		t.Errorf("a signal before the wait: %d steps completed, %v; want 0 (kept for later)", n, err)
	}
	var kept string
	if err := migrator.QueryRow(ctx, `SELECT payload->>'ref' FROM jobc_workflow_signals WHERE workflow_id = $1`, id).Scan(&kept); err != nil || kept != "p-1" {
		t.Errorf("the kept signal: %q, %v", kept, err)
	}
	if _, err := signal(id, `{"ref": 1}`); !errors.As(err, &pgErr) || pgErr.Code != "22J01" {
		t.Errorf("an invalid signal: %v; want SQLSTATE 22J01", err)
	}
	if _, err := signal(id+1000, `{"ref": "p-2"}`); !errors.As(err, &pgErr) || pgErr.Code != "P0002" {
		t.Errorf("a signal to an unknown workflow: %v; want SQLSTATE P0002", err)
	}
	if err := runtime.CancelWorkflow(ctx, migrator, runtime.WorkflowID(id)); err != nil {
		t.Fatal(err)
	}
	if _, err := signal(id, `{"ref": "p-3"}`); !errors.As(err, &pgErr) || pgErr.Code != "55000" || !strings.Contains(pgErr.Message, "it is cancelled") {
		t.Errorf("a signal to a cancelled workflow: %v; want SQLSTATE 55000 naming its state", err)
	}
}

// producersEnv is a schema migrated by the migration role, with the SQL producers of
// the golden case testdata/<golden> applied by it and the roles granted.
func producersEnv(t *testing.T, golden string) (*grantsEnv, *pgxpool.Pool) {
	t.Helper()
	e := newGrantsEnv(t)
	ctx := t.Context()
	migrator := e.pool(t, e.migrator, "app", nil)
	if _, err := runtime.Migrate(ctx, migrator); err != nil {
		t.Fatal(err)
	}
	sql, err := os.ReadFile(filepath.Join("..", "testdata", golden, "db", "jobc_producers.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrator.Exec(ctx, string(sql)); err != nil {
		t.Fatalf("apply the SQL producers as the migration role: %v", err)
	}
	if _, err := runtime.ApplyGrants(ctx, migrator, runtime.GrantRoles{Worker: e.worker, Producer: e.producer, ReadOnly: e.reader}); err != nil {
		t.Fatal(err)
	}
	return e, migrator
}
