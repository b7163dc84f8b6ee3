package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime"
)

// The for_each, sleep and wait steps of these tests: an order's items are packed one
// job each (pack), then a callback reads the list of their results and their counts
// (packed); a sleep (cool) and a wait for a signal (paid) sit between steps.
type (
	packInput struct {
		OrderID string     `json:"order_id"`
		Items   []packItem `json:"items"`
	}
	packItem struct {
		SKU string `json:"sku"`
		Qty int    `json:"qty"`
	}
	packJob struct {
		OrderID string `json:"order_id"`
		SKU     string `json:"sku"`
		Qty     int    `json:"qty"`
	}
	packResult struct {
		Box string `json:"box"`
	}
	packedJob struct {
		OrderID   string            `json:"order_id"`
		Boxes     []json.RawMessage `json:"boxes"`
		Completed int               `json:"completed"`
		Failed    int               `json:"failed"`
	}
	paidSignal struct {
		Ref string `json:"ref"`
	}
)

const (
	packInputSchema = `{"type":"object","required":["order_id","items"],"properties":{"order_id":{"type":"string"},
		"items":{"type":"array","items":{"type":"object","required":["sku","qty"],"properties":{"sku":{"type":"string"},"qty":{"type":"integer"}}}}}}`
	packJobSchema = `{"type":"object","additionalProperties":false,"required":["order_id","sku","qty"],
		"properties":{"order_id":{"type":"string"},"sku":{"type":"string"},"qty":{"type":"integer","minimum":1}}}`
	packResultSchema = `{"type":"object","required":["box"],"properties":{"box":{"type":"string"}}}`
	packedJobSchema  = `{"type":"object","required":["order_id","boxes","completed","failed"],"properties":{"order_id":{"type":"string"},
		"boxes":{"type":"array"},"completed":{"type":"integer"},"failed":{"type":"integer"}}}`
	paidSchema = `{"type":"object","required":["ref"],"properties":{"ref":{"type":"string"}}}`
)

type packTypes struct {
	pack, packed *runtime.JobType
}

func newPackTypes(t *testing.T) packTypes {
	return packTypes{
		pack:   stepType(t, "pack", packJobSchema, packResultSchema, func(jt *runtime.JobType) { jt.MaxAttempts = 1 }),
		packed: stepType(t, "packed", packedJobSchema, "", nil),
	}
}

// workflow is pack (for_each input.items) then packed; before, if set, are steps
// pack comes after.
func (p packTypes) workflow(t *testing.T, onItem runtime.OnItemFailure, before ...runtime.Step) *runtime.WorkflowType {
	t.Helper()
	var after []string
	for _, s := range before {
		after = append(after, s.Name)
	}
	steps := append(before,
		runtime.Step{Name: "pack", Job: p.pack, After: after, ForEach: "input.items", OnItemFailure: onItem,
			Map: map[string]string{"order_id": "input.order_id", "sku": "item.sku", "qty": "item.qty"}},
		runtime.Step{Name: "packed", Job: p.packed, After: []string{"pack"},
			Map: map[string]string{"order_id": "input.order_id", "boxes": "pack.result", "completed": "pack.completed", "failed": "pack.failed"}})
	wt, err := runtime.NewWorkflowType(runtime.WorkflowType{
		Name: "pack_order", InputWriteVersion: 1, InputVersions: []runtime.Version{{Number: 1, Schema: packInputSchema}},
		Signals: []runtime.Signal{{Name: "paid", WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: paidSchema}}}},
		Steps:   steps,
	})
	if err != nil {
		t.Fatal(err)
	}
	return wt
}

// packWorker runs pack (failing the SKUs fail says, and recording the packed SKUs) and
// packed (recording its payloads) on a worker of its own.
type packWorker struct {
	mu     sync.Mutex
	packs  []string
	packed []packedJob
}

func (p packTypes) start(t *testing.T, pool *pgxpool.Pool, fail func(sku string) bool) *packWorker {
	t.Helper()
	pw := &packWorker{}
	w := runtime.NewWorker(pool, testConfig(map[string]runtime.QueueConfig{"orders": {MaxWorkers: 4}}))
	if err := runtime.HandleResult(w, p.pack, func(_ context.Context, _ *runtime.Job, j packJob) (packResult, error) {
		pw.mu.Lock()
		pw.packs = append(pw.packs, j.SKU)
		pw.mu.Unlock()
		if fail != nil && fail(j.SKU) {
			return packResult{}, errors.New("out of boxes")
		}
		return packResult{Box: fmt.Sprintf("box-%s-%d", j.SKU, j.Qty)}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := runtime.Handle(w, p.packed, func(_ context.Context, _ *runtime.Job, j packedJob) error {
		pw.mu.Lock()
		pw.packed = append(pw.packed, j)
		pw.mu.Unlock()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	return pw
}

func (pw *packWorker) seen() ([]string, []packedJob) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	return append([]string(nil), pw.packs...), append([]packedJob(nil), pw.packed...)
}

func stepByName(t *testing.T, info *runtime.WorkflowInfo, name string) runtime.StepInfo {
	t.Helper()
	for _, s := range info.Steps {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("workflow %d has no step %s:%s", info.ID, name, describeSteps(info))
	return runtime.StepInfo{}
}

// TestForEachFansOutAndIn: a for_each step runs a job per item, each payload mapped
// from its item and the input; the step after it runs once, when all have completed,
// with the list of their results in the items' order and their counts. An empty list
// completes the step at once.
func TestForEachFansOutAndIn(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	p := newPackTypes(t)
	wt := p.workflow(t, "")
	items := []packItem{{"a", 1}, {"b", 2}, {"c", 3}, {"d", 4}, {"e", 5}}
	id, err := runtime.StartWorkflow(ctx, pool, wt, packInput{OrderID: "o-1", Items: items})
	if err != nil {
		t.Fatal(err)
	}
	empty, err := runtime.StartWorkflow(ctx, pool, wt, packInput{OrderID: "o-2", Items: []packItem{}})
	if err != nil {
		t.Fatal(err)
	}
	// A list longer than a step runs fails the step, saying so, and makes no job.
	huge, err := runtime.StartWorkflow(ctx, pool, wt, packInput{OrderID: "o-3", Items: slices.Repeat([]packItem{{"z", 1}}, 10001)})
	if err != nil {
		t.Fatal(err)
	}
	hugeInfo, err := runtime.GetWorkflow(ctx, pool, huge)
	if err != nil {
		t.Fatal(err)
	}
	if s := stepByName(t, hugeInfo, "pack"); hugeInfo.State != runtime.WorkflowFailed || s.State != runtime.StepFailed ||
		!strings.Contains(s.Error, "has 10001 items, more than the 10,000 a step runs") {
		t.Errorf("a for_each of 10,001 items: workflow %s, pack %s (%q); want both failed, saying why", hugeInfo.State, s.State, s.Error)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs WHERE workflow_id = $1`, int64(huge)); n != 0 {
		t.Errorf("%d jobs of the workflow whose list was too long", n)
	}
	pw := p.start(t, pool, nil)
	info := waitWorkflow(t, pool, id, 10*time.Second)
	if info.State != runtime.WorkflowCompleted {
		t.Fatalf("workflow %s; want completed:%s", info.State, describeSteps(info))
	}
	pack := stepByName(t, info, "pack")
	if pack.Kind != runtime.StepForEach || pack.Items != 5 || pack.ItemsLeft != 0 || pack.ItemsFailed != 0 {
		t.Errorf("pack: kind %s, items %d, left %d, failed %d; want for_each, 5, 0, 0", pack.Kind, pack.Items, pack.ItemsLeft, pack.ItemsFailed)
	}
	want := `[{"box": "box-a-1"}, {"box": "box-b-2"}, {"box": "box-c-3"}, {"box": "box-d-4"}, {"box": "box-e-5"}]`
	if string(pack.Result) != want {
		t.Errorf("pack's result %s; want %s, the items' results in their order", pack.Result, want)
	}
	emptyInfo := waitWorkflow(t, pool, empty, 10*time.Second)
	if s := stepByName(t, emptyInfo, "pack"); emptyInfo.State != runtime.WorkflowCompleted || s.Items != 0 || string(s.Result) != "[]" {
		t.Errorf("empty list: workflow %s, pack items %d, result %s; want completed, 0, []", emptyInfo.State, s.Items, s.Result)
	}
	packs, packed := pw.seen()
	if len(packs) != 5 {
		t.Errorf("pack ran for %v; want once per item of o-1", packs)
	}
	if len(packed) != 2 {
		t.Fatalf("packed ran %d times; want once per workflow: %+v", len(packed), packed)
	}
	for _, j := range packed {
		n := map[string]int{"o-1": 5, "o-2": 0}[j.OrderID]
		if len(j.Boxes) != n || j.Completed != n || j.Failed != 0 {
			t.Errorf("packed %+v; want %d boxes, %d completed, 0 failed", j, n, n)
		}
	}
	// Each item job started after the steps before and the callback after every item.
	var early int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM jobc_jobs_finished i, jobc_jobs_finished c
		WHERE i.workflow_id = $1 AND i.workflow_step = 'pack' AND c.workflow_id = $1 AND c.workflow_step = 'packed'
		  AND c.attempted_at < i.finished_at`, int64(id)).Scan(&early); err != nil || early != 0 {
		t.Errorf("the callback started before %d items finished (%v)", early, err)
	}
}

// TestForEachItemFailure: with on_item_failure fail, an item that fails fails its step
// and the workflow, and the callback never runs; with continue the step completes when
// every item has ended and the callback reads null for the failed item and the counts.
func TestForEachItemFailure(t *testing.T) {
	t.Parallel()
	for _, mode := range []runtime.OnItemFailure{runtime.OnItemFailureFail, runtime.OnItemFailureContinue} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			pool := newDB(t)
			p := newPackTypes(t)
			wt := p.workflow(t, mode)
			id, err := runtime.StartWorkflow(t.Context(), pool, wt, packInput{OrderID: "o-1", Items: []packItem{{"a", 1}, {"bad", 2}, {"c", 3}}})
			if err != nil {
				t.Fatal(err)
			}
			pw := p.start(t, pool, func(sku string) bool { return sku == "bad" })
			info := waitWorkflow(t, pool, id, 10*time.Second)
			pack := stepByName(t, info, "pack")
			_, packed := pw.seen()
			if mode == runtime.OnItemFailureFail {
				if info.State != runtime.WorkflowFailed || pack.State != runtime.StepFailed || !strings.Contains(pack.Error, "1 of its 3 items failed") {
					t.Errorf("workflow %s, pack %s (%q); want both failed, saying which items:%s", info.State, pack.State, pack.Error, describeSteps(info))
				}
				if s := stepByName(t, info, "packed"); s.State != runtime.StepCancelled || len(packed) != 0 {
					t.Errorf("packed %s, ran %d times; want cancelled, never run", s.State, len(packed))
				}
				return
			}
			if info.State != runtime.WorkflowCompleted || pack.State != runtime.StepCompleted || pack.ItemsFailed != 1 {
				t.Fatalf("workflow %s, pack %s with %d failed; want completed with 1 failed:%s", info.State, pack.State, pack.ItemsFailed, describeSteps(info))
			}
			if len(packed) != 1 || packed[0].Completed != 2 || packed[0].Failed != 1 || string(packed[0].Boxes[1]) != "null" {
				t.Errorf("packed %+v; want one run with 2 completed, 1 failed, null for the failed item", packed)
			}
		})
	}
}

// TestSleepAndWaitSteps: a sleep step completes once its time has passed by the
// database's clock (fired by a worker's scheduler); a wait step takes a signal sent
// before it began to wait, or one sent while it waits, as its result (a later step
// maps it); a wait whose timeout passes fails its step with the reason.
func TestSleepAndWaitSteps(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	p := newPackTypes(t)
	const nap = 300 * time.Millisecond
	build := func(timeout time.Duration) *runtime.WorkflowType {
		wt := p.workflow(t, "",
			runtime.Step{Name: "cool", Sleep: nap},
			runtime.Step{Name: "pay", Wait: &runtime.Wait{Signal: "paid", Timeout: timeout}})
		return wt
	}
	wt := build(time.Hour)
	in := packInput{OrderID: "o-1", Items: []packItem{{"a", 1}}}
	early, err := runtime.StartWorkflow(ctx, pool, wt, in)
	if err != nil {
		t.Fatal(err)
	}
	if err := runtime.SignalWorkflow(ctx, pool, wt, early, "paid", paidSignal{Ref: "early"}); err != nil {
		t.Fatal(err)
	}
	late, err := runtime.StartWorkflow(ctx, pool, wt, in)
	if err != nil {
		t.Fatal(err)
	}
	timedOut, err := runtime.StartWorkflow(ctx, pool, build(nap), in)
	if err != nil {
		t.Fatal(err)
	}
	p.start(t, pool, nil)

	info := waitWorkflow(t, pool, early, 10*time.Second+nap)
	cool, pay := stepByName(t, info, "cool"), stepByName(t, info, "pay")
	if info.State != runtime.WorkflowCompleted || string(pay.Result) != `{"ref": "early"}` || pay.ResultVersion != 1 {
		t.Errorf("signalled before it waited: workflow %s, pay's result %s v%d; want completed with the kept signal:%s",
			info.State, pay.Result, pay.ResultVersion, describeSteps(info))
	}
	if cool.FinishedAt == nil || cool.StartedAt == nil || cool.FinishedAt.Sub(*cool.StartedAt) < nap {
		t.Errorf("cool slept from %v to %v; want at least %s", cool.StartedAt, cool.FinishedAt, nap)
	}
	if len(info.Signals) != 1 || info.Signals[0].Name != "paid" {
		t.Errorf("signals %+v; want the one sent", info.Signals)
	}

	// The late workflow waits, visibly, until its signal comes, once its own sleep
	// (which may end a scheduler pass after the early one's) is over.
	waitFor(t, "the late workflow to have slept and to wait for its signal", 10*time.Second+nap, func() bool {
		info, err = runtime.GetWorkflow(ctx, pool, late)
		return err == nil && stepByName(t, info, "pay").State == runtime.StepRunning &&
			stepByName(t, info, "cool").State == runtime.StepCompleted
	})
	if w := stepByName(t, info, "pay").WaitingOn; !strings.HasPrefix(w, "signal paid until ") {
		t.Errorf("pay waits on %q; want the signal and its deadline", w)
	}
	if w := stepByName(t, info, "pack").WaitingOn; w != "steps pay" {
		t.Errorf("pack waits on %q; want the step it comes after", w)
	}
	if err := runtime.SignalWorkflow(ctx, pool, wt, late, "paid", paidSignal{Ref: "late"}); err != nil {
		t.Fatal(err)
	}
	if info := waitWorkflow(t, pool, late, 10*time.Second); info.State != runtime.WorkflowCompleted || string(stepByName(t, info, "pay").Result) != `{"ref": "late"}` {
		t.Errorf("signalled while waiting: workflow %s:%s", info.State, describeSteps(info))
	}

	info = waitWorkflow(t, pool, timedOut, 10*time.Second+2*nap)
	pay = stepByName(t, info, "pay")
	if info.State != runtime.WorkflowFailed || pay.State != runtime.StepFailed || !strings.Contains(pay.Error, "no signal paid came within") {
		t.Errorf("timed out: workflow %s, pay %s (%q); want both failed, saying why:%s", info.State, pay.State, pay.Error, describeSteps(info))
	}
	if err := runtime.SignalWorkflow(ctx, pool, wt, timedOut, "paid", paidSignal{Ref: "too late"}); !errors.Is(err, runtime.ErrWorkflowEnded) {
		t.Errorf("signal to a failed workflow: %v; want ErrWorkflowEnded", err)
	}
}

// TestSignalWorkflowRefuses: an unknown workflow, a signal the type does not declare,
// and a payload its schema rejects are refused, and nothing is kept.
func TestSignalWorkflowRefuses(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	p := newPackTypes(t)
	wt := p.workflow(t, "", runtime.Step{Name: "pay", Wait: &runtime.Wait{Signal: "paid"}})
	id, err := runtime.StartWorkflow(ctx, pool, wt, packInput{OrderID: "o-1", Items: []packItem{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := runtime.SignalWorkflow(ctx, pool, wt, id+1000, "paid", paidSignal{Ref: "x"}); !errors.Is(err, runtime.ErrWorkflowNotFound) {
		t.Errorf("unknown workflow: %v; want ErrWorkflowNotFound", err)
	}
	if err := runtime.SignalWorkflow(ctx, pool, wt, id, "refunded", paidSignal{Ref: "x"}); err == nil || !strings.Contains(err.Error(), `no signal "refunded"`) {
		t.Errorf("undeclared signal: %v; want refused by name", err)
	}
	var pe *runtime.PayloadError
	if err := runtime.SignalWorkflow(ctx, pool, wt, id, "paid", map[string]int{"ref": 1}); !errors.As(err, &pe) {
		t.Errorf("invalid payload: %v; want a *PayloadError", err)
	}
	// From SQL, a name the recorded definition does not declare.
	if _, err := pool.Exec(ctx, `SELECT jobc_workflow_signal($1, 'refunded', 1, '{}')`, int64(id)); err == nil || !strings.Contains(err.Error(), "declares no signal refunded") {
		t.Errorf("undeclared signal from SQL: %v; want refused", err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_workflow_signals`); n != 0 {
		t.Errorf("%d signals kept; want none", n)
	}
}

// TestRetryWorkflow: a failed workflow resumes from the steps that did not complete;
// completed steps and items keep their results and do not run again; a running or
// completed workflow is not retried.
func TestRetryWorkflow(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	p := newPackTypes(t)
	wt := p.workflow(t, "")
	id, err := runtime.StartWorkflow(ctx, pool, wt, packInput{OrderID: "o-1", Items: []packItem{{"a", 1}, {"bad", 2}, {"c", 3}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := runtime.RetryWorkflow(ctx, pool, id); !errors.Is(err, runtime.ErrWorkflowNotRetryable) {
		t.Errorf("retry of a running workflow: %v; want ErrWorkflowNotRetryable", err)
	}
	var mu sync.Mutex
	broken := true
	pw := p.start(t, pool, func(sku string) bool {
		mu.Lock()
		defer mu.Unlock()
		return sku == "bad" && broken
	})
	info := waitWorkflow(t, pool, id, 10*time.Second)
	if info.State != runtime.WorkflowFailed {
		t.Fatalf("workflow %s; want failed:%s", info.State, describeSteps(info))
	}
	// The other items ran or were cancelled when bad failed; wait until none runs.
	waitFor(t, "the failed workflow's jobs to stop", 10*time.Second, func() bool {
		return countRows(t, pool, `SELECT count(*) FROM jobc_jobs WHERE workflow_id = $1`, int64(id)) == 0
	})
	var completedBefore int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM jobc_workflow_items WHERE workflow_id = $1 AND state = 'completed'`, int64(id)).Scan(&completedBefore); err != nil {
		t.Fatal(err)
	}
	packsBefore, _ := pw.seen()
	mu.Lock()
	broken = false
	mu.Unlock()
	info = retryToCompletion(t, pool, id)
	packs, packed := pw.seen()
	if ran := len(packs) - len(packsBefore); ran != 3-completedBefore {
		t.Errorf("the retry ran %d items (%v, then %v); want the %d that had not completed", ran, packsBefore, packs, 3-completedBefore)
	}
	want := `[{"box": "box-a-1"}, {"box": "box-bad-2"}, {"box": "box-c-3"}]`
	if r := stepByName(t, info, "pack").Result; string(r) != want {
		t.Errorf("pack's result %s; want %s", r, want)
	}
	if len(packed) != 1 || packed[0].Completed != 3 {
		t.Errorf("packed ran %+v; want once, with 3 completed", packed)
	}
	if err := runtime.RetryWorkflow(ctx, pool, id); !errors.Is(err, runtime.ErrWorkflowNotRetryable) {
		t.Errorf("retry of a completed workflow: %v; want ErrWorkflowNotRetryable", err)
	}
	if err := runtime.RetryWorkflow(ctx, pool, id+1000); !errors.Is(err, runtime.ErrWorkflowNotFound) {
		t.Errorf("retry of an unknown workflow: %v; want ErrWorkflowNotFound", err)
	}
}

// TestRetryRunsASkippedStepOnce: in a chain reserve → charge → notify, charge fails
// and notify, which comes after it alone, is skipped (a row that says it was
// cancelled); retried, charge runs again and completes, and notify runs once, with
// the workflow completed. A step whose one predecessor just completed is taken as
// ready without a look at its row (jobc_workflow_ready): this holds only because a
// retry removes the rows of the steps it runs again.
func TestRetryRunsASkippedStepOnce(t *testing.T) {
	t.Parallel()
	inBothModes(t, func(t *testing.T, mode runtime.OnFailure) {
		pool := newDB(t)
		ctx := t.Context()
		o := newOrderTypes(t)
		charge := chargeOnce(t)
		wt, err := runtime.NewWorkflowType(runtime.WorkflowType{
			Name: "charge_then_notify", InputWriteVersion: 1, InputVersions: []runtime.Version{{Number: 1, Schema: orderSchema}},
			OnFailure: mode,
			Steps: []runtime.Step{
				{Name: "reserve", Job: o.reserve},
				{Name: "charge", Job: charge, After: []string{"reserve"}},
				{Name: "notify", Job: o.notify, After: []string{"charge"}},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		id, err := runtime.StartWorkflow(ctx, pool, wt, orderInput{OrderID: "o-1", Cents: 5})
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		declined := true
		runs := map[string]int{}
		ran := func(kind string) {
			mu.Lock()
			defer mu.Unlock()
			runs[kind]++
		}
		w := runtime.NewWorker(pool, testConfig(map[string]runtime.QueueConfig{"orders": {MaxWorkers: 4}}))
		must := func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		}
		must(runtime.HandleResult(w, o.reserve, func(_ context.Context, _ *runtime.Job, p orderInput) (reserved, error) {
			ran("reserve")
			return reserved{TotalCents: p.Cents}, nil
		}))
		must(runtime.HandleResult(w, charge, func(context.Context, *runtime.Job, orderInput) (charged, error) {
			ran("charge")
			mu.Lock()
			defer mu.Unlock()
			if declined {
				return charged{}, errors.New("card declined")
			}
			return charged{ChargeID: "ch-1"}, nil
		}))
		must(runtime.Handle(w, o.notify, func(context.Context, *runtime.Job, orderInput) error {
			ran("notify")
			return nil
		}))
		startWorker(t, w)
		info := waitWorkflow(t, pool, id, 10*time.Second)
		if info.State != runtime.WorkflowFailed || stepByName(t, info, "notify").State != runtime.StepCancelled {
			t.Fatalf("workflow %s; want failed, with notify cancelled:%s", info.State, describeSteps(info))
		}
		mu.Lock()
		declined = false
		mu.Unlock()
		info = retryToCompletion(t, pool, id)
		for _, st := range info.Steps {
			if st.State != runtime.StepCompleted || st.FinishedAt == nil || st.FinishedAt.After(*info.FinishedAt) {
				t.Errorf("step %s %s, finished %v; want completed before its workflow (%v):%s",
					st.Name, st.State, st.FinishedAt, info.FinishedAt, describeSteps(info))
			}
		}
		mu.Lock()
		got := fmt.Sprint(runs)
		mu.Unlock()
		if want := "map[charge:2 notify:1 reserve:1]"; got != want {
			t.Errorf("handlers ran %s; want %s", got, want)
		}
		if n := countRows(t, pool, `SELECT (SELECT count(*) FROM jobc_jobs WHERE workflow_id = $1 AND workflow_step = 'notify')
				+ (SELECT count(*) FROM jobc_jobs_finished WHERE workflow_id = $1 AND workflow_step = 'notify')`, int64(id)); n != 1 {
			t.Errorf("notify had %d jobs; want 1", n)
		}
	})
}

// retryToCompletion retries failed workflow id and waits until it has completed,
// failing t if it ends otherwise.
func retryToCompletion(t *testing.T, pool *pgxpool.Pool, id runtime.WorkflowID) *runtime.WorkflowInfo {
	t.Helper()
	if err := runtime.RetryWorkflow(t.Context(), pool, id); err != nil {
		t.Fatal(err)
	}
	info := waitWorkflow(t, pool, id, 10*time.Second)
	if info.State != runtime.WorkflowCompleted {
		t.Fatalf("retried workflow %s; want completed:%s", info.State, describeSteps(info))
	}
	return info
}

// TestStartChecksForEachItems: a for_each step without a map takes each item of the
// input's list as its job's payload, so each is checked at the start.
func TestStartChecksForEachItems(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	item := stepType(t, "pack_item", `{"type":"object","required":["sku"],"properties":{"sku":{"type":"string"}}}`, "", nil)
	wt, err := runtime.NewWorkflowType(runtime.WorkflowType{
		Name: "batch", InputWriteVersion: 1, InputVersions: []runtime.Version{{Number: 1, Schema: `{"type":"object","properties":{"items":{"type":"array"}}}`}},
		Steps: []runtime.Step{{Name: "each", Job: item, ForEach: "input.items"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var pe *runtime.PayloadError
	_, err = runtime.StartWorkflow(t.Context(), pool, wt, map[string]any{"order_id": "o", "items": []any{
		map[string]any{"sku": "a", "qty": 1}, map[string]any{"sku": 7, "qty": 1}}})
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "item 1 of input.items") {
		t.Errorf("start with an invalid item: %v; want a *PayloadError naming the item", err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_workflows`); n != 0 {
		t.Errorf("%d workflows started; want none", n)
	}
	// A list reached through another list's element is read as the step reads it
	// (by index), and checked too.
	deep, err := runtime.NewWorkflowType(runtime.WorkflowType{
		Name: "deep", InputWriteVersion: 1, InputVersions: []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}},
		Steps: []runtime.Step{{Name: "each", Job: item, ForEach: "input.boxes.1.items"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = runtime.StartWorkflow(t.Context(), pool, deep, map[string]any{"boxes": []any{
		map[string]any{"items": []any{map[string]any{"sku": "a"}}},
		map[string]any{"items": []any{map[string]any{"sku": "b"}, map[string]any{"sku": false}}}}})
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "item 1 of input.boxes.1.items") {
		t.Errorf("start with an invalid item in a list's element: %v; want a *PayloadError naming the item", err)
	}
}

// TestWorkflowStepKindsAreChecked: NewWorkflowType refuses steps that are not exactly
// one kind, sources that read what a step does not leave, and waits for undeclared
// signals.
func TestWorkflowStepKindsAreChecked(t *testing.T) {
	p := newPackTypes(t)
	o := newOrderTypes(t)
	in := []runtime.Version{{Number: 1, Schema: packInputSchema}}
	sig := []runtime.Signal{{Name: "paid", WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: paidSchema}}}}
	for _, c := range []struct {
		steps []runtime.Step
		want  string
	}{
		{[]runtime.Step{{Name: "a"}}, "exactly one of a job, a sleep and a wait"},
		{[]runtime.Step{{Name: "a", Job: p.pack, Sleep: time.Second}}, "exactly one of"},
		{[]runtime.Step{{Name: "a", Sleep: time.Second, Map: map[string]string{"x": "input"}}}, "need a job"},
		{[]runtime.Step{{Name: "a", Wait: &runtime.Wait{Signal: "refunded"}}}, `signal "refunded", which the workflow does not declare`},
		{[]runtime.Step{{Name: "a", Job: p.pack, Map: map[string]string{"sku": "item.sku"}}}, "only a for_each step has an item"},
		{[]runtime.Step{{Name: "a", Job: p.pack, ForEach: "input.items"}, {Name: "b", Job: p.packed, After: []string{"a"},
			Map: map[string]string{"boxes": "a.result.box"}}}, "the list of its items' results"},
		{[]runtime.Step{{Name: "a", Job: o.reserve}, {Name: "b", Job: p.packed, After: []string{"a"},
			Map: map[string]string{"completed": "a.completed"}}}, "no for_each step"},
		{[]runtime.Step{{Name: "a", Sleep: time.Second}, {Name: "b", Job: p.packed, After: []string{"a"},
			Map: map[string]string{"boxes": "a.result"}}}, "sleep step a has no result"},
		{[]runtime.Step{{Name: "a", Job: p.pack, ForEach: "input.items", OnItemFailure: "ignore"}}, `on item failure "ignore"`},
		{[]runtime.Step{{Name: "a", Job: p.pack, OnItemFailure: runtime.OnItemFailureContinue}}, "on a for_each step"},
	} {
		_, err := runtime.NewWorkflowType(runtime.WorkflowType{Name: "w", InputWriteVersion: 1, InputVersions: in, Signals: sig, Steps: c.steps})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("steps %+v: %v; want an error saying %q", c.steps, err, c.want)
		}
	}
}

// TestStartWorkflowWithKey: a start with a key returns the running workflow started
// with it, in the same transaction or another, and starts nothing; workflows of
// another key, without a key, or once the keyed one ended start anew; a key longer
// than 512 bytes is refused.
func TestStartWorkflowWithKey(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	p := newPackTypes(t)
	wt := p.workflow(t, "", runtime.Step{Name: "pay", Wait: &runtime.Wait{Signal: "paid"}})
	in := packInput{OrderID: "o-1", Items: []packItem{}}
	first, err := runtime.StartWorkflow(ctx, pool, wt, in, runtime.WithWorkflowKey("order-1"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := runtime.StartWorkflow(ctx, pool, wt, in, runtime.WithWorkflowKey("order-1"))
	if err != nil || again != first {
		t.Errorf("the same key again: %d, %v; want the running workflow %d", again, err, first)
	}
	other, err := runtime.StartWorkflow(ctx, pool, wt, in, runtime.WithWorkflowKey("order-2"))
	if err != nil || other == first {
		t.Errorf("another key: %d, %v; want a workflow of its own", other, err)
	}
	unkeyed, err := runtime.StartWorkflow(ctx, pool, wt, in)
	if err != nil || unkeyed == first {
		t.Errorf("no key: %d, %v; want a workflow of its own", unkeyed, err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_workflows`); n != 3 {
		t.Errorf("%d workflows; want 3", n)
	}
	if err := runtime.CancelWorkflow(ctx, pool, first); err != nil {
		t.Fatal(err)
	}
	after, err := runtime.StartWorkflow(ctx, pool, wt, in, runtime.WithWorkflowKey("order-1"))
	if err != nil || after == first {
		t.Errorf("the key of an ended workflow: %d, %v; want a new workflow", after, err)
	}
	if _, err := runtime.StartWorkflow(ctx, pool, wt, in, runtime.WithWorkflowKey(strings.Repeat("k", 513))); err == nil || !strings.Contains(err.Error(), "at most 512") {
		t.Errorf("a 513-byte key: %v; want it refused", err)
	}
	if _, err := pool.Exec(ctx, `SELECT jobc_workflow_start('pack_order', (SELECT definition::text FROM jobc_workflow_definitions LIMIT 1), 1, '{}', repeat('k', 513))`); err == nil || !strings.Contains(err.Error(), "at most 512") {
		t.Errorf("a 513-byte key from SQL: %v; want it refused", err)
	}
	// Two transactions start with one key at once: the second waits for the first,
	// and gets its workflow once it commits.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	mine, err := runtime.StartWorkflow(ctx, tx, wt, in, runtime.WithWorkflowKey("order-3"))
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan runtime.WorkflowID, 1)
	go func() {
		id, err := runtime.StartWorkflow(ctx, pool, wt, in, runtime.WithWorkflowKey("order-3"))
		if err != nil {
			t.Error(err)
		}
		got <- id
	}()
	select {
	case id := <-got:
		t.Fatalf("the second start returned %d before the first transaction ended", id)
	case <-time.After(200 * time.Millisecond):
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if id := <-got; id != mine {
		t.Errorf("the second start got %d; want the first's %d", id, mine)
	}
}
