package main

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The external services the shop's jobs talk to. In production these are an email API,
// an S3-compatible object store and a PDF rendering service; the demo and the tests
// use the in-memory fakes of fakes.go.

// Message is one email.
type Message struct {
	// IdempotencyKey lets the email API drop a message it already accepted: a job that
	// runs twice (delivery is at least once) sends it once.
	IdempotencyKey string
	To             []string
	Subject        string
	Body           string
}

// Mailer sends email.
type Mailer interface {
	Send(ctx context.Context, m Message) error
}

// BlobStore stores objects in buckets, S3-style.
type BlobStore interface {
	Put(ctx context.Context, bucket, key string, data []byte, contentType string) error
	// Delete removes the objects; keys that do not exist are not an error.
	Delete(ctx context.Context, bucket string, keys []string) error
}

// PDFRenderer turns a document into PDF bytes.
type PDFRenderer interface {
	Render(ctx context.Context, doc Document) ([]byte, error)
}

// Document is what the PDF renderer lays out: a title, a header block and a table.
type Document struct {
	Title  string
	Header []string
	Rows   [][]string
	Footer string
}

// Errors of the services, which handlers map to the jobs' error classes.
var (
	// ErrUnavailable: the service is down for maintenance.
	ErrUnavailable = errors.New("service unavailable")
	// ErrRejected: the service will never accept this request (a bounced address, a
	// malformed document).
	ErrRejected = errors.New("request rejected")
)

// ThrottledError says a service refused a request because of its rate limit, and when
// to try again.
type ThrottledError struct {
	Service    string
	RetryAfter time.Duration
}

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("%s: rate limited, retry after %s", e.Service, e.RetryAfter)
}
