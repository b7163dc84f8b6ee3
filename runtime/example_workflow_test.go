package runtime_test

import (
	"context"
	"fmt"
	"time"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// receiptMail is the payload of the second step: its price comes from the first
// step's result (quoteType's, in ExampleHandleResult), its SKU from the input.
type receiptMail struct {
	SKU        string `json:"sku"`
	PriceCents int64  `json:"price_cents"`
}

var receiptType = runtime.MustJobType(runtime.JobType{
	Kind: "mail_receipt", Queue: "pricing", Priority: 5, MaxAttempts: 3,
	WriteVersion: 1,
	Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object","additionalProperties":false,
		"required":["sku","price_cents"],"properties":{"sku":{"type":"string"},"price_cents":{"type":"integer"}}}`}},
})

// quoteThenMail quotes a price, then mails a receipt of it.
var quoteThenMail = runtime.MustWorkflowType(runtime.WorkflowType{
	Name:              "quote_then_mail",
	InputWriteVersion: 1,
	InputVersions:     quoteType.Versions,
	Steps: []runtime.Step{
		{Name: "quote", Job: quoteType},
		{Name: "mail", Job: receiptType, After: []string{"quote"},
			Map: map[string]string{"sku": "input.sku", "price_cents": "quote.result.price_cents"}},
	},
})

// ExampleStartWorkflow starts a workflow of two steps, the second mapped from the
// first's result, and reads it back once PostgreSQL has run both.
func ExampleStartWorkflow() {
	pool, _, cleanup := pgtest.ExampleSchema("workflow", migrated)
	defer cleanup()
	ctx := context.Background()
	id, err := runtime.StartWorkflow(ctx, pool, quoteThenMail, quote{SKU: "tea-250g"})
	if err != nil {
		panic(err)
	}

	w := quietWorker(pool)
	mailed := make(chan receiptMail, 1)
	if err := runtime.HandleResult(w, quoteType, func(context.Context, *runtime.Job, quote) (quoteResult, error) {
		return quoteResult{PriceCents: 450}, nil
	}); err != nil {
		panic(err)
	}
	if err := runtime.Handle(w, receiptType, func(_ context.Context, _ *runtime.Job, m receiptMail) error {
		mailed <- m
		return nil
	}); err != nil {
		panic(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	fmt.Printf("%+v\n", <-mailed)
	var info *runtime.WorkflowInfo
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if info, err = runtime.GetWorkflow(ctx, pool, id); err != nil || info.State != runtime.WorkflowRunning || time.Now().After(deadline) {
			break
		}
	}
	stop()
	if err := <-done; err != nil {
		panic(err)
	}
	fmt.Println(info.State)
	for _, s := range info.Steps {
		fmt.Println(s.Name, s.State, string(s.Result))
	}
	// Output:
	// {SKU:tea-250g PriceCents:450}
	// completed
	// quote completed {"price_cents": 450}
	// mail completed
}
