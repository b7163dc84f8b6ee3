package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/examples/shop/internal/jobs"
	"github.com/jobc-dev/jobc/runtime"
)

// Buckets of the blob store.
const (
	uploadsBucket  = "shop-uploads"
	invoicesBucket = "shop-invoices"
	reportsBucket  = "shop-reports"
)

// Shop is the shop's backend: business operations that change the database and
// enqueue the background work the change needs in the same transaction, so the work
// exists if and only if the change committed.
type Shop struct {
	pool *pgxpool.Pool
}

// NewShop returns a shop on pool, whose database has been migrated.
func NewShop(pool *pgxpool.Pool) *Shop { return &Shop{pool: pool} }

// Address is a postal address.
type Address struct {
	Line1       string  `json:"line1"`
	Line2       *string `json:"line2,omitempty"`
	City        string  `json:"city"`
	PostalCode  string  `json:"postal_code"`
	CountryCode string  `json:"country_code"`
}

// NewOrder is a checkout.
type NewOrder struct {
	CustomerID int64
	Lines      []OrderLine
	BillTo     Address
	// Express orders jump the queues: their email and webhooks run first.
	Express bool
	// RequestID identifies the HTTP request that placed the order; it travels with the
	// order's jobs as metadata, into logs and webhook headers.
	RequestID string
}

// OrderLine is one product of a checkout.
type OrderLine struct {
	SKU      string
	Quantity int64
}

// PlacedOrder is what PlaceOrder did.
type PlacedOrder struct {
	OrderID        int64
	TotalCents     int64
	Currency       string
	ConfirmationID int64   // the send_order_confirmation job
	WebhookIDs     []int64 // a deliver_webhook job per subscribed endpoint
}

// ErrOutOfStock is returned when a product of an order lacks stock.
var ErrOutOfStock = errors.New("out of stock")

// PlaceOrder records an order and, in the same transaction, enqueues its
// confirmation email and an order.placed webhook for every subscribed endpoint.
func (s *Shop) PlaceOrder(ctx context.Context, o NewOrder) (PlacedOrder, error) {
	var placed PlacedOrder
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		placed, err = placeOrder(ctx, tx, o)
		return err
	})
	if err != nil {
		return PlacedOrder{}, fmt.Errorf("place order for customer %d: %w", o.CustomerID, err)
	}
	return placed, nil
}

// placeOrder does PlaceOrder's work in tx.
func placeOrder(ctx context.Context, tx pgx.Tx, o NewOrder) (PlacedOrder, error) {
	if len(o.Lines) == 0 {
		return PlacedOrder{}, errors.New("an order needs at least one line")
	}
	var name, email string
	if err := tx.QueryRow(ctx, `SELECT name, email FROM customers WHERE id = $1`, o.CustomerID).Scan(&name, &email); err != nil {
		return PlacedOrder{}, fmt.Errorf("find customer: %w", err)
	}
	var items []jobs.SendOrderConfirmationV1LineItem
	var total int64
	currency := ""
	for _, l := range o.Lines {
		var pname, cur string
		var price int64
		err := tx.QueryRow(ctx, `SELECT name, price_cents, currency FROM products WHERE sku = $1 AND published_at IS NOT NULL`, l.SKU).
			Scan(&pname, &price, &cur)
		if errors.Is(err, pgx.ErrNoRows) {
			return PlacedOrder{}, fmt.Errorf("product %s is not on sale", l.SKU)
		}
		if err != nil {
			return PlacedOrder{}, fmt.Errorf("find product %s: %w", l.SKU, err)
		}
		if currency != "" && cur != currency {
			return PlacedOrder{}, fmt.Errorf("product %s is priced in %s, the order in %s", l.SKU, cur, currency)
		}
		currency = cur
		total += price * l.Quantity
		items = append(items, jobs.SendOrderConfirmationV1LineItem{
			SKU: l.SKU, Name: pname, Quantity: l.Quantity,
			UnitPrice: jobs.SendOrderConfirmationV1Money{AmountCents: price, Currency: jobs.SendOrderConfirmationV1MoneyCurrency(cur)},
		})
	}

	var orderID int64
	var placedAt time.Time
	err := tx.QueryRow(ctx, `
		INSERT INTO orders (customer_id, customer_name, customer_email, billing_address, total_cents, currency)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING id, placed_at`,
		o.CustomerID, name, email, o.BillTo, total, currency).Scan(&orderID, &placedAt)
	if err != nil {
		return PlacedOrder{}, fmt.Errorf("insert order: %w", err)
	}
	for i, it := range items {
		_, err := tx.Exec(ctx, `INSERT INTO order_lines (order_id, line_no, sku, name, quantity, unit_price_cents) VALUES ($1, $2, $3, $4, $5, $6)`,
			orderID, i+1, it.SKU, it.Name, it.Quantity, it.UnitPrice.AmountCents)
		if err != nil {
			return PlacedOrder{}, fmt.Errorf("insert order line %d: %w", i+1, err)
		}
	}

	opts := []runtime.EnqueueOption{runtime.WithMetadata(map[string]any{"request_id": o.RequestID, "order_id": orderID})}
	if o.Express {
		opts = append(opts, runtime.WithPriority(runtime.MostUrgent))
	}
	placed := PlacedOrder{OrderID: orderID, TotalCents: total, Currency: currency}
	confirmation, err := jobs.EnqueueSendOrderConfirmation(ctx, tx, jobs.SendOrderConfirmationV1{
		OrderID:      orderID,
		Email:        email,
		CustomerName: name,
		PlacedAt:     placedAt,
		Items:        items,
		Total:        jobs.SendOrderConfirmationV1Money{AmountCents: total, Currency: jobs.SendOrderConfirmationV1MoneyCurrency(currency)},
	}, opts...)
	if err != nil {
		return PlacedOrder{}, err
	}
	placed.ConfirmationID = confirmation.ID
	placed.WebhookIDs, err = enqueueWebhooks(ctx, tx, jobs.DeliverWebhookV1EventOrderPlaced, placedAt, map[string]any{
		"order_id": orderID, "total_cents": total, "currency": currency, "lines": len(items),
	}, opts...)
	if err != nil {
		return PlacedOrder{}, err
	}

	// Reserve stock last: the product rows are the most contended, so their locks are
	// taken at the end and held for the shortest time. Failing here rolls back the
	// order and the jobs enqueued above with it.
	for _, l := range o.Lines {
		tag, err := tx.Exec(ctx, `UPDATE products SET stock = stock - $2 WHERE sku = $1 AND stock >= $2`, l.SKU, l.Quantity)
		if err != nil {
			return PlacedOrder{}, fmt.Errorf("reserve stock of %s: %w", l.SKU, err)
		}
		if tag.RowsAffected() == 0 {
			return PlacedOrder{}, fmt.Errorf("%w: %d × %s", ErrOutOfStock, l.Quantity, l.SKU)
		}
	}
	return placed, nil
}

// enqueueWebhooks enqueues a delivery of the event to every endpoint subscribed to it.
func enqueueWebhooks(ctx context.Context, tx pgx.Tx, event jobs.DeliverWebhookV1Event, at time.Time, data map[string]any, opts ...runtime.EnqueueOption) ([]int64, error) {
	rows, err := tx.Query(ctx, `SELECT url FROM webhook_endpoints WHERE $1 = ANY(events) ORDER BY id`, string(event))
	if err != nil {
		return nil, fmt.Errorf("find webhook endpoints for %s: %w", event, err)
	}
	urls, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("find webhook endpoints for %s: %w", event, err)
	}
	var ids []int64
	for _, url := range urls {
		id, err := newEventID()
		if err != nil {
			return nil, err
		}
		job, err := jobs.EnqueueDeliverWebhook(ctx, tx, jobs.DeliverWebhookV1{
			EndpointURL: url, EventID: id, Event: event, OccurredAt: at, Data: data,
		}, opts...)
		if err != nil {
			return nil, err
		}
		ids = append(ids, job.ID)
	}
	return ids, nil
}

// newEventID returns a random UUID (version 4), the id merchants deduplicate on.
func newEventID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("new event id: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:]), nil
}

// Payment is the payment provider's payment-succeeded event.
type Payment struct {
	ID          string // pay_...
	EventID     string // the provider's event, for tracing
	OrderID     int64
	AmountCents int64
	Currency    string
	PaidAt      time.Time
	Method      string // card, paypal or bank_transfer
	CardBrand   string // for card payments: visa, mastercard or amex
	CardLast4   string
}

// ReceivePayment is the endpoint the payment provider calls. It only stores the event
// as a payment_confirmed job and answers at once: the provider gets its 200 within
// milliseconds, and the work is retried on our side if it fails. Providers deliver
// events at least once; the job's unique key (payment_id) turns a repeated event
// into a Duplicate of the first job instead of a second one.
func (s *Shop) ReceivePayment(ctx context.Context, p Payment) (runtime.Enqueued, error) {
	payload := jobs.PaymentConfirmedV1{
		PaymentID: p.ID,
		OrderID:   p.OrderID,
		Amount:    jobs.PaymentConfirmedV1Amount{AmountCents: p.AmountCents, Currency: jobs.PaymentConfirmedV1AmountCurrency(p.Currency)},
		PaidAt:    p.PaidAt,
		Method:    jobs.PaymentConfirmedV1Method(p.Method),
	}
	if payload.Method == jobs.PaymentConfirmedV1MethodCard {
		payload.Card = &jobs.PaymentConfirmedV1Card{Brand: jobs.PaymentConfirmedV1CardBrand(p.CardBrand), Last4: p.CardLast4}
	}
	job, err := jobs.EnqueuePaymentConfirmed(ctx, s.pool, payload, runtime.WithMetadata(map[string]any{"request_id": p.EventID}))
	if err != nil {
		return runtime.Enqueued{}, fmt.Errorf("receive payment %s: %w", p.ID, err)
	}
	return job, nil
}

// SchedulePublication puts a product on sale at a given time: the publish_product job
// waits, scheduled, until then.
func (s *Shop) SchedulePublication(ctx context.Context, productID int64, at time.Time, requestedBy string) (int64, error) {
	var jobID int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE products SET publish_at = $2 WHERE id = $1 AND published_at IS NULL`, productID, at)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return errors.New("no unpublished product with this id")
		}
		landing := fmt.Sprintf("https://shop.example/products/%d", productID)
		job, err := jobs.EnqueuePublishProduct(ctx, tx, jobs.PublishProductV1{
			ProductID:   productID,
			PublishAt:   at,
			Channels:    []jobs.PublishProductV1Channel{jobs.PublishProductV1ChannelWeb, jobs.PublishProductV1ChannelApp},
			LandingPage: &landing,
		},
			runtime.RunAt(at),
			runtime.WithPriority(3), // launches matter more than routine catalogue work
			runtime.WithMetadata(map[string]any{"requested_by": requestedBy}),
		)
		jobID = job.ID
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("schedule publication of product %d: %w", productID, err)
	}
	return jobID, nil
}

// maxKeysPerJob is the schema's maxItems for delete_objects keys.
const maxKeysPerJob = 1000

// DeleteCustomer deletes a customer's account. Their orders stay, anonymised by the
// foreign key; their uploaded files are deleted from the blob store by delete_objects
// jobs enqueued in the same transaction, so no file outlives a committed deletion.
func (s *Shop) DeleteCustomer(ctx context.Context, customerID int64) ([]int64, error) {
	var jobIDs []int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `DELETE FROM customer_files WHERE customer_id = $1 RETURNING key`, customerID)
		if err != nil {
			return err
		}
		keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM customers WHERE id = $1`, customerID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return errors.New("no such customer")
		}
		now := time.Now()
		for chunk := range slices.Chunk(keys, maxKeysPerJob) {
			job, err := jobs.EnqueueDeleteObjects(ctx, tx, jobs.DeleteObjectsV1{
				Bucket:      uploadsBucket,
				Keys:        chunk,
				Reason:      jobs.DeleteObjectsV1ReasonAccountDeleted,
				RequestedAt: &now,
				AccountID:   &customerID,
			})
			if err != nil {
				return err
			}
			jobIDs = append(jobIDs, job.ID)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("delete customer %d: %w", customerID, err)
	}
	return jobIDs, nil
}
