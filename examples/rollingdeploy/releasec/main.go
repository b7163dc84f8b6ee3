//go:generate go run -C ../../../cmd/jobc . generate -C ../../examples/rollingdeploy/releasec

// Command releasec is release C of the rolling-deploy example: it decodes only payload
// version 2 of send_receipt: version 1 is retired.
package main

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/examples/rollingdeploy/app"
	"github.com/jobc-dev/jobc/examples/rollingdeploy/releasec/internal/jobs"
	"github.com/jobc-dev/jobc/runtime"
)

func main() {
	app.Main(app.Release{
		Name: "c",
		Enqueue: func(ctx context.Context, tx pgx.Tx, orderID, email string) error {
			_, err := jobs.EnqueueSendReceipt(ctx, tx, jobs.SendReceiptV2{OrderID: orderID, Recipient: email, Locale: jobs.SendReceiptV2LocaleFr})
			return err
		},
		Register: func(w *runtime.Worker, deliver app.Deliver) error {
			return jobs.Register(w, handler{deliver})
		},
	})
}

// handler always sees version 2: there is no other.
type handler struct{ deliver app.Deliver }

func (h handler) HandleSendReceipt(ctx context.Context, job jobs.SendReceiptJob, p jobs.SendReceipt) error {
	return h.deliver(ctx, job.Job, p.OrderID, p.Recipient, string(p.Locale))
}
