//go:generate go run -C ../../../cmd/jobc . generate -C ../../examples/rollingdeploy/releasea

// Command releasea is release A of the rolling-deploy example: it knows payload
// version 1 of send_receipt.
package main

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/examples/rollingdeploy/app"
	"github.com/jobc-dev/jobc/examples/rollingdeploy/releasea/internal/jobs"
	"github.com/jobc-dev/jobc/runtime"
)

func main() {
	app.Main(app.Release{
		Name: "a",
		Enqueue: func(ctx context.Context, tx pgx.Tx, orderID, email string) error {
			_, err := jobs.EnqueueSendReceipt(ctx, tx, jobs.SendReceiptV1{OrderID: orderID, Email: email})
			return err
		},
		Register: func(w *runtime.Worker, deliver app.Deliver) error {
			return jobs.Register(w, handler{deliver})
		},
	})
}

type handler struct{ deliver app.Deliver }

func (h handler) HandleSendReceipt(ctx context.Context, job jobs.SendReceiptJob, p jobs.SendReceipt) error {
	return h.deliver(ctx, job.Job, p.OrderID, p.Email, "en")
}
