package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jobc-dev/jobc/examples/shop/internal/jobs"
	"github.com/jobc-dev/jobc/runtime"
)

// payOrderSQL marks an order paid and enqueues its receipt from plain SQL, in one
// transaction, as a back-office script would: the order row and the job commit, or
// roll back, together. The payload leaves out locale, which the schema defaults.
const payOrderSQL = `
BEGIN;
INSERT INTO orders (customer_name, customer_email, billing_address, status, total_cents, currency, paid_at)
VALUES ('Ada Lovelace', 'ada@example.com', '{"city": "London"}', 'paid', 5480, 'EUR', now());
SELECT jobc_enqueue_send_receipt(jsonb_build_object(
    'order_id', currval(pg_get_serial_sequence('orders', 'id')),
    'email', 'ada@example.com', 'total_cents', 5480, 'currency', 'EUR'));
%s;`

// TestSQLProducerEnqueuesInTheCallersTransaction: BEGIN; INSERT INTO orders ...;
// SELECT jobc_enqueue_send_receipt('{...}'); COMMIT; and a Go worker sends the
// receipt. With ROLLBACK instead, neither the order nor the job is left.
func TestSQLProducerEnqueuesInTheCallersTransaction(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	orders := e.count(t, `SELECT count(*) FROM orders`)

	if _, err := e.pool.Exec(ctx, strings.Replace(payOrderSQL, "%s", "ROLLBACK", 1)); err != nil {
		t.Fatal(err)
	}
	if n := e.count(t, `SELECT count(*) FROM orders`); n != orders {
		t.Errorf("%d orders after the rollback, want %d", n, orders)
	}
	if ids := e.jobsOfKind(t, jobs.KindSendReceipt); len(ids) != 0 {
		t.Errorf("receipt jobs %v after the rollback, want none", ids)
	}

	if _, err := e.pool.Exec(ctx, strings.Replace(payOrderSQL, "%s", "COMMIT", 1)); err != nil {
		t.Fatal(err)
	}
	ids := e.jobsOfKind(t, jobs.KindSendReceipt)
	if len(ids) != 1 {
		t.Fatalf("receipt jobs %v after the commit, want one", ids)
	}
	queued, err := runtime.GetJob(ctx, e.pool, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	// Written as Go's Enqueue writes it: the job type's queue, priority and attempts,
	// the default filled in, the unique key Go computes.
	if queued.Queue != "email" || queued.Priority != 5 || queued.MaxAttempts != 8 || queued.PayloadVersion != 1 ||
		!strings.Contains(string(queued.Payload), `"locale": "en"`) {
		t.Errorf("queued %+v, payload %s", queued, queued.Payload)
	}
	var orderID int64
	if err := e.pool.QueryRow(ctx, `SELECT max(id) FROM orders`).Scan(&orderID); err != nil {
		t.Fatal(err)
	}
	dup, err := jobs.EnqueueSendReceipt(ctx, e.pool, jobs.SendReceiptV1{OrderID: orderID, Email: "ada@example.com", TotalCents: 5480, Currency: jobs.SendReceiptV1CurrencyEUR, Locale: jobs.SendReceiptV1LocaleEn})
	if err != nil || !dup.Duplicate || dup.ID != ids[0] {
		t.Errorf("Go's Enqueue of the same receipt: %+v, %v; want a duplicate of job %d", dup, err, ids[0])
	}

	e.startWorker(t)
	j := e.waitJob(t, ids[0], finished)
	if j.State != runtime.StateCompleted {
		t.Fatalf("receipt job is %s, errors %+v", j.State, j.Errors)
	}
	var sent []Message
	for _, m := range e.mailer.Sent() {
		if strings.HasPrefix(m.Subject, "Receipt for order") {
			sent = append(sent, m)
		}
	}
	if len(sent) != 1 || sent[0].To[0] != "ada@example.com" || sent[0].Body != "Paid: EUR 54.80\n" {
		t.Errorf("receipts sent: %+v", sent)
	}
}

// TestSQLProducerRejectsAnInvalidPayload: the SQL function checks the payload against
// the schema and raises SQLSTATE 22J01 with Go's message, naming each JSON pointer and
// rule; the transaction's order is not written.
func TestSQLProducerRejectsAnInvalidPayload(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	_, err := e.pool.Exec(ctx, `SELECT jobc_enqueue_send_receipt('{"order_id": 0, "email": "ada", "total_cents": 5480, "currency": "CHF"}')`)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "22J01" {
		t.Fatalf("got %v, want SQLSTATE 22J01", err)
	}
	want := "jobc: enqueue send_receipt: invalid send_receipt payload (version 1): " +
		"/currency: value must be one of 'EUR', 'USD', 'GBP'; /email: 'ada' is not valid email: missing @; /order_id: minimum: got 0, want 1"
	if pgErr.Message != want {
		t.Errorf("message\n  %s\nwant\n  %s", pgErr.Message, want)
	}
	_, goErr := jobs.EnqueueSendReceipt(ctx, e.pool, jobs.SendReceiptV1{OrderID: 0, Email: "ada", TotalCents: 5480, Currency: "CHF", Locale: "en"})
	if goErr == nil || goErr.Error() != want {
		t.Errorf("Go's Enqueue says %v, want the same as SQL:\n  %s", goErr, want)
	}

	// As psql runs a script: the failed statement aborts the transaction, and the
	// ROLLBACK that follows ends it.
	orders := e.count(t, `SELECT count(*) FROM orders`)
	conn, err := e.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	_, err = conn.Exec(ctx, `BEGIN;
INSERT INTO orders (customer_name, customer_email, billing_address, total_cents, currency) VALUES ('Ada', 'ada@example.com', '{}', 1, 'EUR');
SELECT jobc_enqueue_send_receipt('{"order_id": 1}');
COMMIT;`)
	if !errors.As(err, &pgErr) || !strings.Contains(pgErr.Message, "missing properties 'email', 'total_cents', 'currency'") {
		t.Errorf("got %v, want the missing properties", err)
	}
	if _, err := conn.Exec(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if n := e.count(t, `SELECT count(*) FROM orders`); n != orders {
		t.Errorf("%d orders after the failed transaction, want %d", n, orders)
	}
}
