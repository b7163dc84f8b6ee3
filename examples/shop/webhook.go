package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/jobc-dev/jobc/examples/shop/internal/jobs"
)

// WebhookSender POSTs events to merchant endpoints, signed with the shop's secret.
type WebhookSender struct {
	client *http.Client
	secret []byte
}

// NewWebhookSender returns a sender that uses client and signs with secret.
func NewWebhookSender(client *http.Client, secret []byte) *WebhookSender {
	return &WebhookSender{client: client, secret: secret}
}

// Webhook is one delivery.
type Webhook struct {
	URL        string
	EventID    string // the merchant deduplicates on it
	Event      string
	OccurredAt time.Time
	Data       map[string]any
	Headers    map[string]string // the merchant's own extra headers
	RequestID  string            // of the request that caused the event, for tracing
}

// StatusError is an endpoint's answer other than 2xx.
type StatusError struct {
	URL        string
	Code       int
	RetryAfter time.Duration // from the Retry-After header; 0 when absent
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s answered %d %s", e.URL, e.Code, http.StatusText(e.Code))
}

// Send delivers the webhook; any answer but 2xx is a *StatusError.
func (s *WebhookSender) Send(ctx context.Context, h Webhook) error {
	body, err := json.Marshal(struct {
		ID        string         `json:"id"`
		Type      string         `json:"type"`
		CreatedAt time.Time      `json:"created_at"`
		Data      map[string]any `json:"data"`
	}{h.EventID, h.Event, h.OccurredAt, h.Data})
	if err != nil {
		return fmt.Errorf("encode %s event: %w", h.Event, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	for k, v := range h.Headers {
		req.Header.Set(k, v)
	}
	mac := hmac.New(sha256.New, s.secret)
	mac.Write(body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "shop-webhooks/1.0")
	req.Header.Set("Idempotency-Key", h.EventID)
	req.Header.Set("X-Shop-Event", h.Event)
	req.Header.Set("X-Shop-Signature", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	if h.RequestID != "" {
		req.Header.Set("X-Request-ID", h.RequestID)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("post %s event: %w", h.Event, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	return &StatusError{URL: h.URL, Code: resp.StatusCode, RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
}

// parseRetryAfter reads a Retry-After header: a number of seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// maxRetryAfter caps how long a merchant's Retry-After may postpone a delivery.
const maxRetryAfter = time.Hour

// classifyDelivery maps the outcome of a delivery to deliver_webhook's error classes:
// a 429 is rate_limited and comes back after the merchant's Retry-After (or the job's
// backoff, without one); a 408 or 425 is transient; any other 4xx is invalid and fails
// the job at once, since the merchant will refuse it every time; everything else (5xx,
// network errors) is left unclassified, which the spec's default_error makes transient.
func classifyDelivery(job jobs.DeliverWebhookJob, err error) error {
	var se *StatusError
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &se):
		return err
	case se.Code == http.StatusTooManyRequests:
		return job.RateLimited(err, min(se.RetryAfter, maxRetryAfter))
	case se.Code == http.StatusRequestTimeout || se.Code == http.StatusTooEarly:
		return job.Transient(err)
	case se.Code >= 400 && se.Code < 500:
		return job.Invalid(err)
	}
	return err
}

// HandleDeliverWebhook delivers one event to one merchant endpoint.
func (h *handlers) HandleDeliverWebhook(ctx context.Context, job jobs.DeliverWebhookJob, p jobs.DeliverWebhook) error {
	err := h.webhooks.Send(ctx, Webhook{
		URL:        p.EndpointURL,
		EventID:    p.EventID,
		Event:      string(p.Event),
		OccurredAt: p.OccurredAt,
		Data:       p.Data,
		Headers:    p.Headers,
		RequestID:  metadataOf(job.Job).RequestID,
	})
	return classifyDelivery(job, err)
}
