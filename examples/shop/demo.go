package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	jobcprom "github.com/jobc-dev/jobc/contrib/prometheus"
	"github.com/jobc-dev/jobc/examples/shop/internal/jobs"
	"github.com/jobc-dev/jobc/runtime"
)

// demo holds the demo's database, fakes and output.
type demo struct {
	out      io.Writer
	log      *slog.Logger
	pool     *pgxpool.Pool
	shop     *Shop
	mailer   *fakeMailer
	blobs    *fakeBlobStore
	merchant *fakeMerchant // subscribed to order.placed and order.paid
	legacy   *fakeMerchant // an endpoint the merchant decommissioned: 410 Gone
	servers  []*httptest.Server
	handlers *handlers
	seed     seeded
	step     int
}

// webhookSecret signs the demo's webhooks.
const webhookSecret = "demo-webhook-secret"

func newDemo(ctx context.Context, url string, out io.Writer, log *slog.Logger) (*demo, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	d := &demo{
		out:      out,
		log:      log,
		pool:     pool,
		shop:     NewShop(pool),
		mailer:   newFakeMailer(),
		blobs:    newFakeBlobStore(),
		merchant: newFakeMerchant([]byte(webhookSecret), http.StatusOK),
		legacy:   newFakeMerchant([]byte(webhookSecret), http.StatusGone),
	}
	merchantSrv, legacySrv := httptest.NewServer(d.merchant), httptest.NewServer(d.legacy)
	d.servers = []*httptest.Server{merchantSrv, legacySrv}
	d.handlers, err = newHandlers(pool, services{
		Mailer:   d.mailer,
		Blobs:    d.blobs,
		PDF:      &fakePDF{},
		Webhooks: NewWebhookSender(&http.Client{Timeout: 10 * time.Second}, []byte(webhookSecret)),
	})
	if err != nil {
		d.close()
		return nil, err
	}
	err = d.setup(ctx,
		endpoint{URL: merchantSrv.URL + "/hooks/shop", Events: []string{"order.placed", "order.paid"}},
		endpoint{URL: legacySrv.URL + "/v1/orders", Events: []string{"order.placed"}})
	if err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

func (d *demo) close() {
	for _, s := range d.servers {
		s.Close()
	}
	d.pool.Close()
}

func (d *demo) say(format string, args ...any) {
	d.step++
	fmt.Fprintf(d.out, "%d. "+format+"\n", append([]any{d.step}, args...)...)
}

// setup migrates and seeds an empty database.
func (d *demo) setup(ctx context.Context, endpoints ...endpoint) error {
	if err := migrate(ctx, d.pool); err != nil {
		return err
	}
	var used bool
	err := d.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM orders) OR EXISTS (SELECT 1 FROM customers)`).Scan(&used)
	if err != nil {
		return fmt.Errorf("check the database is empty: %w", err)
	}
	if used {
		return errors.New("the demo needs an empty database, and this one already has customers or orders")
	}
	d.seed, err = seed(ctx, d.pool, d.blobs, endpoints...)
	if err != nil {
		return err
	}
	d.say("migrated the jobc tables and the shop's, and seeded 2 customers, 3 products and 2 webhook endpoints")
	return nil
}

func (d *demo) run(ctx context.Context) error {
	s := d.seed
	// The merchant is busy: it throttles the first delivery.
	d.merchant.respond(merchantResponse{Status: http.StatusTooManyRequests, RetryAfter: "1"})

	placed, err := d.shop.PlaceOrder(ctx, NewOrder{
		CustomerID: s.ada,
		Lines:      []OrderLine{{SKU: "MUG-001", Quantity: 2}, {SKU: "TEE-042", Quantity: 1}},
		BillTo:     Address{Line1: "12 St James's Square", City: "London", PostalCode: "SW1Y 4JH", CountryCode: "GB"},
		RequestID:  "req-7f3a",
	})
	if err != nil {
		return err
	}
	d.say("order %d placed: its confirmation email (job %d) and order.placed webhooks (jobs %s) were enqueued in the same transaction",
		placed.OrderID, placed.ConfirmationID, joinIDs(placed.WebhookIDs))

	_, err = d.shop.PlaceOrder(ctx, NewOrder{
		CustomerID: s.grace,
		Lines:      []OrderLine{{SKU: "TEE-042", Quantity: 3}},
		BillTo:     Address{Line1: "1 Navy Yard", City: "Arlington", PostalCode: "22202", CountryCode: "US"},
		Express:    true,
		RequestID:  "req-80c1",
	})
	if !errors.Is(err, ErrOutOfStock) {
		return fmt.Errorf("the second order should run out of stock, got: %w", err)
	}
	var orders, queued int
	if err := d.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM orders), (SELECT count(*) FROM jobc_jobs)`).Scan(&orders, &queued); err != nil {
		return err
	}
	d.say("a second checkout failed after enqueueing its jobs (%v): it rolled back, leaving %d order and %d jobs", err, orders, queued)

	payment := Payment{
		ID: "pay_3MtwBwLkdIwHu7ix", EventID: "evt_1PqR8s", OrderID: placed.OrderID, AmountCents: placed.TotalCents, Currency: placed.Currency,
		PaidAt: time.Now(), Method: "card", CardBrand: "visa", CardLast4: "4242",
	}
	first, err := d.shop.ReceivePayment(ctx, payment)
	if err != nil {
		return err
	}
	again, err := d.shop.ReceivePayment(ctx, payment) // providers deliver at least once
	if err != nil {
		return err
	}
	d.say("payment %s for order %d received twice: stored as payment_confirmed job %d; the repeat is job %d again (duplicate: %t)",
		payment.ID, placed.OrderID, first.ID, again.ID, again.Duplicate)

	launch := time.Now().Add(time.Second)
	publishJob, err := d.shop.SchedulePublication(ctx, s.book, launch, "lin@shop.example")
	if err != nil {
		return err
	}
	d.say("product BOOK-1843 goes on sale in 1s: publish_product job %d waits, scheduled, until then", publishJob)

	deleteJobs, err := d.shop.DeleteCustomer(ctx, s.grace)
	if err != nil {
		return err
	}
	d.say("customer %d deleted her account: the deletion of her files is job %s", s.grace, joinIDs(deleteJobs))

	today := runtime.DateOf(time.Now().In(d.handlers.reportZone))
	report, err := jobs.EnqueueDailySalesReport(ctx, d.pool, jobs.DailySalesReportV1{
		Day: &today, Format: jobs.DailySalesReportV1FormatCSV, Recipients: []string{"sales@shop.example"},
	})
	if err != nil {
		return err
	}
	purge, err := jobs.EnqueuePurgeExpiredCarts(ctx, d.pool, jobs.PurgeExpiredCartsV1{OlderThanHours: 72, BatchSize: 500})
	if err != nil {
		return err
	}
	d.say("an operator ran two scheduled jobs now: daily_sales_report (job %d) and purge_expired_carts (job %d)", report.ID, purge.ID)

	if err := d.work(ctx); err != nil {
		return err
	}
	return d.report(ctx)
}

// demoQueues is how many jobs of each queue the demo's worker runs at once.
func demoQueues() map[string]runtime.QueueConfig {
	return map[string]runtime.QueueConfig{
		"payments": {MaxWorkers: 4}, "email": {MaxWorkers: 8}, "webhooks": {MaxWorkers: 8},
		"documents": {MaxWorkers: 2}, "catalog": {MaxWorkers: 2}, "reports": {MaxWorkers: 1},
		"maintenance": {MaxWorkers: 1}, "default": {MaxWorkers: 1}, "loyalty": {MaxWorkers: 1},
	}
}

// work runs a worker until no job is left to do soon.
func (d *demo) work(ctx context.Context) error {
	// The worker's metrics and readiness, as a deployment would expose them to
	// Prometheus and to its orchestrator's probes.
	metrics := jobcprom.NewWorkerCollector(jobcprom.WorkerOptions{})
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics)
	w := runtime.NewWorker(d.pool, runtime.Config{
		Logger:            d.log,
		Queues:            demoQueues(),
		PollInterval:      200 * time.Millisecond,
		SchedulerInterval: 100 * time.Millisecond,
		Hooks:             []runtime.Hook{metrics},
	})
	if err := jobs.Register(w, d.handlers); err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle("/readyz", w.HealthHandler())
	ops := httptest.NewServer(mux)
	defer ops.Close()
	workCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- w.Run(workCtx) }()
	queues := slices.Sorted(maps.Keys(demoQueues()))
	d.say("started a worker on queues %s", strings.Join(queues, ", "))

	err := waitIdle(ctx, d.pool, 30*time.Second, done)
	if err == nil {
		d.reportOps(ctx, ops.URL)
	}
	stop()
	if werr := <-done; werr != nil && err == nil {
		err = fmt.Errorf("worker: %w", werr)
	}
	return err
}

// waitIdle polls until no job is available, running, or scheduled within the next
// few seconds, or the worker stops.
func waitIdle(ctx context.Context, pool *pgxpool.Pool, timeout time.Duration, worker <-chan error) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		var busy int
		err := pool.QueryRow(ctx, `SELECT count(*) FROM jobc_jobs
			WHERE state IN ('available', 'running') OR (state = 'scheduled' AND available_at < now() + interval '5 seconds')`).Scan(&busy)
		if err != nil {
			return fmt.Errorf("count unfinished jobs: %w", err)
		}
		if busy == 0 {
			return nil
		}
		select {
		case <-tick.C:
		case err := <-worker:
			return fmt.Errorf("the worker stopped early: %w", err)
		case <-deadline.C:
			return fmt.Errorf("%d jobs still unfinished after %s", busy, timeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// report prints every job's outcome and what the fake services saw.
func (d *demo) report(ctx context.Context) error {
	rows, err := d.pool.Query(ctx, `SELECT id FROM jobc_jobs UNION ALL SELECT id FROM jobc_jobs_finished ORDER BY id`)
	if err != nil {
		return fmt.Errorf("list jobs: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list jobs: %w", err)
	}
	d.say("the worker is idle; the jobs:")
	for _, id := range ids {
		j, err := runtime.GetJob(ctx, d.pool, id)
		if err != nil {
			return err
		}
		fmt.Fprintf(d.out, "   job %2d  %-23s %-9s after %d attempt(s)\n", j.ID, j.Kind, j.State, j.Attempt)
		for _, e := range j.Errors {
			fmt.Fprintf(d.out, "           attempt %d: %s: %s\n", e.Attempt, e.Class, e.Error)
		}
	}

	d.say("what the outside world saw:")
	for _, m := range d.mailer.Sent() {
		fmt.Fprintf(d.out, "   email to %s: %q\n", strings.Join(m.To, ", "), m.Subject)
	}
	for _, m := range []struct {
		name string
		f    *fakeMerchant
	}{{"merchant", d.merchant}, {"legacy endpoint", d.legacy}} {
		for _, r := range m.f.Received() {
			fmt.Fprintf(d.out, "   %s got %s (request %s, signed: %t) and answered %d\n", m.name, r.Event, r.RequestID, r.SignatureOK, r.Status)
		}
	}
	for _, bucket := range []string{invoicesBucket, reportsBucket} {
		for _, k := range d.blobs.Keys(bucket) {
			b, _ := d.blobs.Get(bucket, k)
			fmt.Fprintf(d.out, "   blob store holds %s/%s (%d bytes)\n", bucket, k, len(b))
		}
	}
	fmt.Fprintf(d.out, "   blob store holds %d of the deleted customer's uploads\n", len(d.blobs.Keys(uploadsBucket)))

	var status string
	var published bool
	var carts int
	err = d.pool.QueryRow(ctx, `SELECT (SELECT status FROM orders ORDER BY id LIMIT 1),
		(SELECT published_at IS NOT NULL FROM products WHERE sku = 'BOOK-1843'), (SELECT count(*) FROM carts)`).Scan(&status, &published, &carts)
	if err != nil {
		return fmt.Errorf("read the shop's state: %w", err)
	}
	fmt.Fprintf(d.out, "   the order is %s, BOOK-1843 is on sale: %t, carts left: %d of 3\n", status, published, carts)
	return nil
}

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ", ")
}
