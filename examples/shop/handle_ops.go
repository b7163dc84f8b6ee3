package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jobc-dev/jobc/examples/shop/internal/jobs"
	"github.com/jobc-dev/jobc/runtime"
)

// HandlePublishProduct puts a product on sale. The job was enqueued with
// runtime.RunAt(publish_at), so it runs at that time, not before.
func (h *handlers) HandlePublishProduct(ctx context.Context, job jobs.PublishProductJob, p jobs.PublishProduct) error {
	channels := make([]string, len(p.Channels))
	for i, c := range p.Channels {
		channels[i] = string(c)
	}
	tag, err := h.pool.Exec(ctx, `UPDATE products SET published_at = now(), channels = $2 WHERE id = $1 AND published_at IS NULL`, p.ProductID, channels)
	if err != nil {
		return fmt.Errorf("publish product %d: %w", p.ProductID, err)
	}
	if tag.RowsAffected() == 0 {
		var exists bool
		if err := h.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM products WHERE id = $1)`, p.ProductID).Scan(&exists); err != nil {
			return fmt.Errorf("publish product %d: %w", p.ProductID, err)
		}
		if !exists {
			return job.Invalid(fmt.Errorf("product %d does not exist", p.ProductID))
		}
		return nil // published already: by an earlier attempt, or by hand
	}
	job.Logger().Info("product published", "product_id", p.ProductID, "channels", channels,
		"late_by", time.Since(p.PublishAt).Round(time.Millisecond), "requested_by", metadataOf(job.Job).RequestedBy)
	return nil
}

// HandleSyncInventory drains the rows of a deprecated job type: the warehouse pushes
// stock levels now, so there is nothing left to pull. Nothing enqueues it any more
// (EnqueueSyncInventory is marked deprecated); the handler stays until no rows remain.
func (h *handlers) HandleSyncInventory(ctx context.Context, job jobs.SyncInventoryJob, p jobs.SyncInventory) error {
	job.Logger().Info("skipping deprecated inventory sync", "skus", len(p.SKUs))
	return nil
}

// HandlePurgeExpiredCarts deletes carts untouched for p.OlderThanHours, in batches of
// p.BatchSize, each its own short transaction. Both fields have defaults in the spec,
// which is what lets the schedule enqueue it with an empty payload.
func (h *handlers) HandlePurgeExpiredCarts(ctx context.Context, job jobs.PurgeExpiredCartsJob, p jobs.PurgeExpiredCarts) error {
	var total int64
	for {
		tag, err := h.pool.Exec(ctx, `
			DELETE FROM carts WHERE id IN (
				SELECT id FROM carts WHERE updated_at < now() - make_interval(hours => $1)
				LIMIT $2 FOR UPDATE SKIP LOCKED)`, p.OlderThanHours, p.BatchSize)
		if err != nil {
			return fmt.Errorf("purge expired carts after %d deleted: %w", total, err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < p.BatchSize {
			break
		}
	}
	job.Logger().Info("expired carts purged", "carts", total, "older_than_hours", p.OlderThanHours)
	return nil
}

// HandleDeleteObjects deletes blob store objects. Deleting a missing object succeeds,
// so running twice is harmless.
func (h *handlers) HandleDeleteObjects(ctx context.Context, job jobs.DeleteObjectsJob, p jobs.DeleteObjects) error {
	err := h.blobs.Delete(ctx, p.Bucket, p.Keys)
	var throttled *ThrottledError
	switch {
	case err == nil:
		job.Logger().Info("objects deleted", "bucket", p.Bucket, "keys", len(p.Keys), "reason", p.Reason)
		return nil
	case errors.As(err, &throttled):
		return job.RateLimited(err, throttled.RetryAfter)
	case errors.Is(err, ErrUnavailable):
		return job.Unavailable(err)
	}
	return fmt.Errorf("delete %d objects from %s: %w", len(p.Keys), p.Bucket, err)
}

// HandleDailySalesReport totals a day's orders per currency, stores the report and
// emails its location to the recipients.
func (h *handlers) HandleDailySalesReport(ctx context.Context, job jobs.DailySalesReportJob, p jobs.DailySalesReport) error {
	day := runtime.DateOf(time.Now().In(h.reportZone).AddDate(0, 0, -1))
	if p.Day != nil {
		day = *p.Day
	}
	from := day.In(h.reportZone)
	rows, err := h.pool.Query(ctx, `
		SELECT currency, count(*), sum(total_cents)::bigint FROM orders
		WHERE status IN ('placed', 'paid') AND placed_at >= $1 AND placed_at < $2
		GROUP BY currency ORDER BY currency`, from, from.AddDate(0, 0, 1))
	if err != nil {
		return fmt.Errorf("sales of %s: %w", day, err)
	}
	type line struct {
		currency       string
		orders, amount int64
	}
	var lines []line
	for rows.Next() {
		var l line
		if err := rows.Scan(&l.currency, &l.orders, &l.amount); err != nil {
			rows.Close()
			return fmt.Errorf("sales of %s: %w", day, err)
		}
		lines = append(lines, l)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sales of %s: %w", day, err)
	}

	var b strings.Builder
	contentType := "text/csv"
	switch p.Format {
	case jobs.DailySalesReportV1FormatHTML:
		contentType = "text/html"
		fmt.Fprintf(&b, "<table><tr><th>currency</th><th>orders</th><th>revenue</th></tr>\n")
		for _, l := range lines {
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%d</td><td>%s</td></tr>\n", l.currency, l.orders, money(l.amount, l.currency))
		}
		b.WriteString("</table>\n")
	default:
		b.WriteString("currency,orders,revenue_cents\n")
		for _, l := range lines {
			fmt.Fprintf(&b, "%s,%d,%d\n", l.currency, l.orders, l.amount)
		}
	}
	key := fmt.Sprintf("daily-sales/%s.%s", day, p.Format)
	if err := h.blobs.Put(ctx, reportsBucket, key, []byte(b.String()), contentType); err != nil {
		return fmt.Errorf("store sales report of %s: %w", day, err)
	}
	err = h.mailer.Send(ctx, Message{
		IdempotencyKey: job.IdempotencyKey(),
		To:             p.Recipients,
		Subject:        fmt.Sprintf("Sales report for %s", day),
		Body:           fmt.Sprintf("The report is at %s/%s.\n", reportsBucket, key),
	})
	if err != nil {
		return fmt.Errorf("email sales report of %s: %w", day, err)
	}
	return nil
}
