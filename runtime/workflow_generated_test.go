package runtime_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/runtime"
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
