package schema

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Roles names the database roles that get privileges on jobc's objects. The role that
// runs the migrations owns the objects and needs no grants; it is not named here.
// An empty field grants nothing to that kind of role.
type Roles struct {
	// Worker runs workers: it claims, heartbeats, finishes, retries, rescues, prunes
	// and registers, and may also enqueue and cancel jobs.
	Worker string
	// Producer only enqueues jobs (and reads back the unique key holder of a duplicate).
	Producer string
	// ReadOnly reads everything, for `jobc status`, `jobc jobs list` and dashboards.
	ReadOnly string
}

// object is one database object and the privileges each kind of role holds on it.
//
// The lists are derived from the statements in queries/*.sql, for the worker from
// every statement the worker, the control API and the scheduler run, for the producer
// from queries/enqueue.sql. Three PostgreSQL rules shape them: a statement that reads
// a table's columns (WHERE, RETURNING, a join, a subquery) needs SELECT on it; SELECT
// ... FOR UPDATE needs UPDATE; and an explicit nextval() on the identity sequence
// needs USAGE on it (an identity column's own default does not).
type object struct {
	kind     string // TABLE (also for views), SEQUENCE or FUNCTION
	name     string // unqualified; the schema is prepended
	args     string // FUNCTION only: the argument types, e.g. "bigint[], integer[]"
	worker   []string
	producer []string
	readOnly []string
}

// objects lists every jobc object that roles other than the owner use. A migration
// that adds a table, view, sequence or SECURITY DEFINER function adds it here, in
// this one place; the grants test fails for a relation missing from the list (the
// read-only role cannot read it) and for a statement the worker cannot run.
//
// Functions need no entry as long as they are not SECURITY DEFINER: EXECUTE on a new
// function is granted to PUBLIC by default, and the function runs with the caller's
// privileges, so the tables it touches must be granted here instead.
func objects() []object {
	const (
		sel = "SELECT"
		ins = "INSERT"
		upd = "UPDATE"
		del = "DELETE"
		// The columns of a new job and of a new event: no id, state of a lease, attempt
		// count, errors or publication.
		newJob   = "INSERT (kind, queue, state, priority, payload_version, payload, metadata, available_at, max_attempts, flow_key)"
		newEvent = "INSERT (event, version, subject, ordering_key, payload, metadata)"
	)
	return []object{
		// ClaimJobs, ExtendLeases, RetryJobs, ReleaseJobs, PromoteScheduled,
		// RescueExpired, AgeWaitingJobs, RewritePayloads: UPDATE (and SELECT FOR
		// UPDATE); CompleteJobs, FinishJobs, CompleteJobInTx, CancelPending,
		// DeleteSelected and the rescuer move rows out: DELETE.
		// Both roles insert only the columns of a new job (InsertJob, InsertJobs),
		// never an id, a lease, an attempt count or errors, so neither can take an id
		// ahead of the sequence or write a running job (jobc_jobs_running_leased refuses
		// one without a lease). A unique job goes through jobc_enqueue_unique, a retried
		// finished job back through jobc_retry_selected, and a poisoned job through
		// jobc_poison: the functions that write ids, which run with the owner's rights.
		// The producer reads back only what InsertJob returns (id, queue, state), not
		// other jobs' payloads.
		{kind: "TABLE", name: "jobc_jobs",
			worker:   []string{sel, newJob, upd, del},
			producer: []string{"SELECT (id, queue, state)", newJob},
			readOnly: []string{sel}},
		// Finished rows are inserted by the statements above, deleted by
		// DeleteSelected and RetrySelected (which moves them back to jobc_jobs), and
		// never updated; retention drops their partitions (jobc_history_retire).
		// Roles reach the partitions through this table, which is the only one
		// granted.
		{kind: "TABLE", name: "jobc_jobs_finished",
			worker: []string{sel, ins, del}, readOnly: []string{sel}},
		// Written by jobc_enqueue_unique in the same statement as the job and by
		// jobc_retry_selected for a job it revives (both with their owner's rights: no
		// role plants a key that suppresses a job), read by UniqueKeyHolder, deleted when
		// a job finishes or is pruned (jobc_finish, jobc_history_retire, DeleteSelected).
		{kind: "TABLE", name: "jobc_unique_keys",
			worker: []string{sel, del}, readOnly: []string{sel}},
		// Sleep, Wake, ForgetSleeper, PruneSleepers; every enqueue reads it to decide
		// whether to notify.
		{kind: "TABLE", name: "jobc_sleepers",
			worker: []string{sel, ins, del}, producer: []string{sel}, readOnly: []string{sel}},
		// RecordIdempotencyKey (Job.Once, in the handler's transaction) and
		// PruneIdempotencyKeys.
		{kind: "TABLE", name: "jobc_idempotency_keys",
			worker: []string{sel, ins, del}, readOnly: []string{sel}},
		// RegisterWorker (INSERT ... ON CONFLICT DO UPDATE), WorkerHeartbeat,
		// DeregisterWorker, PruneWorkers, LiveWorkers.
		{kind: "TABLE", name: "jobc_workers",
			worker: []string{sel, ins, upd, del}, readOnly: []string{sel}},
		// The view of every job: GetJob, ListJobs, the control API's selections and
		// the dashboard's reads (LastJobOfKind).
		// (A view runs with its owner's rights on the tables beneath it, so SELECT on
		// it is all a reader needs.)
		{kind: "TABLE", name: "jobc_jobs_all",
			worker: []string{sel}, readOnly: []string{sel}},
		// PauseQueue (INSERT ... ON CONFLICT DO UPDATE) and ResumeQueue, which the
		// control API runs as the worker role; PausedQueues, which every worker reads
		// every poll interval; QueueStats reads it for dashboards.
		{kind: "TABLE", name: "jobc_queues",
			worker: []string{sel, ins, upd}, readOnly: []string{sel}},
		// Flow control: workers record the spec's limits as they start
		// (RegisterLimits) and the control API, run as the worker role, sets and
		// resets an operator's (SetLimit, ResetLimit); every claim reads them.
		{kind: "TABLE", name: "jobc_limits",
			worker: []string{sel, ins, upd}, readOnly: []string{sel}},
		// What claims apply of them (a view: jobc_claim_flow, ListLimits, WaitFacts).
		{kind: "TABLE", name: "jobc_limits_in_force",
			worker: []string{sel}, readOnly: []string{sel}},
		// The keys' state rows: jobc_claim_flow creates, locks and updates them;
		// PruneFlowKeys deletes those no job needs.
		{kind: "TABLE", name: "jobc_flow_keys",
			worker: []string{sel, ins, upd, del}, readOnly: []string{sel}},
		// CheckSchema, which a worker runs at start (and an application may run),
		// reads the applied migrations and function library; only the owner writes them.
		{kind: "TABLE", name: "jobc_migrations",
			worker: []string{sel}, producer: []string{sel}, readOnly: []string{sel}},
		{kind: "TABLE", name: "jobc_library",
			worker: []string{sel}, producer: []string{sel}, readOnly: []string{sel}},
		// The view of unfinished and finished jobs: GetJob and ListJobs
		// read it.
		{kind: "TABLE", name: "jobc_jobs_all", // GRANT ... ON TABLE covers views
			worker: []string{sel}, readOnly: []string{sel}},
		// The outbox: Publish<Event> inserts rows in the business
		// transaction (and reads back their ids); relays claim, mark and prune them.
		// The producer inserts the columns of a new event only: no id, state, lease or
		// publication time (the relay checks the rest against the spec).
		{kind: "TABLE", name: "jobc_events",
			worker:   []string{sel, newEvent, upd, del},
			producer: []string{"SELECT (id)", newEvent},
			readOnly: []string{sel}},
		// The identity sequence of jobc_jobs.id. Inserts take their ids from the column
		// default, which needs no privilege on it, and the functions that take ids with
		// nextval run as its owner; the worker role keeps USAGE on it as on every other
		// object of the schema (a nextval only skips an id).
		{kind: "SEQUENCE", name: "jobc_jobs_id_seq", worker: []string{"USAGE"}},
		// The identity sequence of jobc_events.id. No statement takes ids from it by
		// hand any more; the worker role, which claims, marks and prunes the outbox,
		// keeps USAGE on it as on every other object of the schema.
		{kind: "SEQUENCE", name: "jobc_events_id_seq", worker: []string{"USAGE"}},
		// The gate for unique jobs, SECURITY DEFINER; EXECUTE is
		// revoked from PUBLIC, so only the roles that enqueue may call it.
		{kind: "FUNCTION", name: "jobc_enqueue_unique",
			args:     "text, text, integer, integer, integer, jsonb, jsonb, timestamptz, text, text[], text, text",
			worker:   []string{"EXECUTE"},
			producer: []string{"EXECUTE"}},
		// RetrySelected and PoisonJob, with the rescuer:
		// SECURITY DEFINER, EXECUTE revoked from PUBLIC.
		{kind: "FUNCTION", name: "jobc_retry_selected",
			args:   "bigint[], text[], text[], text[], text, timestamptz, bigint",
			worker: []string{"EXECUTE"}},
		{kind: "FUNCTION", name: "jobc_poison",
			args:   "bigint, text, integer, text",
			worker: []string{"EXECUTE"}},
		// Workflows: only their SECURITY DEFINER functions (jobc_workflow_start
		// and jobc_workflow_signal for the roles that enqueue, the others for the
		// worker) write their tables; GetWorkflow reads them and PruneWorkflows
		// deletes ended ones with their steps, items and signals.
		{kind: "TABLE", name: "jobc_workflows",
			worker: []string{sel, del}, producer: []string{sel}, readOnly: []string{sel}},
		{kind: "TABLE", name: "jobc_workflow_steps",
			worker: []string{sel, del}, producer: []string{sel}, readOnly: []string{sel}},
		{kind: "TABLE", name: "jobc_workflow_items",
			worker: []string{sel, del}, producer: []string{sel}, readOnly: []string{sel}},
		{kind: "TABLE", name: "jobc_workflow_signals",
			worker: []string{sel, del}, producer: []string{sel}, readOnly: []string{sel}},
		// The definitions jobc_workflow_start has checked: written by it alone.
		{kind: "TABLE", name: "jobc_workflow_definitions",
			worker: []string{sel}, producer: []string{sel}, readOnly: []string{sel}},
		{kind: "SEQUENCE", name: "jobc_workflows_id_seq", worker: []string{"USAGE"}},
		{kind: "SEQUENCE", name: "jobc_workflow_signals_id_seq", worker: []string{"USAGE"}},
		{kind: "SEQUENCE", name: "jobc_workflow_definitions_id_seq", worker: []string{"USAGE"}},
		{kind: "FUNCTION", name: "jobc_workflow_start",
			args:     "text, text, integer, jsonb, text, jsonb",
			worker:   []string{"EXECUTE"},
			producer: []string{"EXECUTE"}},
		// jobc_finish, run by the worker role, advances workflows through it.
		{kind: "FUNCTION", name: "jobc_workflows_advance",
			args:   "jobc_job_end[]",
			worker: []string{"EXECUTE"}},
		// CancelWorkflow and RetryWorkflow, which the control API runs as the
		// worker role, and the timers every worker's scheduler fires.
		{kind: "FUNCTION", name: "jobc_workflow_cancel",
			args:   "bigint",
			worker: []string{"EXECUTE"}},
		{kind: "FUNCTION", name: "jobc_workflow_retry",
			args:   "bigint",
			worker: []string{"EXECUTE"}},
		{kind: "FUNCTION", name: "jobc_workflow_fire_timers",
			args:   "integer",
			worker: []string{"EXECUTE"}},
		// The pruner's: they add and drop history's partitions, which only the
		// owner may, and delete the DEFAULT partitions' old rows (SECURITY DEFINER).
		{kind: "FUNCTION", name: "jobc_history_prepare",
			args:   "jobc_state, interval, interval",
			worker: []string{"EXECUTE"}},
		{kind: "FUNCTION", name: "jobc_history_retire",
			args:   "jobc_state, timestamptz, integer",
			worker: []string{"EXECUTE"}},
		// SignalWorkflow, for the roles that enqueue, as StartWorkflow.
		{kind: "FUNCTION", name: "jobc_workflow_signal",
			args:     "bigint, text, integer, jsonb",
			worker:   []string{"EXECUTE"},
			producer: []string{"EXECUTE"}},
	}
}

// Grants returns the statements that give roles the privileges they need on the jobc
// objects in schemaName, one statement per object and role, each ending in ";". They
// are idempotent (GRANT of a held privilege is a no-op) and must run as the owner of
// the objects, the role that ran the migrations, or as a superuser.
func Grants(schemaName string, roles Roles) ([]string, error) {
	if schemaName == "" {
		return nil, errors.New("schema: grants: no schema name")
	}
	type grantee struct {
		flag, name string
		privs      func(object) []string
	}
	grantees := []grantee{
		{"worker", roles.Worker, func(o object) []string { return o.worker }},
		{"producer", roles.Producer, func(o object) []string { return o.producer }},
		{"read-only", roles.ReadOnly, func(o object) []string { return o.readOnly }},
	}
	seen := map[string]string{}
	named := false
	for _, g := range grantees {
		if g.name == "" {
			continue
		}
		named = true
		if other, dup := seen[g.name]; dup {
			return nil, fmt.Errorf("schema: grants: role %q is named as both the %s and the %s role; use one role per kind", g.name, other, g.flag)
		}
		seen[g.name] = g.flag
	}
	if !named {
		return nil, errors.New("schema: grants: no role named")
	}

	var out []string
	for _, g := range grantees {
		if g.name == "" {
			continue
		}
		role := pgx.Identifier{g.name}.Sanitize()
		out = append(out, fmt.Sprintf("GRANT USAGE ON SCHEMA %s TO %s;", pgx.Identifier{schemaName}.Sanitize(), role))
		for _, o := range objects() {
			if privs := g.privs(o); len(privs) > 0 {
				out = append(out, grant(privs, o, schemaName, role))
			}
		}
	}
	return out, nil
}

// grant renders one GRANT of privs on o in schemaName to role (already quoted).
func grant(privs []string, o object, schemaName, role string) string {
	target := pgx.Identifier{schemaName, o.name}.Sanitize()
	if o.kind == "FUNCTION" {
		target += "(" + o.args + ")"
	}
	return fmt.Sprintf("GRANT %s ON %s %s TO %s;", strings.Join(privs, ", "), o.kind, target, role)
}
