package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/examples/shop/internal/jobs"
	"github.com/jobc-dev/jobc/runtime"
)

// handlers implements jobs.Handlers: one method per job type of jobc.yaml. The worker
// does not compile until every job type has one.
type handlers struct {
	pool     *pgxpool.Pool
	mailer   Mailer
	blobs    BlobStore
	pdf      PDFRenderer
	webhooks *WebhookSender
	// reportZone is the time zone of daily_sales_report's schedule: "yesterday" is
	// yesterday there.
	reportZone *time.Location
}

var _ jobs.Handlers = (*handlers)(nil)

// services are the external dependencies of the handlers.
type services struct {
	Mailer   Mailer
	Blobs    BlobStore
	PDF      PDFRenderer
	Webhooks *WebhookSender
}

func newHandlers(pool *pgxpool.Pool, s services) (*handlers, error) {
	zone, err := scheduleZone(jobs.KindDailySalesReport)
	if err != nil {
		return nil, err
	}
	return &handlers{pool: pool, mailer: s.Mailer, blobs: s.Blobs, pdf: s.PDF, webhooks: s.Webhooks, reportZone: zone}, nil
}

// scheduleZone returns the time zone of a job type's schedule, as jobc.yaml declares
// it, so that the spec stays the only place that says it.
func scheduleZone(kind string) (*time.Location, error) {
	for _, jt := range jobs.JobTypes() {
		if jt.Kind != kind {
			continue
		}
		if jt.Schedule == nil {
			return nil, fmt.Errorf("job type %s has no schedule", kind)
		}
		loc, err := time.LoadLocation(jt.Schedule.Timezone)
		if err != nil {
			return nil, fmt.Errorf("job type %s: %w", kind, err)
		}
		return loc, nil
	}
	return nil, errors.New("no job type " + kind)
}

// jobMetadata is what the shop attaches to jobs with runtime.WithMetadata.
type jobMetadata struct {
	RequestID   string `json:"request_id"`
	OrderID     int64  `json:"order_id"`
	RequestedBy string `json:"requested_by"`
}

// metadataOf decodes a job's metadata; a job enqueued without any has none.
func metadataOf(j *runtime.Job) jobMetadata {
	var m jobMetadata
	if err := json.Unmarshal(j.Metadata, &m); err != nil {
		j.Logger().Warn("undecodable job metadata", "err", err)
	}
	return m
}
