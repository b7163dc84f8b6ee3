package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/examples/shop/internal/jobs"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestDemo runs the demo end to end and checks its account of what happened.
func TestDemo(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewSchema(t, nil)
	url := pgtest.SchemaConnString(t, pgtest.SchemaOf(pool))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	var out bytes.Buffer
	if err := run(ctx, url, &out, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("run: %v\noutput:\n%s", err, out.String())
	}
	for _, want := range []string{
		"order 1 placed: its confirmation email (job 1) and order.placed webhooks (jobs 2, 3) were enqueued in the same transaction",
		"it rolled back, leaving 1 order and 3 jobs",
		"the repeat is job 7 again (duplicate: true)",
		"send_order_confirmation completed after 1 attempt(s)",
		"attempt 1: rate_limited:",
		"attempt 1: invalid:",
		`email to ada@example.com: "Your order 1 is confirmed"`,
		"merchant got order.paid (request evt_1PqR8s, signed: true) and answered 200",
		"blob store holds shop-invoices/1/INV-",
		"blob store holds 0 of the deleted customer's uploads",
		"the order is paid, BOOK-1843 is on sale: true, carts left: 1 of 3",
		"readiness probe: 200; /metrics: jobc_jobs_finished_total completed ",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestPlaceOrderEnqueuesInTheSameTransaction: the order's jobs are visible inside the
// order's transaction, invisible to everyone else until it commits, and there after.
func TestPlaceOrderEnqueuesInTheSameTransaction(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()

	var placed PlacedOrder
	err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		var err error
		placed, err = placeOrder(ctx, tx, e.order(true))
		if err != nil {
			return err
		}
		for _, id := range append([]int64{placed.ConfirmationID}, placed.WebhookIDs...) {
			j, err := runtime.GetJob(ctx, tx, id)
			if err != nil {
				t.Fatalf("job %d inside the transaction: %v", id, err)
			}
			if j.State != runtime.StateAvailable || j.Priority != runtime.MostUrgent {
				t.Errorf("job %d (%s) is %s with priority %d, want available with priority %d (express)", id, j.Kind, j.State, j.Priority, runtime.MostUrgent)
			}
			if _, err := runtime.GetJob(ctx, e.pool, id); !errors.Is(err, runtime.ErrJobNotFound) {
				t.Errorf("job %d outside the uncommitted transaction: got %v, want ErrJobNotFound", id, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(placed.WebhookIDs) != 1 {
		t.Fatalf("webhook jobs %v, want one per endpoint (1)", placed.WebhookIDs)
	}
	conf, err := runtime.GetJob(ctx, e.pool, placed.ConfirmationID)
	if err != nil {
		t.Fatal(err)
	}
	// write_version: 1, so the stored payload is version 1, whatever handlers receive.
	var v1 jobs.SendOrderConfirmationV1
	if err := json.Unmarshal(conf.Payload, &v1); err != nil {
		t.Fatal(err)
	}
	if conf.Kind != jobs.KindSendOrderConfirmation || conf.PayloadVersion != 1 || v1.Email != "ada@example.com" || v1.OrderID != placed.OrderID {
		t.Errorf("confirmation job: kind %s, version %d, payload %s", conf.Kind, conf.PayloadVersion, conf.Payload)
	}
	if got := metadataField(t, conf, "request_id"); got != "req-test" {
		t.Errorf("metadata request_id = %v, want req-test", got)
	}
	if n := e.count(t, `SELECT count(*) FROM orders WHERE id = $1`, placed.OrderID); n != 1 {
		t.Errorf("%d orders committed, want 1", n)
	}
}

// TestFailedOrderLeavesNoJobs: a checkout that fails after enqueueing leaves neither
// the order nor its jobs.
func TestFailedOrderLeavesNoJobs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := e.order(false)
	o.Lines = append(o.Lines, OrderLine{SKU: "TEE-042", Quantity: 2}) // one in stock
	_, err := e.shop.PlaceOrder(t.Context(), o)
	if !errors.Is(err, ErrOutOfStock) {
		t.Fatalf("PlaceOrder: %v, want ErrOutOfStock", err)
	}
	if n := e.count(t, `SELECT count(*) FROM orders`); n != 0 {
		t.Errorf("%d orders, want 0", n)
	}
	if n := e.count(t, `SELECT (SELECT count(*) FROM jobc_jobs) + (SELECT count(*) FROM jobc_jobs_finished)`); n != 0 {
		t.Errorf("%d jobs, want 0", n)
	}
	if n := e.count(t, `SELECT stock FROM products WHERE sku = 'MUG-001'`); n != 10 {
		t.Errorf("MUG-001 stock %d, want 10 again", n)
	}
}

// TestWorkerCompletesOrderJobs: the worker sends the confirmation (a version 1 row,
// handled as version 2) and delivers the signed webhook.
func TestWorkerCompletesOrderJobs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	placed, err := e.shop.PlaceOrder(t.Context(), e.order(false))
	if err != nil {
		t.Fatal(err)
	}
	e.startWorker(t)
	for _, id := range append([]int64{placed.ConfirmationID}, placed.WebhookIDs...) {
		j := e.waitJob(t, id, finished)
		if j.State != runtime.StateCompleted || j.Attempt != 1 {
			t.Errorf("job %d (%s) is %s after %d attempts, want completed after 1; errors %+v", id, j.Kind, j.State, j.Attempt, j.Errors)
		}
	}
	sent := e.mailer.Sent()
	if len(sent) != 1 {
		t.Fatalf("sent %d emails, want 1: %+v", len(sent), sent)
	}
	m := sent[0]
	if !slices.Equal(m.To, []string{"ada@example.com"}) || m.IdempotencyKey == "" ||
		!strings.Contains(m.Subject, "is confirmed") || !strings.Contains(m.Body, "2 × Analytical Engine mug (MUG-001)  EUR 29.80") {
		t.Errorf("email %+v", m)
	}
	got := e.merchant.Received()
	if len(got) != 1 {
		t.Fatalf("merchant got %d requests, want 1", len(got))
	}
	if r := got[0]; r.Event != "order.placed" || !r.SignatureOK || r.RequestID != "req-test" || r.IdempotencyKey == "" {
		t.Errorf("merchant got %+v", r)
	}
}

// TestWebhookRateLimitedIsRetriedAfterRetryAfter: a 429 is rate_limited, and the next
// attempt comes after the merchant's Retry-After rather than the job's backoff (10s).
func TestWebhookRateLimitedIsRetriedAfterRetryAfter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.merchant.respond(merchantResponse{Status: http.StatusTooManyRequests, RetryAfter: "1"})
	placed, err := e.shop.PlaceOrder(t.Context(), e.order(false))
	if err != nil {
		t.Fatal(err)
	}
	id := placed.WebhookIDs[0]
	e.startWorker(t)

	j := e.waitJob(t, id, func(j *runtime.JobInfo) bool { return len(j.Errors) > 0 })
	first := j.Errors[0]
	if first.Class != "rate_limited" || first.Attempt != 1 {
		t.Errorf("first error %+v, want class rate_limited on attempt 1", first)
	}
	if j.State == runtime.StateScheduled { // normally: the retry waits a second
		if d := j.AvailableAt.Sub(first.At); d < 900*time.Millisecond || d > 1100*time.Millisecond {
			t.Errorf("retry scheduled %s after the failure, want the Retry-After of 1s", d)
		}
	}

	j = e.waitJob(t, id, finished)
	if j.State != runtime.StateCompleted || j.Attempt != 2 || len(j.Errors) != 1 {
		t.Fatalf("job is %s after %d attempts with errors %+v, want completed after 2 with 1 error", j.State, j.Attempt, j.Errors)
	}
	if j.FinishedAt == nil || j.FinishedAt.Sub(first.At) > 5*time.Second {
		t.Errorf("finished at %v, %v after the 429: the Retry-After was not used", j.FinishedAt, j.FinishedAt.Sub(first.At))
	}
	got := e.merchant.Received()
	if len(got) != 2 || got[0].Status != 429 || got[1].Status != 200 || got[0].IdempotencyKey != got[1].IdempotencyKey {
		t.Errorf("merchant got %+v, want 429 then 200 for the same Idempotency-Key", got)
	}
}

// TestWebhookClientErrorFailsAtOnce: a 4xx other than 429 is invalid: the job fails on
// its first attempt instead of using up its twelve.
func TestWebhookClientErrorFailsAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.merchant.respond(merchantResponse{Status: http.StatusUnprocessableEntity})
	placed, err := e.shop.PlaceOrder(t.Context(), e.order(false))
	if err != nil {
		t.Fatal(err)
	}
	e.startWorker(t)
	j := e.waitJob(t, placed.WebhookIDs[0], finished)
	if j.State != runtime.StateFailed || j.Attempt != 1 || j.MaxAttempts != 12 {
		t.Errorf("job is %s after %d of %d attempts, want failed after 1 of 12", j.State, j.Attempt, j.MaxAttempts)
	}
	if len(j.Errors) != 1 || j.Errors[0].Class != "invalid" || !strings.Contains(j.Errors[0].Error, "422 Unprocessable Entity") {
		t.Errorf("errors %+v, want one of class invalid", j.Errors)
	}
}

// TestPaymentConfirmed: a payment event marks the order paid and, in the handler's
// transaction, enqueues the invoice and the order.paid webhook. A repeated event is a
// duplicate of the first, before and after it completed.
func TestPaymentConfirmed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	placed, err := e.shop.PlaceOrder(ctx, e.order(false))
	if err != nil {
		t.Fatal(err)
	}
	pay := e.payment(placed)
	first, err := e.shop.ReceivePayment(ctx, pay)
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.shop.ReceivePayment(ctx, pay)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Duplicate || again.ID != first.ID {
		t.Errorf("repeated event: %+v, want a duplicate of job %d", again, first.ID)
	}
	e.startWorker(t)

	if j := e.waitJob(t, first.ID, finished); j.State != runtime.StateCompleted {
		t.Fatalf("payment job is %s: %+v", j.State, j.Errors)
	}
	invoices := e.jobsOfKind(t, jobs.KindGenerateInvoicePDF)
	if len(invoices) != 1 {
		t.Fatalf("invoice jobs %v, want 1", invoices)
	}
	if j := e.waitJob(t, invoices[0], finished); j.State != runtime.StateCompleted {
		t.Fatalf("invoice job is %s: %+v", j.State, j.Errors)
	}
	var status, key string
	if err := e.pool.QueryRow(ctx, `SELECT status, invoice_key FROM orders WHERE id = $1`, placed.OrderID).Scan(&status, &key); err != nil {
		t.Fatal(err)
	}
	pdf, ok := e.blobs.Get(invoicesBucket, key)
	if status != "paid" || !ok || !bytes.HasPrefix(pdf, []byte("%PDF-")) || !bytes.Contains(pdf, []byte("Analytical Engine mug | 2 | EUR 14.90")) {
		t.Errorf("order is %s, invoice %q: %q", status, key, pdf)
	}
	// unique while [..., completed]: the payment keeps its key after the job completed.
	if late, err := e.shop.ReceivePayment(ctx, pay); err != nil || !late.Duplicate || late.ID != first.ID {
		t.Errorf("event repeated after completion: %+v, %v; want a duplicate of job %d", late, err, first.ID)
	}
	e.waitFor(t, "the order.paid webhook", func() bool {
		for _, r := range e.merchant.Received() {
			if r.Event == "order.paid" && r.RequestID == pay.EventID {
				return true
			}
		}
		return false
	})
}

// TestPaymentMismatchFailsAndRollsBack: a payment that does not match the order is
// invalid; the transactional handler's writes roll back with it.
func TestPaymentMismatchFailsAndRollsBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	placed, err := e.shop.PlaceOrder(ctx, e.order(false))
	if err != nil {
		t.Fatal(err)
	}
	pay := e.payment(placed)
	pay.AmountCents--
	job, err := e.shop.ReceivePayment(ctx, pay)
	if err != nil {
		t.Fatal(err)
	}
	e.startWorker(t)
	j := e.waitJob(t, job.ID, finished)
	if j.State != runtime.StateFailed || j.Attempt != 1 || len(j.Errors) != 1 || j.Errors[0].Class != "invalid" {
		t.Fatalf("job is %s after %d attempts, errors %+v: want failed at once as invalid", j.State, j.Attempt, j.Errors)
	}
	if n := e.count(t, `SELECT count(*) FROM orders WHERE status = 'placed'`); n != 1 {
		t.Errorf("%d placed orders, want the order still placed", n)
	}
	if ids := e.jobsOfKind(t, jobs.KindGenerateInvoicePDF); len(ids) != 0 {
		t.Errorf("invoice jobs %v, want none", ids)
	}
}

// TestPaymentPublishesOrderPaid: confirming a payment publishes order_paid in the
// handler's transaction: one outbox row keyed by the order, for the relay, and the
// subscriber jobs, which record the sale (typed as the event) and award the points
// (mapped, with the job's default rate); a payment that rolls back publishes nothing.
func TestPaymentPublishesOrderPaid(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	placed, err := e.shop.PlaceOrder(ctx, e.order(false))
	if err != nil {
		t.Fatal(err)
	}
	bad := e.payment(placed)
	bad.ID, bad.EventID, bad.AmountCents = bad.ID+"x", bad.EventID+"x", bad.AmountCents-1
	if _, err := e.shop.ReceivePayment(ctx, bad); err != nil {
		t.Fatal(err)
	}
	pay := e.payment(placed)
	first, err := e.shop.ReceivePayment(ctx, pay)
	if err != nil {
		t.Fatal(err)
	}
	e.startWorker(t)
	if j := e.waitJob(t, first.ID, finished); j.State != runtime.StateCompleted {
		t.Fatalf("payment job is %s: %+v", j.State, j.Errors)
	}
	var key, subject, meta string
	var version int
	var amount int64
	err = e.pool.QueryRow(ctx, `SELECT ordering_key, subject, version, (payload->>'amount_cents')::bigint, metadata->>'request_id'
		FROM jobc_events WHERE event = $1`, jobs.EventOrderPaid).Scan(&key, &subject, &version, &amount, &meta)
	if err != nil {
		t.Fatalf("the order_paid outbox row: %v (rows: %d)", err, e.count(t, `SELECT count(*) FROM jobc_events`))
	}
	if key != fmt.Sprint(placed.OrderID) || subject != "shop.orders.paid" || version != 1 || amount != pay.AmountCents || meta != pay.EventID {
		t.Errorf("outbox row: key %s, subject %s, version %d, amount %d, request %s", key, subject, version, amount, meta)
	}
	if n := e.count(t, `SELECT count(*) FROM jobc_events`); n != 1 {
		t.Errorf("%d outbox rows, want the committed payment's only", n)
	}
	// What a consumer behind the broker does with the message body and its version.
	var body []byte
	if err := e.pool.QueryRow(ctx, `SELECT payload FROM jobc_events WHERE event = $1`, jobs.EventOrderPaid).Scan(&body); err != nil {
		t.Fatal(err)
	}
	got, err := jobs.DecodeOrderPaid(version, body)
	if err != nil || got.OrderID != placed.OrderID || got.PaymentID != pay.ID || got.AmountCents != pay.AmountCents || !got.PaidAt.Equal(pay.PaidAt) {
		t.Errorf("DecodeOrderPaid: %+v, %v", got, err)
	}
	if _, err := jobs.DecodeOrderPaid(version, []byte(`{"order_id": 0}`)); err == nil {
		t.Error("DecodeOrderPaid accepted a payload without its required fields")
	}
	e.waitFor(t, "the sale and the points", func() bool {
		return e.count(t, `SELECT count(*) FROM sales WHERE order_id = $1 AND amount_cents = $2`, placed.OrderID, pay.AmountCents) == 1 &&
			e.count(t, `SELECT count(*) FROM loyalty_awards WHERE order_id = $1 AND points = $2`, placed.OrderID, pay.AmountCents/100) == 1
	})
}

// TestScheduledPublication: the publication waits, scheduled, until its time.
func TestScheduledPublication(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	at := time.Now().Add(500 * time.Millisecond)
	id, err := e.shop.SchedulePublication(ctx, e.seed.book, at, "lin@shop.example")
	if err != nil {
		t.Fatal(err)
	}
	j, err := runtime.GetJob(ctx, e.pool, id)
	if err != nil {
		t.Fatal(err)
	}
	if j.State != runtime.StateScheduled || j.Priority != 3 || j.AvailableAt.Sub(at).Abs() > time.Millisecond {
		t.Errorf("job is %s, priority %d, available at %v: want scheduled, 3, %v", j.State, j.Priority, j.AvailableAt, at)
	}
	if got := metadataField(t, j, "requested_by"); got != "lin@shop.example" {
		t.Errorf("metadata requested_by = %v", got)
	}
	e.startWorker(t)
	if j := e.waitJob(t, id, finished); j.State != runtime.StateCompleted {
		t.Fatalf("job is %s: %+v", j.State, j.Errors)
	}
	var published time.Time
	var channels []string
	if err := e.pool.QueryRow(ctx, `SELECT published_at, channels FROM products WHERE id = $1`, e.seed.book).Scan(&published, &channels); err != nil {
		t.Fatal(err)
	}
	if published.Before(at.Truncate(time.Microsecond)) || !slices.Equal(channels, []string{"web", "app"}) {
		t.Errorf("published at %v on %v, want at or after %v on web and app", published, channels, at)
	}
}

// TestFormerKindAndVersion: a row an older build stored — under the job's former kind
// (an alias) and as payload version 1 — is handled, upcast to version 2.
func TestFormerKindAndVersion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var current *runtime.JobType
	for _, jt := range jobs.JobTypes() {
		if jt.Kind == jobs.KindSendOrderConfirmation {
			current = jt
		}
	}
	old, err := runtime.NewJobType(runtime.JobType{
		Kind: "order_confirmation_email", Queue: current.Queue, Priority: current.Priority,
		MaxAttempts: current.MaxAttempts, WriteVersion: 1, Versions: current.Versions[:1],
	})
	if err != nil {
		t.Fatal(err)
	}
	pixel := true
	job, err := runtime.Enqueue(t.Context(), e.pool, old, jobs.SendOrderConfirmationV1{
		OrderID: 41, Email: "old@example.com", CustomerName: "Charles Babbage", PlacedAt: time.Now(), TrackingPixel: &pixel,
		Items: []jobs.SendOrderConfirmationV1LineItem{{SKU: "MUG-001", Name: "Analytical Engine mug", Quantity: 1,
			UnitPrice: jobs.SendOrderConfirmationV1Money{AmountCents: 1490, Currency: jobs.SendOrderConfirmationV1MoneyCurrencyEUR}}},
		Total: jobs.SendOrderConfirmationV1Money{AmountCents: 1490, Currency: jobs.SendOrderConfirmationV1MoneyCurrencyEUR},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.startWorker(t)
	j := e.waitJob(t, job.ID, finished)
	if j.State != runtime.StateCompleted || j.Kind != "order_confirmation_email" {
		t.Fatalf("job %s is %s: %+v", j.Kind, j.State, j.Errors)
	}
	sent := e.mailer.Sent()
	if len(sent) != 1 || !slices.Equal(sent[0].To, []string{"old@example.com"}) || sent[0].Subject != "Your order 41 is confirmed" {
		t.Errorf("sent %+v, want the English confirmation to the v1 email (renamed to recipient, locale added)", sent)
	}
}

// TestDeleteCustomerDeletesFiles: deleting an account enqueues the deletion of its
// files; the blob store's throttling is rate_limited and retried after its delay.
func TestDeleteCustomerDeletesFiles(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.blobs.failures.add(&ThrottledError{Service: "blob store", RetryAfter: 100 * time.Millisecond})
	ids, err := e.shop.DeleteCustomer(t.Context(), e.seed.grace)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1 {
		t.Fatalf("delete jobs %v, want 1", ids)
	}
	if n := e.count(t, `SELECT count(*) FROM customer_files`); n != 0 {
		t.Errorf("%d customer files left in the database", n)
	}
	e.startWorker(t)
	j := e.waitJob(t, ids[0], finished)
	if j.State != runtime.StateCompleted || j.Attempt != 2 || len(j.Errors) != 1 || j.Errors[0].Class != "rate_limited" {
		t.Fatalf("job is %s after %d attempts, errors %+v: want completed on attempt 2 after a rate_limited one", j.State, j.Attempt, j.Errors)
	}
	if keys := e.blobs.Keys(uploadsBucket); len(keys) != 0 {
		t.Errorf("uploads left: %v", keys)
	}
}

// TestHousekeepingJobs runs the two scheduled job types by hand: the cart purge works
// in batches, and the sales report totals the day's orders.
func TestHousekeepingJobs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	if _, err := e.shop.PlaceOrder(ctx, e.order(false)); err != nil {
		t.Fatal(err)
	}
	purge, err := jobs.EnqueuePurgeExpiredCarts(ctx, e.pool, jobs.PurgeExpiredCartsV1{OlderThanHours: 72, BatchSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	today := runtime.DateOf(time.Now().In(e.h.reportZone))
	report, err := jobs.EnqueueDailySalesReport(ctx, e.pool, jobs.DailySalesReportV1{
		Day: &today, Format: jobs.DailySalesReportV1FormatHTML, Recipients: []string{"ops@shop.example"},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.startWorker(t)
	for _, id := range []int64{purge.ID, report.ID} {
		if j := e.waitJob(t, id, finished); j.State != runtime.StateCompleted {
			t.Fatalf("job %d (%s) is %s: %+v", id, j.Kind, j.State, j.Errors)
		}
	}
	if n := e.count(t, `SELECT count(*) FROM carts`); n != 1 {
		t.Errorf("%d carts left, want the 1 fresh one", n)
	}
	html, ok := e.blobs.Get(reportsBucket, "daily-sales/"+today.String()+".html")
	if !ok || !strings.Contains(string(html), "<td>EUR</td><td>1</td><td>EUR 54.80</td>") {
		t.Errorf("report: %q", html)
	}
	var toOps []Message
	for _, m := range e.mailer.Sent() {
		if slices.Contains(m.To, "ops@shop.example") {
			toOps = append(toOps, m)
		}
	}
	if len(toOps) != 1 || toOps[0].Subject != "Sales report for "+today.String() {
		t.Errorf("report emails %+v", toOps)
	}
}

// TestClassifyDelivery covers every branch of the webhook's error classification.
func TestClassifyDelivery(t *testing.T) {
	job := jobs.DeliverWebhookJob{Job: &runtime.Job{ID: 1}}
	for _, tc := range []struct {
		err        error
		class      string // "" for unclassified
		retryAfter time.Duration
	}{
		{&StatusError{Code: 429, RetryAfter: 30 * time.Second}, "rate_limited", 30 * time.Second},
		{&StatusError{Code: 429, RetryAfter: 48 * time.Hour}, "rate_limited", maxRetryAfter},
		{&StatusError{Code: 408}, "transient", 0},
		{&StatusError{Code: 404}, "invalid", 0},
		{&StatusError{Code: 503}, "", 0},
		{errors.New("connection refused"), "", 0},
	} {
		err := classifyDelivery(job, tc.err)
		var ce *runtime.ClassError
		switch {
		case !errors.Is(err, tc.err):
			t.Errorf("%v: classified as %v, which does not wrap it", tc.err, err)
		case tc.class == "" && errors.As(err, &ce):
			t.Errorf("%v: class %s, want none (the default_error applies)", tc.err, ce.Class)
		case tc.class != "" && (!errors.As(err, &ce) || ce.Class != tc.class || ce.RetryAfter != tc.retryAfter):
			t.Errorf("%v: got %#v, want class %s retrying after %s", tc.err, ce, tc.class, tc.retryAfter)
		}
	}
	if err := classifyDelivery(job, nil); err != nil {
		t.Errorf("success classified as %v", err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"":                              0,
		"120":                           2 * time.Minute,
		"Sun, 01 Mar 2026 12:00:30 GMT": 30 * time.Second,
		"Sun, 01 Mar 2026 11:00:00 GMT": 0, // in the past
		"soon":                          0,
	} {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", in, got, want)
		}
	}
}

// env is one test's shop: its own schema, seeded, with fakes for every service.
type env struct {
	pool     *pgxpool.Pool
	shop     *Shop
	mailer   *fakeMailer
	blobs    *fakeBlobStore
	merchant *fakeMerchant
	h        *handlers
	seed     seeded
}

func newEnv(t *testing.T) *env {
	t.Helper()
	secret := []byte("test-secret")
	e := &env{
		pool:     pgtest.NewSchema(t, migrate),
		mailer:   newFakeMailer(),
		blobs:    newFakeBlobStore(),
		merchant: newFakeMerchant(secret, http.StatusOK),
	}
	e.shop = NewShop(e.pool)
	srv := httptest.NewServer(e.merchant)
	t.Cleanup(srv.Close)
	var err error
	e.h, err = newHandlers(e.pool, services{
		Mailer: e.mailer, Blobs: e.blobs, PDF: &fakePDF{}, Webhooks: NewWebhookSender(srv.Client(), secret),
	})
	if err != nil {
		t.Fatal(err)
	}
	e.seed, err = seed(t.Context(), e.pool, e.blobs, endpoint{URL: srv.URL + "/hooks", Events: []string{"order.placed", "order.paid"}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// order is a checkout by Ada of 2 mugs and a T-shirt, EUR 54.80.
func (e *env) order(express bool) NewOrder {
	return NewOrder{
		CustomerID: e.seed.ada,
		Lines:      []OrderLine{{SKU: "MUG-001", Quantity: 2}, {SKU: "TEE-042", Quantity: 1}},
		BillTo:     Address{Line1: "12 St James's Square", City: "London", PostalCode: "SW1Y 4JH", CountryCode: "GB"},
		Express:    express,
		RequestID:  "req-test",
	}
}

// payment is the provider's event for a placed order.
func (e *env) payment(o PlacedOrder) Payment {
	return Payment{ID: "pay_T3stPaym3nt", EventID: "evt_test", OrderID: o.OrderID, AmountCents: o.TotalCents,
		Currency: o.Currency, PaidAt: time.Now(), Method: "card", CardBrand: "visa", CardLast4: "4242"}
}

// startWorker runs a worker with short intervals on every queue until the test ends.
func (e *env) startWorker(t *testing.T) {
	t.Helper()
	w := runtime.NewWorker(e.pool, runtime.Config{
		Logger:            slog.New(slog.NewTextHandler(t.Output(), nil)),
		PollInterval:      50 * time.Millisecond,
		SchedulerInterval: 20 * time.Millisecond,
		LeaseDuration:     5 * time.Second,
		ShutdownGrace:     5 * time.Second,
	})
	if err := jobs.Register(w, e.h); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	})
}

func finished(j *runtime.JobInfo) bool { return j.State.Finished() }

// waitJob polls job id until cond holds, and returns it then.
func (e *env) waitJob(t *testing.T, id int64, cond func(*runtime.JobInfo) bool) *runtime.JobInfo {
	t.Helper()
	var j *runtime.JobInfo
	e.waitFor(t, "job condition", func() bool {
		var err error
		j, err = runtime.GetJob(t.Context(), e.pool, id)
		if err != nil {
			t.Fatal(err)
		}
		return cond(j)
	})
	return j
}

// waitFor polls cond until it holds, for at most 20s.
func (e *env) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (e *env) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	if err := e.pool.QueryRow(t.Context(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// jobsOfKind lists the ids of a kind's jobs, finished or not.
func (e *env) jobsOfKind(t *testing.T, kind string) []int64 {
	t.Helper()
	rows, err := e.pool.Query(t.Context(), `SELECT id FROM jobc_jobs WHERE kind = $1 UNION ALL SELECT id FROM jobc_jobs_finished WHERE kind = $1 ORDER BY id`, kind)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func metadataField(t *testing.T, j *runtime.JobInfo, key string) any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(j.Metadata, &m); err != nil {
		t.Fatalf("job %d metadata %s: %v", j.ID, j.Metadata, err)
	}
	return m[key]
}
