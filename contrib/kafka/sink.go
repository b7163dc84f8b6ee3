// Package jobckafka is the relay's sink for Kafka (franz-go): it produces each event to
// the topic named by its subject, with its ordering key as the record key, so that a
// key's events share a partition and keep their order there, and the relay's headers
// as record headers. The client is franz-go's idempotent producer (acks from all
// in-sync replicas, sequence numbers per partition), so the client's own retries
// neither duplicate nor reorder a record; the relay's retries after a lost
// acknowledgement can still duplicate one, and consumers deduplicate by the
// Jobc-Event-Id header. A record the broker refuses for good (too large, invalid) is
// poison and fails its event; any other error is retried.
package jobckafka

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/jobc-dev/jobc/runtime/relay"
)

// Sink produces events to Kafka. It is safe for concurrent use.
type Sink struct {
	client *kgo.Client
	own    bool
}

var _ relay.Sink = (*Sink)(nil)

// Connect returns a sink on a new client of the given seed brokers (host:port), with
// franz-go's defaults (idempotent writes, acks from all in-sync replicas) and opts
// appended; Close closes the client.
func Connect(seeds []string, opts ...kgo.Opt) (*Sink, error) {
	client, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.ClientID("jobc-relay")}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("jobckafka: %w", err)
	}
	return &Sink{client: client, own: true}, nil
}

// New returns a sink on client, which the caller keeps and closes. Keep the client's
// idempotent writes on (the default), or a key's records may be reordered by retries.
func New(client *kgo.Client) *Sink { return &Sink{client: client} }

// Publish produces msgs and waits for every acknowledgement (see relay.Sink).
func (s *Sink) Publish(ctx context.Context, msgs []relay.Message) []error {
	records := make([]*kgo.Record, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		r := &kgo.Record{Topic: m.Subject, Value: m.Payload, Timestamp: m.CreatedAt}
		if m.OrderingKey != "" {
			r.Key = []byte(m.OrderingKey)
		}
		for _, h := range m.Headers() {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: h[0], Value: []byte(h[1])})
		}
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: "Content-Type", Value: []byte(relay.ContentType)})
		records[i] = r
	}
	index := make(map[*kgo.Record]int, len(records))
	for i, r := range records {
		index[r] = i
	}
	var errs []error
	// ProduceSync returns the results in the order the acknowledgements came.
	for _, res := range s.client.ProduceSync(ctx, records...) {
		if res.Err == nil {
			continue
		}
		i := index[res.Record]
		if errs == nil {
			errs = make([]error, len(msgs))
		}
		err := fmt.Errorf("jobckafka: event %d (%d bytes) to topic %s: %w", msgs[i].ID, len(msgs[i].Payload), msgs[i].Subject, res.Err)
		if permanent(res.Err) {
			err = relay.Poison(err)
		}
		errs[i] = err
	}
	return errs
}

// permanent reports whether Kafka will refuse the record however often it is sent.
func permanent(err error) bool {
	for _, p := range []error{kerr.MessageTooLarge, kerr.RecordListTooLarge, kerr.InvalidRecord, kerr.CorruptMessage, kerr.InvalidTopicException} {
		if errors.Is(err, p) {
			return true
		}
	}
	return false
}

// Close closes the client Connect made; after New, it does nothing.
func (s *Sink) Close() error {
	if s.own {
		s.client.Close()
	}
	return nil
}
