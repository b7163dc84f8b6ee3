//go:generate go run -C ../../../cmd/jobc . generate -C ../../examples/rollingdeploy/releaseb

// Command releaseb is release B of the rolling-deploy example: it decodes payload
// versions 1 and 2 of send_receipt and writes version 2.
package main

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/examples/rollingdeploy/app"
	"github.com/jobc-dev/jobc/examples/rollingdeploy/releaseb/internal/jobs"
	"github.com/jobc-dev/jobc/runtime"
)

func main() {
	app.Main(app.Release{
		Name: "b",
		Enqueue: func(ctx context.Context, tx pgx.Tx, orderID, email string) error {
			_, err := jobs.EnqueueSendReceipt(ctx, tx, jobs.SendReceiptV2{OrderID: orderID, Recipient: email, Locale: jobs.SendReceiptV2LocaleFr})
			return err
		},
		Register: func(w *runtime.Worker, deliver app.Deliver) error {
			return jobs.Register(w, handler{deliver})
		},
	})
}

// handler always sees version 2: version 1 jobs arrive upcast.
type handler struct{ deliver app.Deliver }

func (h handler) HandleSendReceipt(ctx context.Context, job jobs.SendReceiptJob, p jobs.SendReceipt) error {
	return h.deliver(ctx, job.Job, p.OrderID, p.Recipient, string(p.Locale))
}
