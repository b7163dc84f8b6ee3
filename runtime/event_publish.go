package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// Published is the outcome of publishing one event.
type Published struct {
	// ID is the event's outbox row, the id a relay sends as Jobc-Event-Id; 0 when the
	// event is not relayed.
	ID int64
	// Jobs holds the subscriber jobs, in the order of EventType.Subscribers.
	Jobs []Enqueued
}

// PublishOption adjusts one publish.
type PublishOption func(*publishOptions)

type publishOptions struct {
	metadata map[string]any
	meta     []byte // metadata encoded; nil for none
	enqueue  []EnqueueOption
}

// WithEventMetadata attaches key/value pairs to the event: the outbox row keeps them
// (a relay may pass them on as headers), and every subscriber job gets them as its
// metadata (Job.Metadata).
func WithEventMetadata(kv map[string]any) PublishOption {
	return func(o *publishOptions) {
		if o.metadata == nil {
			o.metadata = make(map[string]any, len(kv))
		}
		for k, v := range kv {
			o.metadata[k] = v
		}
	}
}

// WithSubscriberOptions applies enqueue options (RunAfter, WithHooks, ...) to every
// subscriber job of the publish.
func WithSubscriberOptions(opts ...EnqueueOption) PublishOption {
	return func(o *publishOptions) { o.enqueue = append(o.enqueue, opts...) }
}

func (et *EventType) options(opts []PublishOption) (publishOptions, error) {
	var o publishOptions
	for _, opt := range opts {
		opt(&o)
	}
	if len(o.metadata) > 0 {
		var err error
		if o.meta, err = encodeMetadata(et.Name, o.metadata); err != nil {
			return o, fmt.Errorf("jobc: publish %s: %w", et.Name, err)
		}
		// Subscriber jobs get the event's metadata first; their own options may add.
		o.enqueue = append([]EnqueueOption{WithMetadata(o.metadata)}, o.enqueue...)
	}
	return o, nil
}

// Publish validates payload against the event's write version and, through dbtx, writes
// the event: one job per subscriber and, when the event is relayed, its outbox row. All
// of it is written in one transaction: dbtx's when it is a pgx.Tx (the transaction of
// the business change, so the event exists if and only if that change commits), or one
// Publish begins and commits when dbtx is a pool or a connection. The payload is
// encoded and validated once; a subscriber typed as the event stores those bytes, a
// mapped one its own payload, validated against its job's schema. An invalid payload
// returns a *PayloadError and writes nothing.
//
// An event with an ordering key marks its transaction as a publisher of that key
// until it ends (a shared advisory lock, see queries/events.sql). Publishers never
// wait for each other, whatever keys and order a transaction publishes in; a relay
// sends a key's events in id order, the order of their publishes, and only once no
// transaction that published the key is open. So a long transaction holds back the
// delivery of its keys' events, not other publishers.
func Publish(ctx context.Context, dbtx DBTX, et *EventType, payload any, opts ...PublishOption) (Published, error) {
	out, err := PublishMany(ctx, dbtx, et, []any{payload}, opts...)
	if err != nil {
		return Published{}, err
	}
	return out[0], nil
}

// PublishMany is Publish for a batch: every payload is validated first, then the
// outbox rows go in with one statement and each subscriber's jobs with one more (one
// insert each for unique jobs), in one transaction. If any payload is invalid, it returns a
// *PayloadError for the first, naming its index, and writes nothing. The options apply
// to every event. The events of one key take ids in the order of payloads.
func PublishMany[T any](ctx context.Context, dbtx DBTX, et *EventType, payloads []T, opts ...PublishOption) ([]Published, error) {
	if len(payloads) == 0 {
		return nil, nil
	}
	o, err := et.options(opts)
	if err != nil {
		return nil, err
	}
	b := eventBatch{raws: make([]json.RawMessage, len(payloads)), keys: make([]*string, len(payloads)), withDoc: et.needsDoc()}
	b.subs = make([]subscriberBatch, len(et.Subscribers))
	for j, s := range et.Subscribers {
		jo, err := s.Job.options(o.enqueue)
		if err != nil {
			return nil, fmt.Errorf("jobc: publish %s: subscriber %s: %w", et.Name, s.Job.Kind, err)
		}
		jo.version = s.Version
		b.subs[j] = subscriberBatch{opts: jo, raws: make([]json.RawMessage, len(payloads))}
		if jo.dedupKey != nil || s.Job.Unique != nil {
			b.subs[j].docs = make([]any, len(payloads)) // for their unique keys
		}
	}
	for i := range payloads {
		if err := b.add(et, i, payloads[i]); err != nil {
			if len(payloads) == 1 {
				return nil, fmt.Errorf("jobc: publish %s: %w", et.Name, err)
			}
			return nil, fmt.Errorf("jobc: publish %s: payload %d: %w", et.Name, i, err)
		}
	}
	var out []Published
	err = inTx(ctx, dbtx, func(tx DBTX) error {
		var err error
		out, err = et.write(ctx, db.New(tx), &b, o)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// eventBatch holds the encoded payloads of a publish and, per subscriber, its jobs'.
type eventBatch struct {
	raws    []json.RawMessage
	keys    []*string
	subs    []subscriberBatch
	withDoc bool // the payloads are decoded too (see EventType.needsDoc)
}

type subscriberBatch struct {
	opts enqueueOptions
	raws []json.RawMessage
	docs []any // nil unless the job is unique or deduplicated
}

// add encodes and validates payload i, takes its ordering key, and builds the payload
// of each subscriber's job.
func (b *eventBatch) add(et *EventType, i int, payload any) error {
	raw, doc, err := et.contract.marshalPayload(et.WriteVersion, payload, b.withDoc)
	if err != nil {
		return err
	}
	if b.keys[i], err = et.orderingKey(doc); err != nil {
		return err
	}
	b.raws[i] = raw
	for j := range et.Subscribers {
		s := &et.Subscribers[j]
		jraw, jdoc, err := s.payload(raw, doc)
		if err != nil {
			return fmt.Errorf("subscriber %s: %w", s.Job.Kind, err)
		}
		b.subs[j].raws[i] = jraw
		if b.subs[j].docs != nil {
			b.subs[j].docs[i] = jdoc
		}
	}
	return nil
}

// payload builds the subscriber's job payload from the event's, encoded as raw and
// decoded as doc.
func (s *Subscriber) payload(raw []byte, doc any) ([]byte, any, error) {
	switch {
	case s.same:
		return raw, doc, nil // validated as the event's: one schema
	case s.Map == nil:
		return s.Job.marshalPayload(s.Version, doc, s.Job.Unique != nil)
	}
	obj, _ := doc.(map[string]any)
	mapped := make(map[string]any, len(s.Map))
	for from, to := range s.Map {
		if v, ok := obj[from]; ok {
			mapped[to] = v
		}
	}
	return s.Job.marshalPayload(s.Version, mapped, s.Job.Unique != nil)
}

// needsDoc says whether publishing needs the event's payloads decoded, not only
// validated: for their ordering keys, for the subscribers whose payloads are built from
// them, and for the unique keys of the subscribers typed as the event.
func (et *EventType) needsDoc() bool {
	if len(et.OrderingKey) > 0 {
		return true
	}
	for _, s := range et.Subscribers {
		if !s.same || s.Job.Unique != nil {
			return true
		}
	}
	return false
}

// write writes the batch through q: locks, outbox rows, subscriber jobs.
func (et *EventType) write(ctx context.Context, q *db.Queries, b *eventBatch, o publishOptions) ([]Published, error) {
	n := len(b.raws)
	out := make([]Published, n)
	if et.Relay {
		if keys := sortedKeys(b.keys); len(keys) > 0 {
			if err := q.LockEventKeys(ctx, db.LockEventKeysParams{Event: et.Name, OrderingKeys: keys}); err != nil {
				return nil, fmt.Errorf("jobc: publish %s: lock ordering keys: %w", et.Name, dberr.Describe(err))
			}
		}
		if err := et.insertEvents(ctx, q, b, o, out); err != nil {
			return nil, err
		}
	}
	for j := range et.Subscribers {
		s, sb := &et.Subscribers[j], &b.subs[j]
		jobs, err := s.enqueue(ctx, q, sb)
		if err != nil {
			return nil, fmt.Errorf("jobc: publish %s: subscriber %s: %w", et.Name, s.Job.Kind, err)
		}
		for i := range out {
			if out[i].Jobs == nil {
				out[i].Jobs = make([]Enqueued, len(et.Subscribers))
			}
			out[i].Jobs[j] = jobs[i]
		}
	}
	return out, nil
}

// insertEvents writes the outbox rows: one INSERT for a single event, else one
// INSERT ... SELECT FROM unnest per unnestMaxBatch events. IDs are taken after the
// ordering keys are locked, by the sequence, in the payloads' order.
func (et *EventType) insertEvents(ctx context.Context, q *db.Queries, b *eventBatch, o publishOptions, out []Published) error {
	if len(b.raws) == 1 {
		id, err := q.InsertEvent(ctx, db.InsertEventParams{
			Event: et.Name, Version: int32(et.WriteVersion), Subject: et.Subject,
			OrderingKey: b.keys[0], Payload: b.raws[0], Metadata: o.meta,
		})
		if err != nil {
			return fmt.Errorf("jobc: publish %s: %w", et.Name, dberr.Describe(err))
		}
		out[0].ID = id
		return nil
	}
	for start := 0; start < len(b.raws); start += unnestMaxBatch {
		end := min(start+unnestMaxBatch, len(b.raws))
		keyed := make([]bool, end-start)
		keys := make([]string, end-start)
		for i, k := range b.keys[start:end] {
			if k != nil {
				keyed[i], keys[i] = true, *k
			}
		}
		ids, err := q.InsertEvents(ctx, db.InsertEventsParams{
			Event: et.Name, Version: int32(et.WriteVersion), Subject: et.Subject,
			Keyed: keyed, OrderingKeys: keys, Payloads: b.raws[start:end], Metadata: o.meta,
		})
		if err != nil {
			return fmt.Errorf("jobc: publish %d %s events: %w", end-start, et.Name, dberr.Describe(err))
		}
		if len(ids) != end-start {
			return fmt.Errorf("jobc: publish %d %s events: %d inserted", end-start, et.Name, len(ids))
		}
		slices.Sort(ids) // ascending ids are the payloads' order (InsertEvents)
		for i, id := range ids {
			out[start+i].ID = id
		}
	}
	return nil
}

// enqueue inserts the subscriber's jobs of a batch, through its enqueue hooks if any.
func (s *Subscriber) enqueue(ctx context.Context, q *db.Queries, sb *subscriberBatch) ([]Enqueued, error) {
	jt, o := s.Job, sb.opts
	insert := func(ctx context.Context) ([]Enqueued, error) {
		if len(sb.raws) == 1 {
			var doc any
			if sb.docs != nil {
				doc = sb.docs[0]
			}
			e, err := jt.insertDecoded(ctx, q, sb.raws[0], doc, o)
			return []Enqueued{e}, err
		}
		return jt.insertMany(ctx, q, sb.raws, sb.docs, o)
	}
	if len(o.hooks) == 0 {
		return insert(ctx)
	}
	var out []Enqueued
	err := jt.hooked(ctx, &o, len(sb.raws), func(ctx context.Context) ([]int64, error) {
		var err error
		if out, err = insert(ctx); err != nil {
			return nil, err
		}
		ids := make([]int64, len(out))
		for i, e := range out {
			ids[i] = e.ID
		}
		return ids, nil
	})
	return out, err
}

// inTx runs fn in dbtx when it is a transaction, and otherwise in a transaction begun
// on dbtx (a pool or a connection), committed when fn succeeds: a publish writes
// several rows and holds its ordering keys' locks until commit.
func inTx(ctx context.Context, dbtx DBTX, fn func(DBTX) error) error {
	if _, ok := dbtx.(pgx.Tx); ok {
		return fn(dbtx)
	}
	b, ok := dbtx.(Beginner)
	if !ok {
		return fn(dbtx)
	}
	tx, err := b.Begin(ctx)
	if err != nil {
		return fmt.Errorf("jobc: publish: begin: %w", dberr.Describe(err))
	}
	defer func() { _ = tx.Rollback(ctx) }() // after Commit, a no-op
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("jobc: publish: commit: %w", dberr.Describe(err))
	}
	return nil
}
