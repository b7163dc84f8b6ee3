package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime"
)

// The order workflow of these tests: reserve, then charge and notify side by side,
// then ship (a diamond). Ship's payload maps the order from the input, the charge
// from charge's result and the amount from reserve's, which it comes after through
// charge.
type (
	orderInput struct {
		OrderID string `json:"order_id"`
		Cents   int64  `json:"cents"`
	}
	reserved struct {
		TotalCents int64 `json:"total_cents"`
	}
	charged struct {
		ChargeID string `json:"charge_id"`
	}
	shipment struct {
		OrderID       string `json:"order_id"`
		ChargeID      string `json:"charge_id"`
		ReservedCents int64  `json:"reserved_cents"`
	}
)

const (
	orderSchema = `{"type":"object","additionalProperties":false,"required":["order_id","cents"],
		"properties":{"order_id":{"type":"string"},"cents":{"type":"integer"}}}`
	shipmentSchema = `{"type":"object","additionalProperties":false,"required":["order_id","charge_id","reserved_cents"],
		"properties":{"order_id":{"type":"string"},"charge_id":{"type":"string"},"reserved_cents":{"type":"integer"}}}`
)

// stepType is a job type of the order queue with payload schema payload and, if
// result is not "", a result of that schema.
func stepType(t *testing.T, kind, payload, result string, tweak func(*runtime.JobType)) *runtime.JobType {
	t.Helper()
	jt := runtime.JobType{Kind: kind, Queue: "orders", Priority: 5, MaxAttempts: 3,
		Backoff:      runtime.Backoff{Kind: runtime.BackoffConstant, Initial: 10 * time.Millisecond},
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: payload}}}
	if result != "" {
		jt.ResultWriteVersion, jt.ResultVersions = 1, []runtime.Version{{Number: 1, Schema: result}}
	}
	if tweak != nil {
		tweak(&jt)
	}
	out, err := runtime.NewJobType(jt)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type orderTypes struct {
	reserve, charge, notify, ship *runtime.JobType
}

// inBothModes runs test as a parallel subtest for each on_failure mode.
func inBothModes(t *testing.T, test func(t *testing.T, mode runtime.OnFailure)) {
	t.Helper()
	for _, mode := range []runtime.OnFailure{runtime.OnFailureCancel, runtime.OnFailureContinue} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			test(t, mode)
		})
	}
}

// chargeOnce is the charge step's job type with one attempt: its failure fails the step.
func chargeOnce(t *testing.T) *runtime.JobType {
	return stepType(t, "charge", orderSchema, `{"type":"object","required":["charge_id"],"properties":{"charge_id":{"type":"string"}}}`,
		func(jt *runtime.JobType) { jt.MaxAttempts = 1 })
}

func newOrderTypes(t *testing.T) orderTypes {
	return orderTypes{
		reserve: stepType(t, "reserve", orderSchema, `{"type":"object","required":["total_cents"],"properties":{"total_cents":{"type":"integer"}}}`, nil),
		charge:  stepType(t, "charge", orderSchema, `{"type":"object","required":["charge_id"],"properties":{"charge_id":{"type":"string"}}}`, nil),
		notify:  stepType(t, "notify", orderSchema, "", nil),
		ship:    stepType(t, "ship", shipmentSchema, "", nil),
	}
}

func (o orderTypes) workflow(t *testing.T, onFailure runtime.OnFailure) *runtime.WorkflowType {
	t.Helper()
	wt, err := runtime.NewWorkflowType(runtime.WorkflowType{
		Name: "fulfil_order", InputWriteVersion: 1, InputVersions: []runtime.Version{{Number: 1, Schema: orderSchema}},
		OnFailure: onFailure,
		Steps: []runtime.Step{
			{Name: "reserve", Job: o.reserve},
			{Name: "charge", Job: o.charge, After: []string{"reserve"}},
			{Name: "notify", Job: o.notify, After: []string{"reserve"}},
			{Name: "ship", Job: o.ship, After: []string{"charge", "notify"}, Map: map[string]string{
				"order_id": "input.order_id", "charge_id": "charge.result.charge_id", "reserved_cents": "reserve.result.total_cents",
			}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return wt
}

// register makes w run the order steps; fail, if set, decides which handlers fail
// (with an error of no class, retried as the job type says).
func (o orderTypes) register(t *testing.T, w *runtime.Worker, work time.Duration, fail func(kind string, p orderInput) error) {
	t.Helper()
	failed := func(kind string, p orderInput) error {
		time.Sleep(work)
		if fail != nil {
			return fail(kind, p)
		}
		return nil
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(runtime.HandleResult(w, o.reserve, func(_ context.Context, _ *runtime.Job, p orderInput) (reserved, error) {
		return reserved{TotalCents: p.Cents}, failed("reserve", p)
	}))
	must(runtime.HandleResult(w, o.charge, func(_ context.Context, _ *runtime.Job, p orderInput) (charged, error) {
		return charged{ChargeID: "ch-" + p.OrderID}, failed("charge", p)
	}))
	must(runtime.Handle(w, o.notify, func(ctx context.Context, _ *runtime.Job, p orderInput) error {
		return failed("notify", p)
	}))
	must(runtime.Handle(w, o.ship, func(context.Context, *runtime.Job, shipment) error { return nil }))
}

// waitWorkflow polls workflow id until it leaves running, for at most timeout, and
// fails with what it last saw.
func waitWorkflow(t *testing.T, pool *pgxpool.Pool, id runtime.WorkflowID, timeout time.Duration) *runtime.WorkflowInfo {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		info, err := runtime.GetWorkflow(t.Context(), pool, id)
		if err != nil {
			t.Fatal(err)
		}
		if info.State != runtime.WorkflowRunning {
			return info
		}
		if time.Now().After(deadline) {
			t.Fatalf("workflow %d still running after %s: %s", id, timeout, describeSteps(info))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func describeSteps(info *runtime.WorkflowInfo) string {
	var b strings.Builder
	for _, s := range info.Steps {
		fmt.Fprintf(&b, "\n  %s: %s (job %d) %s", s.Name, s.State, s.JobID, s.Result)
	}
	return b.String()
}

// TestWorkflowRunsStepsAfterTheirPredecessors: a diamond's steps run each once, each
// after every step it comes after completed (by the database's clock), the last one
// with a payload mapped from the input and from two predecessors' results; the
// workflow then completes, with every step's result kept.
func TestWorkflowRunsStepsAfterTheirPredecessors(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	o := newOrderTypes(t)
	wt := o.workflow(t, "")
	id, err := runtime.StartWorkflow(ctx, pool, wt, orderInput{OrderID: "o-1", Cents: 1250})
	if err != nil {
		t.Fatal(err)
	}
	w := runtime.NewWorker(pool, testConfig(map[string]runtime.QueueConfig{"orders": {MaxWorkers: 4}}))
	o.register(t, w, 5*time.Millisecond, nil)
	startWorker(t, w)
	info := waitWorkflow(t, pool, id, 10*time.Second)
	if info.State != runtime.WorkflowCompleted || info.FinishedAt == nil {
		t.Fatalf("workflow %s (finished %v); want completed:%s", info.State, info.FinishedAt, describeSteps(info))
	}
	if got := strings.Join(stepNames(info), ","); got != "reserve,charge,notify,ship" {
		t.Errorf("steps %s; want them in declaration order", got)
	}
	byName := map[string]runtime.StepInfo{}
	for _, s := range info.Steps {
		byName[s.Name] = s
		if s.State != runtime.StepCompleted || s.JobID == 0 {
			t.Errorf("step %s: %s, job %d; want completed with a job", s.Name, s.State, s.JobID)
		}
	}
	if r := byName["charge"].Result; string(r) != `{"charge_id": "ch-o-1"}` {
		t.Errorf("charge's result %s; want its handler's", r)
	}
	var payload []byte
	if err := pool.QueryRow(ctx, `SELECT payload FROM jobc_jobs_finished WHERE id = $1`, byName["ship"].JobID).Scan(&payload); err != nil {
		t.Fatal(err)
	}
	var got shipment
	if err := json.Unmarshal(payload, &got); err != nil || got != (shipment{OrderID: "o-1", ChargeID: "ch-o-1", ReservedCents: 1250}) {
		t.Errorf("ship's payload %s (%v); want the order from the input, the charge and the reserved amount from the results", payload, err)
	}
	// Every step's job started after the jobs of the steps it comes after finished.
	for _, s := range info.Steps {
		for _, a := range s.After {
			var ok bool
			if err := pool.QueryRow(ctx, `SELECT s.attempted_at >= p.finished_at FROM jobc_jobs_finished s, jobc_jobs_finished p
				WHERE s.id = $1 AND p.id = $2`, s.JobID, byName[a].JobID).Scan(&ok); err != nil || !ok {
				t.Errorf("step %s (job %d) started before step %s (job %d) finished (%v)", s.Name, s.JobID, a, byName[a].JobID, err)
			}
		}
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE workflow_id = $1`, int64(id)); n != 4 {
		t.Errorf("%d jobs ran for the workflow; want 4, one per step", n)
	}
}

func stepNames(info *runtime.WorkflowInfo) []string {
	var out []string
	for _, s := range info.Steps {
		out = append(out, s.Name)
	}
	return out
}

// TestWorkflowFanInRunsOnce: with many workflows and workers completing their steps
// side by side, each fan-in step runs exactly once, however its predecessors'
// completions interleave, and every workflow completes.
func TestWorkflowFanInRunsOnce(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	o := newOrderTypes(t)
	wt := o.workflow(t, "")
	const workflows = 40
	for i := range workflows {
		if _, err := runtime.StartWorkflow(ctx, pool, wt, orderInput{OrderID: fmt.Sprintf("o-%d", i), Cents: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		w := runtime.NewWorker(pool, testConfig(map[string]runtime.QueueConfig{"orders": {MaxWorkers: 8}}))
		o.register(t, w, time.Millisecond, nil)
		startWorker(t, w)
	}
	waitFor(t, "every workflow to end", 30*time.Second, func() bool {
		return countRows(t, pool, `SELECT count(*) FROM jobc_workflows WHERE state = 'running'`) == 0
	})
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_workflows WHERE state = 'completed'`); n != workflows {
		t.Errorf("%d of %d workflows completed", n, workflows)
	}
	rows, err := pool.Query(ctx, `SELECT workflow_id, workflow_step, count(*) FROM jobc_jobs_finished
		GROUP BY workflow_id, workflow_step HAVING count(*) <> 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var wf int64
		var step string
		var n int
		if err := rows.Scan(&wf, &step, &n); err != nil {
			t.Fatal(err)
		}
		t.Errorf("workflow %d: step %s ran %d jobs; want 1", wf, step, n)
	}
	rows.Close()
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE state = 'completed'`); n != 4*workflows {
		t.Errorf("%d jobs completed; want %d", n, 4*workflows)
	}
}

// TestWorkflowFailure: a step that fails for good cancels the steps after it. With
// on_failure cancel the workflow fails at once and a step running beside it is
// asked to stop; with continue, the steps that do not depend on it run to their end
// and the workflow then ends failed.
func TestWorkflowFailure(t *testing.T) {
	t.Parallel()
	inBothModes(t, func(t *testing.T, mode runtime.OnFailure) {
		pool := newDB(t)
		ctx := t.Context()
		o := newOrderTypes(t)
		o.charge = chargeOnce(t)
		wt := o.workflow(t, mode)
		id, err := runtime.StartWorkflow(ctx, pool, wt, orderInput{OrderID: "o-1", Cents: 5})
		if err != nil {
			t.Fatal(err)
		}
		w := runtime.NewWorker(pool, testConfig(map[string]runtime.QueueConfig{"orders": {MaxWorkers: 4}}))
		stopped := make(chan error, 1)
		must := func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		}
		must(runtime.HandleResult(w, o.reserve, func(context.Context, *runtime.Job, orderInput) (reserved, error) {
			return reserved{TotalCents: 5}, nil
		}))
		must(runtime.HandleResult(w, o.charge, func(context.Context, *runtime.Job, orderInput) (charged, error) {
			return charged{}, errors.New("card declined")
		}))
		// notify runs beside charge: with cancel it is asked to stop, with
		// continue it runs to its end.
		must(runtime.Handle(w, o.notify, func(ctx context.Context, _ *runtime.Job, _ orderInput) error {
			if mode == runtime.OnFailureContinue {
				return nil
			}
			select {
			case <-ctx.Done():
				stopped <- ctx.Err()
				return ctx.Err()
			case <-time.After(10 * time.Second):
				return nil
			}
		}))
		must(runtime.Handle(w, o.ship, func(context.Context, *runtime.Job, shipment) error {
			t.Error("ship ran after charge failed")
			return nil
		}))
		startWorker(t, w)
		info := waitWorkflow(t, pool, id, 10*time.Second)
		want := map[string]runtime.StepState{"reserve": runtime.StepCompleted, "charge": runtime.StepFailed,
			"notify": runtime.StepCompleted, "ship": runtime.StepCancelled}
		if mode == runtime.OnFailureCancel {
			select {
			case err := <-stopped:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("notify stopped with %v; want its context cancelled", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("notify was not asked to stop:%s", describeSteps(info))
			}
			waitFor(t, "notify to end", 10*time.Second, func() bool {
				info, _ = runtime.GetWorkflow(ctx, pool, id)
				return info.Steps[2].State != runtime.StepRunning
			})
			want["notify"] = runtime.StepCancelled
		}
		if info.State != runtime.WorkflowFailed || info.FinishedAt == nil {
			t.Errorf("workflow %s; want failed:%s", info.State, describeSteps(info))
		}
		for _, s := range info.Steps {
			if s.State != want[s.Name] {
				t.Errorf("step %s: %s; want %s:%s", s.Name, s.State, want[s.Name], describeSteps(info))
			}
		}
		if info.Steps[3].JobID != 0 {
			t.Errorf("ship has job %d; want none", info.Steps[3].JobID)
		}
	})
}

// TestStartWorkflowInTransaction: a workflow started in a transaction that rolls back
// leaves nothing, neither the workflow nor its first job; an input that fails its
// schema starts nothing.
func TestStartWorkflowInTransaction(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	wt := newOrderTypes(t).workflow(t, "")
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id, err := runtime.StartWorkflow(ctx, tx, wt, orderInput{OrderID: "o-1", Cents: 1})
	if err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs`); n != 0 {
		t.Errorf("%d jobs visible before the commit", n)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := runtime.GetWorkflow(ctx, pool, id); !errors.Is(err, runtime.ErrWorkflowNotFound) {
		t.Errorf("workflow of a rolled-back transaction: %v; want ErrWorkflowNotFound", err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs`); n != 0 {
		t.Errorf("%d jobs after the rollback; want 0", n)
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		id, err = runtime.StartWorkflow(ctx, tx, wt, orderInput{OrderID: "o-2", Cents: 2})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	info, err := runtime.GetWorkflow(ctx, pool, id)
	if err != nil || info.State != runtime.WorkflowRunning || info.Steps[0].State != runtime.StepRunning || info.Steps[1].State != runtime.StepWaiting {
		t.Fatalf("committed workflow: %+v, %v; want running, reserve running, charge waiting", info, err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs WHERE workflow_id = $1 AND kind = 'reserve' AND state = 'available'`, int64(id)); n != 1 {
		t.Errorf("%d reserve jobs available; want the first step's one", n)
	}
	// Its job is not deleted (the step would wait for ever): an operator cancels it.
	if res, err := runtime.DeleteJobs(ctx, pool, runtime.JobSelection{IDs: []int64{info.Steps[0].JobID}}); err != nil || res.Changed != 0 || res.Skipped != 1 {
		t.Errorf("delete a waiting step's job: %+v, %v; want it left alone", res, err)
	}
	if st, err := runtime.CancelJob(ctx, pool, info.Steps[0].JobID); err != nil || st != runtime.StateCancelled {
		t.Fatalf("cancel the waiting step's job: %s, %v", st, err)
	}
	if info, err = runtime.GetWorkflow(ctx, pool, id); err != nil || info.State != runtime.WorkflowFailed || info.Steps[0].State != runtime.StepCancelled || info.Steps[3].State != runtime.StepCancelled {
		t.Errorf("after its first step's job was cancelled: %+v, %v; want the workflow failed, every step cancelled", info, err)
	}
	var pe *runtime.PayloadError
	if _, err := runtime.StartWorkflow(ctx, pool, wt, map[string]any{"order_id": 7}); !errors.As(err, &pe) {
		t.Errorf("StartWorkflow with an invalid input: %v; want a *PayloadError", err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_workflows`); n != 1 {
		t.Errorf("%d workflows; want the committed one alone", n)
	}
}

// TestWorkflowTypeIsChecked: NewWorkflowType refuses what could never run as
// declared, naming the step and what is wrong.
func TestWorkflowTypeIsChecked(t *testing.T) {
	t.Parallel()
	o := newOrderTypes(t)
	flowJob := stepType(t, "limited", orderSchema, "", func(jt *runtime.JobType) {
		jt.Flow = &runtime.Flow{By: []string{"order_id"}, Concurrency: 1}
	})
	input := []runtime.Version{{Number: 1, Schema: orderSchema}}
	for _, c := range []struct {
		name  string
		steps []runtime.Step
		want  string
	}{
		{"cycle", []runtime.Step{{Name: "a", Job: o.notify, After: []string{"c"}}, {Name: "b", Job: o.notify, After: []string{"a"}}, {Name: "c", Job: o.notify, After: []string{"b"}}},
			"steps a -> c -> b -> a come after one another in a cycle"},
		{"unknown step", []runtime.Step{{Name: "a", Job: o.notify, After: []string{"nope"}}}, "step a comes after nope, which is not a step"},
		{"twice", []runtime.Step{{Name: "a", Job: o.notify}, {Name: "a", Job: o.notify}}, "step a is declared twice"},
		{"reserved", []runtime.Step{{Name: "input", Job: o.notify}}, "step input: the name is reserved"},
		{"source not before", []runtime.Step{{Name: "reserve", Job: o.reserve}, {Name: "ship", Job: o.ship, Map: map[string]string{"charge_id": "reserve.result.total_cents"}}},
			"step ship: map charge_id: source \"reserve.result.total_cents\": step ship does not come after reserve"},
		{"no result", []runtime.Step{{Name: "notify", Job: o.notify}, {Name: "ship", Job: o.ship, After: []string{"notify"}, Map: map[string]string{"order_id": "notify.result.id"}}},
			"job type notify of step notify declares no result"},
		{"bad source", []runtime.Step{{Name: "ship", Job: o.ship, Map: map[string]string{"order_id": "input..order_id"}}}, "want input[.<field>...]"},
		{"not a result", []runtime.Step{{Name: "reserve", Job: o.reserve}, {Name: "ship", Job: o.ship, After: []string{"reserve"}, Map: map[string]string{"order_id": "reserve.total_cents"}}},
			"want reserve.result[.<field>...]"},
		{"flow control", []runtime.Step{{Name: "a", Job: flowJob}}, "job type limited has flow control"},
	} {
		_, err := runtime.NewWorkflowType(runtime.WorkflowType{Name: "w", InputWriteVersion: 1, InputVersions: input, Steps: c.steps})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error containing %q", c.name, err, c.want)
		}
	}
}

// TestPrunerPrunesEndedWorkflows: a workflow that ended longer ago than jobs of its
// state are kept is deleted with its steps; a younger one and a running one are not.
func TestPrunerPrunesEndedWorkflows(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	o := newOrderTypes(t)
	wt := o.workflow(t, "")
	var ended []runtime.WorkflowID
	for i := range 2 {
		id, err := runtime.StartWorkflow(ctx, pool, wt, orderInput{OrderID: fmt.Sprintf("o-%d", i), Cents: 1})
		if err != nil {
			t.Fatal(err)
		}
		ended = append(ended, id)
	}
	w := runtime.NewWorker(pool, testConfig(map[string]runtime.QueueConfig{"orders": {MaxWorkers: 4}}))
	o.register(t, w, 0, nil)
	stop := startWorker(t, w)
	for _, id := range ended {
		if info := waitWorkflow(t, pool, id, 10*time.Second); info.State != runtime.WorkflowCompleted {
			t.Fatalf("workflow %d: %s", id, info.State)
		}
	}
	stop()
	running, err := runtime.StartWorkflow(ctx, pool, wt, orderInput{OrderID: "o-running", Cents: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE jobc_workflows SET finished_at = now() - interval '2 hours', created_at = now() - interval '3 hours' WHERE id = $1`, int64(ended[0])); err != nil {
		t.Fatal(err)
	}
	// An item and a signal of each ended workflow (no key cascades to items: the
	// pruner deletes them itself).
	for _, id := range ended {
		if _, err := pool.Exec(ctx, `INSERT INTO jobc_workflow_items (workflow_id, step, item, state, job_id) VALUES ($1, 'ship', 0, 'completed', 0)`, int64(id)); err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO jobc_workflow_signals (workflow_id, name, version, payload) VALUES ($1, 'paid', 1, '{}')`, int64(id)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := runtime.NewPrunerForTest(pool, runtime.Retention{Completed: time.Hour, Failed: time.Hour, Cancelled: time.Hour, IdempotencyKeys: -1}, 10, time.Now).RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Workflows != 1 {
		t.Errorf("pruned %d workflows; want the old one", res.Workflows)
	}
	if _, err := runtime.GetWorkflow(ctx, pool, ended[0]); !errors.Is(err, runtime.ErrWorkflowNotFound) {
		t.Errorf("the old workflow: %v; want it pruned", err)
	}
	for _, table := range []string{"jobc_workflow_steps", "jobc_workflow_items", "jobc_workflow_signals"} {
		if n := countRows(t, pool, `SELECT count(*) FROM `+table+` WHERE workflow_id = $1`, int64(ended[0])); n != 0 {
			t.Errorf("%d rows of %s of the pruned workflow remain", n, table)
		}
		if n := countRows(t, pool, `SELECT count(*) FROM `+table+` WHERE workflow_id = $1`, int64(ended[1])); n == 0 {
			t.Errorf("no rows of %s of the kept workflow remain", table)
		}
	}
	for _, id := range []runtime.WorkflowID{ended[1], running} {
		if _, err := runtime.GetWorkflow(ctx, pool, id); err != nil {
			t.Errorf("workflow %d: %v; want it kept", id, err)
		}
	}
}

// TestCancelWorkflow: a running workflow is cancelled at once: its waiting steps and
// its first step's waiting job are cancelled, and nothing after runs; cancelling it
// again, or a workflow that ended, says it ended; an unknown id is not found.
func TestCancelWorkflow(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	wt := newOrderTypes(t).workflow(t, "")
	id, err := runtime.StartWorkflow(ctx, pool, wt, orderInput{OrderID: "o-1", Cents: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := runtime.CancelWorkflow(ctx, pool, id); err != nil {
		t.Fatal(err)
	}
	info, err := runtime.GetWorkflow(ctx, pool, id)
	if err != nil {
		t.Fatal(err)
	}
	if info.State != runtime.WorkflowCancelled || info.FinishedAt == nil {
		t.Errorf("workflow %s (finished %v); want cancelled", info.State, info.FinishedAt)
	}
	for _, s := range info.Steps {
		if s.State != runtime.StepCancelled {
			t.Errorf("step %s: %s; want cancelled:%s", s.Name, s.State, describeSteps(info))
		}
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE workflow_id = $1 AND state = 'cancelled'`, int64(id)); n != 1 {
		t.Errorf("%d cancelled jobs; want the first step's", n)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs`); n != 0 {
		t.Errorf("%d jobs left to run", n)
	}
	if n := countRows(t, pool, `SELECT steps_left FROM jobc_workflows WHERE id = $1`, int64(id)); n != 0 {
		t.Errorf("steps_left %d; want 0", n)
	}
	if err := runtime.CancelWorkflow(ctx, pool, id); !errors.Is(err, runtime.ErrWorkflowEnded) || !strings.Contains(err.Error(), "cancelled") {
		t.Errorf("cancel again: %v; want ErrWorkflowEnded naming its state", err)
	}
	if err := runtime.CancelWorkflow(ctx, pool, id+1000); !errors.Is(err, runtime.ErrWorkflowNotFound) {
		t.Errorf("cancel an unknown workflow: %v; want ErrWorkflowNotFound", err)
	}
}

// TestStartRefusesMalformedDefinitions: jobc_workflow_start, which producer roles may
// call from SQL, refuses a definition whose steps could not be run later (a priority
// out of range, a map source that is not a path): such a step would make the
// completion of the step before it fail, and every outcome of its batch with it.
func TestStartRefusesMalformedDefinitions(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	job := `{"name":"a","kind":"k","queue":"q","priority":%s,"max_attempts":1,"payload_version":1,"map":%s}`
	var steps []string
	for _, c := range []struct{ priority, mapping string }{
		{"42", `{"n":["input","n"]}`}, {`"high"`, `null`}, {"5", `{"n":"input.n"}`}, {"5", `{"n":["items","n"]}`}, {"5", `[]`},
		{"5", `{"n":["item","n"]}`}, {"5", `{"n":["count","a","sum"]}`}, {"5", `{"n":["result"]}`}, {"5", `{"n":[1]}`},
	} {
		steps = append(steps, fmt.Sprintf(job, c.priority, c.mapping))
	}
	steps = append(steps,
		`{"name":"a","kind":"k","queue":"q","priority":5,"max_attempts":1,"payload_version":1,"for_each":["count","x","completed"]}`,
		`{"name":"a","kind":"k","queue":"q","priority":5,"max_attempts":1,"payload_version":1,"for_each":"input.items"}`,
		`{"name":"a","kind":"k","queue":"q","priority":5,"max_attempts":1,"payload_version":1,"for_each":["input"],"on_item_failure":"ignore"}`,
		`{"name":"a","sleep_ms":-1}`, `{"name":"a","sleep_ms":"1h"}`, `{"name":"a"}`,
		`{"name":"a","wait":{"signal":"undeclared"}}`, `{"name":"a","wait":{"signal":"paid","timeout_ms":0}}`)
	for _, step := range steps {
		def := `{"signals":{"paid":1},"steps":[` + step + `,{"name":"b","kind":"k","queue":"q","priority":5,"max_attempts":1,"payload_version":1,"after":["a"]}]}`
		_, err := pool.Exec(ctx, `SELECT jobc_workflow_start('w', $1, 1, '{"n":1}')`, def)
		if err == nil || !strings.Contains(err.Error(), "a step is not") {
			t.Errorf("start with %s: %v; want it refused, naming the shape of a step", def, err)
		}
	}
	b := `{"name":"b","kind":"k","queue":"q","priority":5,"max_attempts":1,"payload_version":1,"after":[%s]}`
	for want, def := range map[string]string{
		"two steps have the same name":                            `{"steps":[` + fmt.Sprintf(b, "") + `,` + fmt.Sprintf(b, "") + `]}`,
		"a step comes after a step the workflow does not declare": `{"steps":[` + fmt.Sprintf(b, `"a"`) + `]}`,
		"its definition is not JSON":                              `{"steps":[` + fmt.Sprintf(b, "") + `]`,
		"a definition with steps":                                 `[` + fmt.Sprintf(b, "") + `]`,
	} {
		_, err := pool.Exec(ctx, `SELECT jobc_workflow_start('w', $1, 1, '{"n":1}')`, def)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("start with %s: %v; want it refused: %s", def, err, want)
		}
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_workflows`) + countRows(t, pool, `SELECT count(*) FROM jobc_jobs`); n != 0 {
		t.Errorf("%d workflows and jobs after refused starts", n)
	}
	// A definition is checked once: the first start records it as checked, and only
	// an accepted one.
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_workflow_definitions`); n != 0 {
		t.Errorf("%d definitions recorded as checked after refused starts", n)
	}
	good := `{"steps":[` + fmt.Sprintf(b, "") + `]}`
	for range 2 {
		if _, err := pool.Exec(ctx, `SELECT jobc_workflow_start('w', $1, 1, '{"n":1}')`, good); err != nil {
			t.Fatal(err)
		}
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_workflow_definitions WHERE source = $1`, good); n != 1 {
		t.Errorf("%d rows record the definition of two starts; want 1", n)
	}
	if n := countRows(t, pool, `SELECT count(DISTINCT definition_id) FROM jobc_workflows`); n != 1 {
		t.Errorf("two starts of one definition name %d definitions; want 1", n)
	}
}

// TestDefinitionRowHoldsWhatAStartReads: a definition's row holds, derived as it is
// stored, what a start reads instead of walking the steps: how many steps, the job
// steps that come after none (whose jobs a start inserts) and the other steps that do
// (which it runs: a sleep's row); and for a step's end, each step's successors. A
// second start of the text reads them and starts the same.
func TestDefinitionRowHoldsWhatAStartReads(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	job := `{"name":%q,"kind":"k","queue":"q","priority":5,"max_attempts":1,"payload_version":1,"after":%s}`
	def := `{"steps":[` + fmt.Sprintf(job, "a", `[]`) + `,` + fmt.Sprintf(job, "b", `["a","z"]`) + `,` +
		fmt.Sprintf(job, "c", `[]`) + `,{"name":"z","after":[],"sleep_ms":3600000}]}`
	for range 2 {
		var id int64
		if err := pool.QueryRow(ctx, `SELECT jobc_workflow_start('w', $1, 1, '{}')`, def).Scan(&id); err != nil {
			t.Fatal(err)
		}
		var steps int
		var jobs, other, next string
		if err := pool.QueryRow(ctx, `SELECT d.steps, (SELECT string_agg(e->>'name', ',' ORDER BY e->>'name') FROM jsonb_array_elements(d.first_jobs) e),
				array_to_string(d.first_other, ','),
				(SELECT string_agg(n.key || '>' || (SELECT string_agg(x->>'name', ',') FROM jsonb_array_elements(n.value) x), ';' ORDER BY n.key)
				 FROM jsonb_each(d.successors) n)
			FROM jobc_workflows w JOIN jobc_workflow_definitions d ON d.id = w.definition_id WHERE w.id = $1`, id).Scan(&steps, &jobs, &other, &next); err != nil {
			t.Fatal(err)
		}
		if steps != 4 || jobs != "a,c" || other != "z" || next != "a>b;z>b" {
			t.Errorf("the definition's row: %d steps, first jobs %q, other first steps %q, successors %q; want 4, \"a,c\", \"z\", \"a>b;z>b\"",
				steps, jobs, other, next)
		}
		var started, left int
		if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM jobc_jobs j WHERE j.workflow_id = w.id AND (w.jobs->>j.workflow_step)::bigint = j.id),
				w.steps_left FROM jobc_workflows w WHERE w.id = $1`, id).Scan(&started, &left); err != nil {
			t.Fatal(err)
		}
		sleeping := countRows(t, pool, `SELECT count(*) FROM jobc_workflow_steps WHERE workflow_id = $1 AND step = 'z' AND state = 'running' AND wake_at IS NOT NULL`, id)
		if started != 2 || left != 4 || sleeping != 1 {
			t.Errorf("workflow %d: %d jobs it names, %d steps left, %d sleeping steps; want 2, 4, 1", id, started, left, sleeping)
		}
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_workflow_definitions`); n != 1 {
		t.Errorf("%d definitions' rows for two starts of one text; want 1", n)
	}
}

// TestDefinitionFoundByItsText: a start finds a stored definition by its text, not by
// the text's hash alone: a row planted with the hash of a definition and another
// text (a collision) is passed over, and the start stores and runs its own.
func TestDefinitionFoundByItsText(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	step := `{"name":"a","kind":%q,"queue":"q","priority":5,"max_attempts":1,"payload_version":1,"after":[]}`
	mine, planted := `{"steps":[`+fmt.Sprintf(step, "mine")+`]}`, `{"steps":[`+fmt.Sprintf(step, "planted")+`]}`
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_workflow_definitions (hash, source, definition, steps, first_jobs, successors)
		VALUES (hashtext($1::text), $2::text, $2::text::jsonb, 1, $2::text::jsonb->'steps', '{}')`, mine, planted); err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := pool.QueryRow(ctx, `SELECT jobc_workflow_start('w', $1, 1, '{}')`, mine).Scan(&id); err != nil {
		t.Fatal(err)
	}
	var kind, source string
	if err := pool.QueryRow(ctx, `SELECT j.kind, d.source FROM jobc_workflows w
			JOIN jobc_workflow_definitions d ON d.id = w.definition_id
			JOIN jobc_jobs j ON j.workflow_id = w.id WHERE w.id = $1`, id).Scan(&kind, &source); err != nil {
		t.Fatal(err)
	}
	if kind != "mine" || source != mine {
		t.Errorf("a start of %s ran kind %q under definition %s; want kind mine under its own", mine, kind, source)
	}
}

// TestWorkflowPayloadReadsPaths: a step's payload reads each source at its path as #>
// does, through objects and, by index, arrays; a source that is absent (a missing
// member, an index past the end, a path through a scalar, a step without a result)
// leaves its field out.
func TestWorkflowPayloadReadsPaths(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_workflow_steps (workflow_id, step, state, definition, result,
		items, items_left, items_failed, items_cancelled)
		VALUES (7, 'a', 'completed', '{}', '{"box": {"ids": [10, 11, {"deep": "x"}]}, "n": 3}', 5, 1, 1, 2),
		       (7, 'b', 'running', '{}', NULL, NULL, NULL, NULL, NULL)`); err != nil {
		t.Fatal(err)
	}
	const input = `{"order": {"lines": [{"sku": "s1"}, {"sku": "s2"}]}, "n": 1}`
	const item = `[4, {"q": 2}]`
	for _, c := range []struct{ mapping, want string }{
		{`{"all": ["input"], "it": ["item"], "r": ["result", "a"]}`, `{"all": ` + input + `, "it": ` + item + `, "r": {"box": {"ids": [10, 11, {"deep": "x"}]}, "n": 3}}`},
		{`{"sku": ["input", "order", "lines", "1", "sku"], "q": ["item", "1", "q"], "first": ["item", "0"]}`, `{"sku": "s2", "q": 2, "first": 4}`},
		{`{"id": ["result", "a", "box", "ids", "1"], "deep": ["result", "a", "box", "ids", "2", "deep"]}`, `{"id": 11, "deep": "x"}`},
		{`{"done": ["count", "a", "completed"], "failed": ["count", "a", "failed"], "cancelled": ["count", "a", "cancelled"]}`, `{"done": 1, "failed": 1, "cancelled": 2}`},
		{`{"past": ["input", "order", "lines", "9"], "scalar": ["input", "n", "x"], "none": ["input", "nope"], "running": ["result", "b", "n"], "unknown": ["result", "zz"], "ok": ["input", "n"]}`, `{"ok": 1}`},
	} {
		var got, want string
		if err := pool.QueryRow(ctx, `SELECT jobc_workflow_payload(7, $1::jsonb, $2::jsonb, $3::jsonb)::text, $4::jsonb::text`,
			input, item, c.mapping, c.want).Scan(&got, &want); err != nil {
			t.Fatalf("map %s: %v", c.mapping, err)
		}
		if got != want {
			t.Errorf("map %s:\n got %s\nwant %s", c.mapping, got, want)
		}
	}
}

// TestStartMapsAsPayloadDoes: a start's first steps' jobs carry the payloads
// jobc_workflow_payload builds from their maps and the input.
func TestStartMapsAsPayloadDoes(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	step := `{"name":%q,"kind":"k","queue":"q","priority":5,"max_attempts":1,"payload_version":1,"after":[]%s}`
	var steps []string
	for i, m := range []string{
		``, `,"map":null`,
		`,"map":{"sku":["input","order","lines","1","sku"],"all":["input"],"n":["input","n"]}`,
		`,"map":{"none":["input","nope"],"past":["input","order","lines","5"],"scalar":["input","n","x"]}`,
		`,"map":{"r":["result","s0","n"],"c":["count","s0","completed"],"n":["input","n"]}`,
	} {
		steps = append(steps, fmt.Sprintf(step, fmt.Sprintf("s%d", i), m))
	}
	def := `{"steps":[` + strings.Join(steps, ",") + `]}`
	const input = `{"order": {"lines": [{"sku": "a"}, {"sku": "b"}]}, "n": 7}`
	var id int64
	if err := pool.QueryRow(ctx, `SELECT jobc_workflow_start('w', $1, 1, $2::jsonb)`, def, input).Scan(&id); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, `SELECT j.workflow_step, j.payload::text,
			(SELECT p.payload::text FROM jsonb_array_elements($3::jsonb->'steps') s, jobc_workflow_payload(0, $2::jsonb, NULL, s->'map') p
			 WHERE s->>'name' = j.workflow_step)
		FROM jobc_jobs j WHERE j.workflow_id = $1 ORDER BY j.workflow_step`, id, input, def)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var step, got, want string
		if err := rows.Scan(&step, &got, &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("step %s: the start wrote payload %s, jobc_workflow_payload builds %s", step, got, want)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(steps) {
		t.Fatalf("%d first steps' jobs, want %d", n, len(steps))
	}
}

// TestStepRowsOnlyOnceTheyRun: a start writes no step row (the workflow's jobs name
// its first job); a job step gets its row when its job ends, in the statement that
// runs the next step, whose payload reads the result just stored; GetWorkflow says a
// step without a row runs (the job its workflow names) or waits.
func TestStepRowsOnlyOnceTheyRun(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	step := `{"name":%q,"kind":"k","queue":"q","priority":5,"max_attempts":1,"payload_version":1,"after":%s,"map":{"n":%s}}`
	def := `{"steps":[` + fmt.Sprintf(step, "a", `[]`, `["input","n"]`) + `,` + fmt.Sprintf(step, "b", `["a"]`, `["result","a","n"]`) +
		`,` + fmt.Sprintf(step, "c", `["b"]`, `["result","b","n"]`) + `]}`
	var id int64
	if err := pool.QueryRow(ctx, `SELECT jobc_workflow_start('w', $1, 1, '{"n": 1}')`, def).Scan(&id); err != nil {
		t.Fatal(err)
	}
	jobs := func() (names string) {
		t.Helper()
		if err := pool.QueryRow(ctx, `SELECT coalesce(string_agg(x.key || '=' || (x.value = to_jsonb(j.id))::text, ',' ORDER BY x.key), '')
			FROM jobc_workflows w CROSS JOIN LATERAL jsonb_each(w.jobs) x LEFT JOIN jobc_jobs j ON j.workflow_id = w.id AND j.workflow_step = x.key
			WHERE w.id = $1`, id).Scan(&names); err != nil {
			t.Fatal(err)
		}
		return names
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_workflow_steps`); n != 0 {
		t.Errorf("%d step rows after the start; want none", n)
	}
	if got := jobs(); got != "a=true" {
		t.Errorf("the workflow names jobs %q after the start; want a's job alone", got)
	}
	// a's job ends with a result: a's row, and b's job with its payload from it.
	if _, err := pool.Exec(ctx, `UPDATE jobc_jobs SET state = 'running', attempt = 1, attempted_at = now(), lease_owner = 'me',
		lease_expires_at = now() + interval '1 hour' WHERE workflow_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_finish(ARRAY(SELECT j.id FROM jobc_jobs j WHERE j.workflow_id = $1),
		'completed', NULL, 'me', ARRAY[1], ARRAY['{"n": 2}'::jsonb], ARRAY[1])`, id); n != 1 {
		t.Fatalf("finished %d jobs; want a's", n)
	}
	var rows, payload string
	if err := pool.QueryRow(ctx, `SELECT string_agg(s.step || ' ' || s.state || ' ' || s.result::text, ', ' ORDER BY s.step),
		(SELECT j.payload::text FROM jobc_jobs j WHERE j.workflow_id = $1 AND j.workflow_step = 'b')
		FROM jobc_workflow_steps s WHERE s.workflow_id = $1`, id).Scan(&rows, &payload); err != nil {
		t.Fatal(err)
	}
	if rows != `a completed {"n": 2}` || payload != `{"n": 2}` {
		t.Errorf("after a's job: rows %q, b's payload %q; want a's row alone, completed with its result, and b's payload from it", rows, payload)
	}
	if got := jobs(); got != "b=true" {
		t.Errorf("the workflow names jobs %q after a ended; want b's job alone", got)
	}
	info, err := runtime.GetWorkflow(ctx, pool, runtime.WorkflowID(id))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range info.Steps {
		got = append(got, fmt.Sprintf("%s %s job=%t on=%q", s.Name, s.State, s.JobID != 0, s.WaitingOn))
	}
	if want := []string{`a completed job=true on=""`, `b running job=true on="job ` + fmt.Sprint(info.Steps[1].JobID) + `"`, `c waiting job=false on="steps b"`}; strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("GetWorkflow:\n got %q\nwant %q", got, want)
	}
}
