package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// In-memory stand-ins for the shop's external services, for the demo and the tests.
// Each records what it was asked to do, and can be scripted to fail.

// faults is a queue of errors a fake returns from its next calls, one per call.
type faults struct {
	mu   sync.Mutex
	errs []error
}

// add makes the next len(errs) calls fail with errs, in order.
func (f *faults) add(errs ...error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, errs...)
}

func (f *faults) next() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.errs) == 0 {
		return nil
	}
	err := f.errs[0]
	f.errs = f.errs[1:]
	return err
}

// fakeMailer accepts messages and, like real email APIs, drops a message whose
// idempotency key it has seen before.
type fakeMailer struct {
	failures faults
	mu       sync.Mutex
	sent     []Message
	seen     map[string]bool
}

func newFakeMailer() *fakeMailer { return &fakeMailer{seen: map[string]bool{}} }

func (m *fakeMailer) Send(ctx context.Context, msg Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := m.failures.next(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen[msg.IdempotencyKey] {
		return nil
	}
	m.seen[msg.IdempotencyKey] = true
	m.sent = append(m.sent, msg)
	return nil
}

// Sent returns the accepted messages, oldest first.
func (m *fakeMailer) Sent() []Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.sent)
}

// fakeBlobStore keeps objects in memory.
type fakeBlobStore struct {
	failures faults
	mu       sync.Mutex
	objects  map[string][]byte // by bucket + "/" + key
}

func newFakeBlobStore() *fakeBlobStore { return &fakeBlobStore{objects: map[string][]byte{}} }

func (s *fakeBlobStore) Put(ctx context.Context, bucket, key string, data []byte, contentType string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.failures.next(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects[bucket+"/"+key] = bytes.Clone(data)
	return nil
}

func (s *fakeBlobStore) Delete(ctx context.Context, bucket string, keys []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.failures.next(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		delete(s.objects, bucket+"/"+k)
	}
	return nil
}

// Get returns an object's bytes.
func (s *fakeBlobStore) Get(bucket, key string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.objects[bucket+"/"+key]
	return b, ok
}

// Keys lists the keys of a bucket, sorted.
func (s *fakeBlobStore) Keys(bucket string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var keys []string
	for k := range s.objects {
		if rest, ok := strings.CutPrefix(k, bucket+"/"); ok {
			keys = append(keys, rest)
		}
	}
	slices.Sort(keys)
	return keys
}

// fakePDF "renders" a document as text wrapped in PDF markers.
type fakePDF struct{ failures faults }

func (r *fakePDF) Render(ctx context.Context, doc Document) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := r.failures.next(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%%PDF-1.7\n%s\n", doc.Title)
	for _, h := range doc.Header {
		fmt.Fprintln(&b, h)
	}
	for _, row := range doc.Rows {
		fmt.Fprintln(&b, strings.Join(row, " | "))
	}
	fmt.Fprintf(&b, "%s\n%%%%EOF\n", doc.Footer)
	return b.Bytes(), nil
}

// merchantResponse is what a fake merchant endpoint answers to one request.
type merchantResponse struct {
	Status     int
	RetryAfter string // the Retry-After header, if any
}

// receivedWebhook is a request a fake merchant got.
type receivedWebhook struct {
	Path           string
	Event          string
	IdempotencyKey string
	RequestID      string
	SignatureOK    bool
	Body           []byte
	Status         int // what the merchant answered
}

// fakeMerchant is a merchant's webhook endpoint, served with httptest. It answers the
// scripted responses in order, then otherwise.
type fakeMerchant struct {
	secret    []byte
	otherwise int
	mu        sync.Mutex
	script    []merchantResponse
	received  []receivedWebhook
}

func newFakeMerchant(secret []byte, otherwise int) *fakeMerchant {
	return &fakeMerchant{secret: secret, otherwise: otherwise}
}

// respond scripts the answers to the next requests.
func (m *fakeMerchant) respond(rs ...merchantResponse) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.script = append(m.script, rs...)
}

func (m *fakeMerchant) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	mac := hmac.New(sha256.New, m.secret)
	mac.Write(body)
	want := "sha256=" + hex.EncodeToString(mac.Sum(nil))

	m.mu.Lock()
	resp := merchantResponse{Status: m.otherwise}
	if len(m.script) > 0 {
		resp, m.script = m.script[0], m.script[1:]
	}
	m.received = append(m.received, receivedWebhook{
		Path:           r.URL.Path,
		Event:          r.Header.Get("X-Shop-Event"),
		IdempotencyKey: r.Header.Get("Idempotency-Key"),
		RequestID:      r.Header.Get("X-Request-ID"),
		SignatureOK:    hmac.Equal([]byte(r.Header.Get("X-Shop-Signature")), []byte(want)),
		Body:           body,
		Status:         resp.Status,
	})
	m.mu.Unlock()

	if resp.RetryAfter != "" {
		w.Header().Set("Retry-After", resp.RetryAfter)
	}
	w.WriteHeader(resp.Status)
}

// Received returns the requests so far, oldest first.
func (m *fakeMerchant) Received() []receivedWebhook {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.received)
}
