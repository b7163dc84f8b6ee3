package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/jobc-dev/jobc/examples/shop/internal/jobs"
	"github.com/jobc-dev/jobc/runtime"
)

// The generated job handle has one method per error class the job declares in
// jobc.yaml; a handler returns what they make, and the runtime reads the class (and,
// for rate_limited, the retry-after) from the *runtime.ClassError they wrap. This is
// how deliver_webhook classifies a merchant's answers.
func Example_webhookErrorClasses() {
	secret := []byte("secret")
	merchant := newFakeMerchant(secret, http.StatusOK)
	merchant.respond(
		merchantResponse{Status: http.StatusTooManyRequests, RetryAfter: "30"},
		merchantResponse{Status: http.StatusGone},
		merchantResponse{Status: http.StatusBadGateway},
	)
	srv := httptest.NewServer(merchant)
	defer srv.Close()

	sender := NewWebhookSender(srv.Client(), secret)
	job := jobs.DeliverWebhookJob{Job: &runtime.Job{ID: 1}} // what the worker passes the handler
	for range 4 {
		err := classifyDelivery(job, sender.Send(context.Background(), Webhook{
			URL: srv.URL, EventID: "0b7e1f2c-3d4a-4b5c-8d6e-7f8091a2b3c4", Event: "order.placed", Data: map[string]any{"order_id": 1},
		}))
		var ce *runtime.ClassError
		switch {
		case err == nil:
			fmt.Println("delivered")
		case errors.As(err, &ce) && ce.RetryAfter > 0:
			fmt.Printf("%s: runs again in %s\n", ce.Class, ce.RetryAfter)
		case errors.As(err, &ce):
			fmt.Printf("%s\n", ce.Class)
		default:
			fmt.Println("unclassified: default_error (transient) applies")
		}
	}
	// Output:
	// rate_limited: runs again in 30s
	// invalid
	// unclassified: default_error (transient) applies
	// delivered
}
