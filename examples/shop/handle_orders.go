package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/examples/shop/internal/jobs"
	"github.com/jobc-dev/jobc/runtime"
)

// HandleSendOrderConfirmation emails the order summary. The payload is always version
// 2, whatever version was stored: a version 1 row (email, tracking_pixel) arrives
// upcast (recipient, locale "en").
func (h *handlers) HandleSendOrderConfirmation(ctx context.Context, job jobs.SendOrderConfirmationJob, p jobs.SendOrderConfirmation) error {
	err := h.mailer.Send(ctx, Message{
		IdempotencyKey: job.IdempotencyKey(), // a retry after a lost acknowledgement sends nothing twice
		To:             []string{p.Recipient},
		Subject:        confirmationSubject(p.Locale, p.OrderID),
		Body:           confirmationBody(p),
	})
	var throttled *ThrottledError
	switch {
	case err == nil:
		job.Logger().Info("order confirmation sent", "order_id", p.OrderID, "to", p.Recipient)
		return nil
	case errors.As(err, &throttled):
		return job.RateLimited(err, throttled.RetryAfter)
	case errors.Is(err, ErrRejected):
		return job.Invalid(err)
	}
	return fmt.Errorf("send confirmation of order %d: %w", p.OrderID, err) // transient: the default_error
}

func confirmationSubject(l jobs.SendOrderConfirmationV2Locale, orderID int64) string {
	switch l {
	case jobs.SendOrderConfirmationV2LocaleFr:
		return fmt.Sprintf("Votre commande n°%d est confirmée", orderID)
	case jobs.SendOrderConfirmationV2LocaleDe:
		return fmt.Sprintf("Ihre Bestellung %d ist bestätigt", orderID)
	}
	return fmt.Sprintf("Your order %d is confirmed", orderID)
}

func confirmationBody(p jobs.SendOrderConfirmation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Hello %s,\n\nthank you for your order of %s:\n\n", p.CustomerName, p.PlacedAt.Format("2 January 2006"))
	for _, it := range p.Items {
		fmt.Fprintf(&b, "  %d × %s (%s)  %s\n", it.Quantity, it.Name, it.SKU, money(it.UnitPrice.AmountCents*it.Quantity, string(it.UnitPrice.Currency)))
	}
	fmt.Fprintf(&b, "\nTotal: %s\n", money(p.Total.AmountCents, string(p.Total.Currency)))
	return b.String()
}

// money formats an amount in cents: "EUR 59.80".
func money(cents int64, currency string) string {
	return fmt.Sprintf("%s %d.%02d", currency, cents/100, cents%100)
}

// HandlePaymentConfirmed marks the order paid and enqueues its invoice and the
// merchants' order.paid webhooks. payment_confirmed is transactional: tx also marks
// the job completed, so these writes and the job's completion commit together,
// exactly once, and an error rolls them all back for a retry.
func (h *handlers) HandlePaymentConfirmed(ctx context.Context, tx pgx.Tx, job jobs.PaymentConfirmedJob, p jobs.PaymentConfirmed) error {
	if err := confirmPayment(ctx, tx, job, p); err != nil {
		return fmt.Errorf("confirm payment %s of order %d: %w", p.PaymentID, p.OrderID, err)
	}
	return nil
}

// confirmPayment is HandlePaymentConfirmed's work in tx. The payment's unique key
// keeps the provider's duplicate events out; a payment already recorded is still
// accepted, so that running twice is harmless in any case.
func confirmPayment(ctx context.Context, tx pgx.Tx, job jobs.PaymentConfirmedJob, p jobs.PaymentConfirmed) error {
	var o struct {
		status, currency, name, email string
		total                         int64
		paymentID                     *string
		billTo                        Address
	}
	err := tx.QueryRow(ctx, `
		SELECT status, currency, customer_name, customer_email, total_cents, payment_id, billing_address
		FROM orders WHERE id = $1 FOR UPDATE`, p.OrderID).
		Scan(&o.status, &o.currency, &o.name, &o.email, &o.total, &o.paymentID, &o.billTo)
	if errors.Is(err, pgx.ErrNoRows) {
		return job.Invalid(fmt.Errorf("order %d does not exist", p.OrderID))
	}
	if err != nil {
		return fmt.Errorf("lock order: %w", err)
	}
	switch {
	case o.paymentID != nil && *o.paymentID == p.PaymentID:
		job.Logger().Info("payment already recorded", "payment_id", p.PaymentID)
		return nil
	case o.status != "placed":
		return job.Invalid(fmt.Errorf("order %d is %s", p.OrderID, o.status))
	case p.Amount.AmountCents != o.total || string(p.Amount.Currency) != o.currency:
		return job.Invalid(fmt.Errorf("paid %s, but the order's total is %s",
			money(p.Amount.AmountCents, string(p.Amount.Currency)), money(o.total, o.currency)))
	}
	if _, err := tx.Exec(ctx, `UPDATE orders SET status = 'paid', paid_at = $2, payment_id = $3 WHERE id = $1`, p.OrderID, p.PaidAt, p.PaymentID); err != nil {
		return fmt.Errorf("mark order paid: %w", err)
	}

	rows, err := tx.Query(ctx, `SELECT name, quantity, unit_price_cents FROM order_lines WHERE order_id = $1 ORDER BY line_no`, p.OrderID)
	if err != nil {
		return fmt.Errorf("read order lines: %w", err)
	}
	lines, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (jobs.GenerateInvoicePDFV1Line, error) {
		var l jobs.GenerateInvoicePDFV1Line
		err := r.Scan(&l.Description, &l.Quantity, &l.UnitPriceCents)
		return l, err
	})
	if err != nil {
		return fmt.Errorf("read order lines: %w", err)
	}
	meta := runtime.WithMetadata(map[string]any{"order_id": p.OrderID, "request_id": metadataOf(job.Job).RequestID})
	_, err = jobs.EnqueueGenerateInvoicePDF(ctx, tx, jobs.GenerateInvoicePDFV1{
		OrderID:       p.OrderID,
		InvoiceNumber: fmt.Sprintf("INV-%04d-%06d", p.PaidAt.Year(), p.OrderID),
		IssueDate:     runtime.DateOf(p.PaidAt),
		BillTo: jobs.GenerateInvoicePDFV1BillTo{
			Name:  o.name,
			Email: o.email,
			Address: jobs.GenerateInvoicePDFV1Address{
				Line1: o.billTo.Line1, Line2: o.billTo.Line2, City: o.billTo.City,
				PostalCode: o.billTo.PostalCode, CountryCode: o.billTo.CountryCode,
			},
		},
		Lines:    lines,
		Currency: jobs.GenerateInvoicePDFV1Currency(o.currency),
	}, meta)
	if err != nil {
		return err
	}
	_, err = enqueueWebhooks(ctx, tx, jobs.DeliverWebhookV1EventOrderPaid, p.PaidAt, map[string]any{
		"order_id": p.OrderID, "payment_id": p.PaymentID, "amount_cents": p.Amount.AmountCents, "currency": string(p.Amount.Currency),
	}, meta)
	if err != nil {
		return err
	}
	// The fact, for the shop's own subscribers (record_sale, award_loyalty_points) and,
	// through the outbox, for the services behind the broker.
	_, err = jobs.PublishOrderPaid(ctx, tx, jobs.OrderPaidV1{
		OrderID: p.OrderID, PaymentID: p.PaymentID, AmountCents: p.Amount.AmountCents,
		Currency: jobs.OrderPaidV1Currency(p.Amount.Currency), PaidAt: p.PaidAt,
	}, runtime.WithEventMetadata(map[string]any{"request_id": metadataOf(job.Job).RequestID}))
	return err
}

// HandleRecordSale adds the paid order to the sales ledger; a repeat changes nothing.
func (h *handlers) HandleRecordSale(ctx context.Context, job jobs.RecordSaleJob, p jobs.RecordSale) error {
	_, err := h.pool.Exec(ctx, `INSERT INTO sales (order_id, amount_cents, currency, paid_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (order_id) DO NOTHING`, p.OrderID, p.AmountCents, string(p.Currency), p.PaidAt)
	if err != nil {
		return job.Transient(fmt.Errorf("record sale of order %d: %w", p.OrderID, err))
	}
	return nil
}

// HandleAwardLoyaltyPoints credits points_per_euro points per whole euro spent; a
// repeat changes nothing.
func (h *handlers) HandleAwardLoyaltyPoints(ctx context.Context, job jobs.AwardLoyaltyPointsJob, p jobs.AwardLoyaltyPoints) error {
	points := p.SpentCents / 100 * p.PointsPerEuro
	_, err := h.pool.Exec(ctx, `INSERT INTO loyalty_awards (order_id, points) VALUES ($1, $2) ON CONFLICT (order_id) DO NOTHING`, p.OrderID, points)
	if err != nil {
		return job.Transient(fmt.Errorf("award points for order %d: %w", p.OrderID, err))
	}
	return nil
}

// HandleGenerateInvoicePDF renders the invoice and stores it where the customer's
// account page links to it.
func (h *handlers) HandleGenerateInvoicePDF(ctx context.Context, job jobs.GenerateInvoicePDFJob, p jobs.GenerateInvoicePDF) error {
	paper := jobs.GenerateInvoicePDFV1PaperSizeA4
	if p.PaperSize != nil { // the worker fills in the schema's default, but be safe
		paper = *p.PaperSize
	}
	addr := p.BillTo.Address
	doc := Document{
		Title:  "Invoice " + p.InvoiceNumber,
		Header: []string{"Issued " + p.IssueDate.String(), "Paper " + string(paper), p.BillTo.Name, addr.Line1, addr.PostalCode + " " + addr.City, addr.CountryCode},
		Footer: "Total " + money(invoiceTotal(p.Lines), string(p.Currency)),
	}
	for _, l := range p.Lines {
		doc.Rows = append(doc.Rows, []string{l.Description, fmt.Sprint(l.Quantity), money(l.UnitPriceCents, string(p.Currency))})
	}
	pdf, err := h.pdf.Render(ctx, doc)
	switch {
	case errors.Is(err, ErrUnavailable):
		return job.Unavailable(err)
	case errors.Is(err, ErrRejected):
		return job.Invalid(err)
	case err != nil:
		return fmt.Errorf("render invoice %s: %w", p.InvoiceNumber, err)
	}
	key := fmt.Sprintf("%d/%s.pdf", p.OrderID, p.InvoiceNumber)
	if err := h.blobs.Put(ctx, invoicesBucket, key, pdf, "application/pdf"); err != nil {
		if errors.Is(err, ErrUnavailable) {
			return job.Unavailable(err)
		}
		return fmt.Errorf("store invoice %s: %w", p.InvoiceNumber, err)
	}
	if _, err := h.pool.Exec(ctx, `UPDATE orders SET invoice_key = $2 WHERE id = $1`, p.OrderID, key); err != nil {
		return fmt.Errorf("record invoice %s: %w", p.InvoiceNumber, err)
	}
	job.Logger().Info("invoice stored", "order_id", p.OrderID, "key", key)
	return nil
}

func invoiceTotal(lines []jobs.GenerateInvoicePDFV1Line) int64 {
	var t int64
	for _, l := range lines {
		t += l.Quantity * l.UnitPriceCents
	}
	return t
}
