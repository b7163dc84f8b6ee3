package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/runtime"
	batch "github.com/jobc-dev/jobc/testdata/batch/jobs"
	steps "github.com/jobc-dev/jobc/testdata/workflow_steps/jobs"
	"github.com/jobc-dev/jobc/testdata/workflows/jobs"
)

// shop implements the handlers of the golden case testdata/workflows.
type shop struct {
	mu      sync.Mutex
	shipped []jobs.ShipOrder
	charged []jobs.ChargeCard
}

func (s *shop) HandleReserveStock(_ context.Context, _ jobs.ReserveStockJob, p jobs.ReserveStock) (jobs.ReserveStockResultV1, error) {
	return jobs.ReserveStockResultV1{ReservationID: "res-" + p.OrderID, TotalCents: 1999}, nil
}

func (s *shop) HandleChargeCard(_ context.Context, _ jobs.ChargeCardJob, p jobs.ChargeCard) (jobs.ChargeCardResultV1, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.charged = append(s.charged, p)
	return jobs.ChargeCardResultV1{ChargeID: fmt.Sprintf("ch-%s-%d", p.OrderID, p.AmountCents)}, nil
}

func (s *shop) HandleSendConfirmation(context.Context, jobs.SendConfirmationJob, jobs.SendConfirmation) error {
	return nil
}

func (s *shop) HandleShipOrder(_ context.Context, _ jobs.ShipOrderJob, p jobs.ShipOrder) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shipped = append(s.shipped, p)
	return nil
}

// TestGeneratedWorkflow runs the workflow of the golden case testdata/workflows
// through its generated code: StartFulfilOrder in a transaction, the handlers the
// generated Register takes, and GetFulfilOrder. Each step's job gets what the spec's
// maps say: charge the reserved total, ship with the charge's id.
func TestGeneratedWorkflow(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id, err := jobs.StartFulfilOrder(ctx, tx, jobs.FulfilOrderInputV1{OrderID: "o-7", Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	h := &shop{}
	w := runtime.NewWorker(pool, testConfig(map[string]runtime.QueueConfig{"default": {MaxWorkers: 4}}))
	if err := jobs.Register(w, h); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	var info *runtime.WorkflowInfo
	waitFor(t, "the workflow to end", 10*time.Second, func() bool {
		info, err = jobs.GetFulfilOrder(ctx, pool, id)
		return err == nil && info.State != runtime.WorkflowRunning
	})
	if info.State != runtime.WorkflowCompleted || info.Name != jobs.WorkflowFulfilOrder {
		t.Fatalf("workflow %s %s; want fulfil_order completed:%s", info.Name, info.State, describeSteps(info))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.charged) != 1 || h.charged[0] != (jobs.ChargeCard{OrderID: "o-7", AmountCents: 1999}) {
		t.Errorf("charged %+v; want order o-7 for the reserved 1999", h.charged)
	}
	if len(h.shipped) != 1 || h.shipped[0] != (jobs.ShipOrder{OrderID: "o-7", ChargeID: "ch-o-7-1999"}) {
		t.Errorf("shipped %+v; want order o-7 with the charge's id", h.shipped)
	}
}

// importer implements the handlers of the golden case testdata/batch.
type importer struct {
	mu   sync.Mutex
	done []batch.ImportDone
}

func (i *importer) HandleImportRow(_ context.Context, _ batch.ImportRowJob, p batch.ImportRow) (batch.ImportRowResultV1, error) {
	return batch.ImportRowResultV1{UserID: fmt.Sprintf("u-%d", p.Line)}, nil
}

func (i *importer) HandleImportDone(_ context.Context, _ batch.ImportDoneJob, p batch.ImportDone) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.done = append(i.done, p)
	return nil
}

// TestGeneratedBatch runs the one-line batch of the golden case testdata/batch: a
// job per row, then the callback once, with the counts and the rows' results in
// their order.
func TestGeneratedBatch(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	id, err := batch.StartImportUsers(ctx, pool, batch.ImportUsersInputV1{Rows: []batch.ImportUsersInputV1Row{
		{Line: 1, Email: "a@example.com"}, {Line: 2, Email: "b@example.com"}, {Line: 3, Email: "c@example.com"}}})
	if err != nil {
		t.Fatal(err)
	}
	h := &importer{}
	w := runtime.NewWorker(pool, testConfig(map[string]runtime.QueueConfig{"default": {MaxWorkers: 4}}))
	if err := batch.Register(w, h); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	info := waitWorkflow(t, pool, id, 10*time.Second)
	if info.State != runtime.WorkflowCompleted {
		t.Fatalf("batch %s; want completed:%s", info.State, describeSteps(info))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.done) != 1 || h.done[0].Completed != 3 || h.done[0].Failed != 0 || len(h.done[0].Results) != 3 {
		t.Fatalf("the callback ran with %+v; want once, 3 completed, 0 failed, 3 results", h.done)
	}
	if got, _ := json.Marshal(h.done[0].Results); string(got) != `[{"user_id":"u-1"},{"user_id":"u-2"},{"user_id":"u-3"}]` {
		t.Errorf("results %s; want the rows' user ids in their order", got)
	}
}

// shipper implements the handlers of the golden case testdata/workflow_steps.
type shipper struct {
	mu      sync.Mutex
	charged []steps.ChargeCard
	packed  []steps.PackItem
}

func (s *shipper) HandleReserveStock(_ context.Context, _ steps.ReserveStockJob, p steps.ReserveStock) (steps.ReserveStockResultV1, error) {
	return steps.ReserveStockResultV1{ReservationID: "res-" + p.OrderID, TotalCents: 700}, nil
}

func (s *shipper) HandleChargeCard(_ context.Context, _ steps.ChargeCardJob, p steps.ChargeCard) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.charged = append(s.charged, p)
	return nil
}

func (s *shipper) HandlePackItem(_ context.Context, _ steps.PackItemJob, p steps.PackItem) (steps.PackItemResultV1, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.packed = append(s.packed, p)
	return steps.PackItemResultV1{Box: "box-" + p.SKU}, nil
}

func (s *shipper) HandleShipOrder(context.Context, steps.ShipOrderJob, steps.ShipOrder) error {
	return nil
}

// TestGeneratedSignal runs the golden case testdata/workflow_steps through its
// generated code up to its 10-minute sleep: the wait step waits, visibly, until
// SignalFulfilOrderPaymentConfirmed, whose payload the charge maps; each item is
// packed; the sleep then waits on its timer.
func TestGeneratedSignal(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	id, err := steps.StartFulfilOrder(ctx, pool, steps.FulfilOrderInputV1{OrderID: "o-9",
		Items: []steps.FulfilOrderInputV1Item{{SKU: "a", Qty: 1}, {SKU: "b", Qty: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	h := &shipper{}
	w := runtime.NewWorker(pool, testConfig(map[string]runtime.QueueConfig{"default": {MaxWorkers: 4}}))
	if err := steps.Register(w, h); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	var info *runtime.WorkflowInfo
	stepIs := func(name string, state runtime.StepState) func() bool {
		return func() bool {
			info, err = steps.GetFulfilOrder(ctx, pool, id)
			return err == nil && stepByName(t, info, name).State == state
		}
	}
	waitFor(t, "confirm to wait for its signal", 10*time.Second, stepIs("confirm", runtime.StepRunning))
	if err := steps.SignalFulfilOrderPaymentConfirmed(ctx, pool, id, steps.FulfilOrderPaymentConfirmedV1{Ref: "pay-1"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "cool to sleep", 10*time.Second, stepIs("cool", runtime.StepRunning))
	if cool := stepByName(t, info, "cool"); cool.WakeAt == nil || cool.WakeAt.Sub(*cool.StartedAt) != 10*time.Minute {
		t.Errorf("cool wakes at %v, started %v; want 10 minutes after", cool.WakeAt, cool.StartedAt)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.charged) != 1 || h.charged[0] != (steps.ChargeCard{OrderID: "o-9", AmountCents: 700, PaymentRef: "pay-1"}) {
		t.Errorf("charged %+v; want the reserved total and the signal's ref", h.charged)
	}
	if len(h.packed) != 2 {
		t.Errorf("packed %+v; want each of the two items", h.packed)
	}
}
