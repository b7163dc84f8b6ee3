package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// Enqueued is the outcome of one enqueue.
type Enqueued struct {
	ID int64
	// Duplicate is true when a job holding the same unique key already existed:
	// nothing was inserted and ID is that job's.
	Duplicate bool
	// Replaced is true when a waiting job held the same unique key and the job type's
	// unique on_conflict is replace (runtime.OnConflictReplace): nothing was inserted,
	// ID is that job's, and its payload, payload version, metadata and run time are now
	// this enqueue's. Duplicate is then false.
	Replaced bool
}

// EnqueueOption adjusts one enqueue.
type EnqueueOption func(*enqueueOptions)

type enqueueOptions struct {
	runAt    *time.Time
	priority int
	version  int // the payload version written: the job's write version, or a subscriber's
	dedupKey *string
	metadata map[string]any
	meta     []byte   // metadata encoded
	finished []string // with dedupKey: finished states that keep holding it
	hooks    []EnqueueHook
}

// RunAt makes the job available at t instead of now.
func RunAt(t time.Time) EnqueueOption {
	return func(o *enqueueOptions) { o.runAt = &t }
}

// RunAfter makes the job available after d.
func RunAfter(d time.Duration) EnqueueOption {
	return func(o *enqueueOptions) { t := time.Now().Add(d); o.runAt = &t }
}

// WithPriority overrides the job type's priority: 1 is the most urgent, 9 the least.
func WithPriority(p int) EnqueueOption {
	return func(o *enqueueOptions) { o.priority = p }
}

// WithDedupKey sets the job's unique key, replacing the one its job type computes from
// the payload: while a job of the same kind holds that key (it is unfinished, or
// finished in a state its unique settings keep the key in), enqueueing another returns
// it (Enqueued.Duplicate) instead of inserting. A key longer than 1024 bytes (or one
// starting "sha256:") is stored as "sha256:" and its hex SHA-256, so any length works.
func WithDedupKey(key string) EnqueueOption {
	return func(o *enqueueOptions) { o.dedupKey = &key }
}

// WithMetadata attaches key/value pairs to the job; handlers read them from Job.Metadata.
func WithMetadata(kv map[string]any) EnqueueOption {
	return func(o *enqueueOptions) {
		if o.metadata == nil {
			o.metadata = make(map[string]any, len(kv))
		}
		for k, v := range kv {
			o.metadata[k] = v
		}
	}
}

// Priorities run from MostUrgent to LeastUrgent.
const (
	MostUrgent  = 1
	LeastUrgent = 9
)

// Enqueue validates payload against the write version's schema and inserts the job
// through db, which may be the transaction of a business change: the job then exists if
// and only if that transaction commits. An invalid payload returns a *PayloadError and
// inserts nothing.
func Enqueue(ctx context.Context, dbtx DBTX, jt *JobType, payload any, opts ...EnqueueOption) (Enqueued, error) {
	o, err := jt.options(opts)
	if err != nil {
		return Enqueued{}, err
	}
	raw, doc, err := jt.marshalPayload(jt.WriteVersion, payload, jt.Unique != nil)
	if err != nil {
		return Enqueued{}, fmt.Errorf("jobc: enqueue %s: %w", jt.Kind, err)
	}
	if len(o.hooks) == 0 {
		return jt.insertDecoded(ctx, db.New(dbtx), raw, doc, o)
	}
	var out Enqueued
	err = jt.hooked(ctx, &o, 1, func(ctx context.Context) ([]int64, error) {
		var err error
		out, err = jt.insertDecoded(ctx, db.New(dbtx), raw, doc, o)
		return []int64{out.ID}, err
	})
	return out, err
}

func (jt *JobType) options(opts []EnqueueOption) (enqueueOptions, error) {
	o := enqueueOptions{priority: jt.Priority, version: jt.WriteVersion}
	for _, opt := range opts {
		opt(&o)
	}
	if o.priority < MostUrgent || o.priority > LeastUrgent {
		return o, fmt.Errorf("jobc: enqueue %s: priority %d out of range %d..%d", jt.Kind, o.priority, MostUrgent, LeastUrgent)
	}
	o.meta = []byte("{}")
	if len(o.metadata) > 0 {
		var err error
		if o.meta, err = encodeMetadata(jt.Kind, o.metadata); err != nil {
			return o, fmt.Errorf("jobc: enqueue %s: %w", jt.Kind, err)
		}
	}
	return o, nil
}

// insert inserts one job whose payload is only at hand as bytes.
func (jt *JobType) insert(ctx context.Context, q *db.Queries, raw []byte, o enqueueOptions) (Enqueued, error) {
	return jt.insertDecoded(ctx, q, raw, nil, o)
}

// insertDecoded inserts one job; doc is raw decoded (nil if it is not at hand), for the
// unique key.
func (jt *JobType) insertDecoded(ctx context.Context, q *db.Queries, raw []byte, doc any, o enqueueOptions) (Enqueued, error) {
	key, finished, err := jt.uniqueKey(raw, doc, o)
	if err != nil {
		return Enqueued{}, fmt.Errorf("jobc: enqueue %s: %w", jt.Kind, err)
	}
	flowKey, err := jt.flowKey(o.version, raw, doc)
	if err != nil {
		return Enqueued{}, fmt.Errorf("jobc: enqueue %s: %w", jt.Kind, err)
	}
	if key == "" {
		row, err := q.InsertJob(ctx, db.InsertJobParams{
			Kind: jt.Kind, Queue: jt.Queue, AvailableAt: o.runAt, Priority: int16(o.priority),
			PayloadVersion: int32(o.version), Payload: raw, Metadata: o.meta, MaxAttempts: int32(jt.MaxAttempts),
			FlowKey: flowKey,
		})
		if err != nil {
			return Enqueued{}, fmt.Errorf("jobc: enqueue %s: %w", jt.Kind, dberr.Describe(err))
		}
		return Enqueued{ID: row.ID}, nil
	}
	row, err := q.InsertUniqueJob(ctx, db.InsertUniqueJobParams{
		Kind: jt.Kind, Queue: jt.Queue, AvailableAt: o.runAt, Priority: int32(o.priority),
		PayloadVersion: int32(o.version), Payload: raw, Metadata: o.meta, MaxAttempts: int32(jt.MaxAttempts),
		UniqueKey: key, UniqueFinished: finished, OnConflict: jt.onConflict(), FlowKey: flowKey,
	})
	if err != nil {
		return Enqueued{}, fmt.Errorf("jobc: enqueue %s: %w", jt.Kind, dberr.Describe(err))
	}
	return Enqueued{ID: row.ID, Duplicate: !row.Inserted && !row.Replaced, Replaced: row.Replaced}, nil
}

// EnqueueMany validates every payload, then inserts them all with one statement per
// unnestMaxBatch jobs: much faster than one insert each, and atomic in a transaction.
// If any payload is invalid, it returns a *PayloadError for the first, naming its
// index, and inserts nothing. The options apply to every job. Unique jobs (and jobs
// with a dedup key) are inserted one statement each instead, each through the gate
// that skips duplicates (jobc_enqueue_unique).
func EnqueueMany[T any](ctx context.Context, dbtx DBTX, jt *JobType, payloads []T, opts ...EnqueueOption) ([]Enqueued, error) {
	if len(payloads) == 0 {
		return nil, nil
	}
	o, err := jt.options(opts)
	if err != nil {
		return nil, err
	}
	oneByOne := o.dedupKey != nil || jt.Unique != nil
	raws := make([]json.RawMessage, len(payloads))
	var docs []any // kept for unique keys only
	if oneByOne {
		docs = make([]any, len(payloads))
	}
	for i := range payloads {
		raw, doc, err := jt.marshalPayload(jt.WriteVersion, payloads[i], jt.Unique != nil)
		if err != nil {
			return nil, fmt.Errorf("jobc: enqueue %s: payload %d: %w", jt.Kind, i, err)
		}
		raws[i] = raw
		if oneByOne {
			docs[i] = doc
		}
	}
	if len(o.hooks) == 0 {
		return jt.insertMany(ctx, db.New(dbtx), raws, docs, o)
	}
	var out []Enqueued
	err = jt.hooked(ctx, &o, len(raws), func(ctx context.Context) ([]int64, error) {
		var err error
		if out, err = jt.insertMany(ctx, db.New(dbtx), raws, docs, o); err != nil {
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

// unnestMaxBatch is the largest batch EnqueueMany inserts with one INSERT ... SELECT
// FROM unnest (InsertJobs); larger ones are inserted in statements of that many jobs.
// One statement per batch beat reserving ids and a COPY at every size measured
// (bench/README.md), and it takes every id from the sequence, so the role that
// enqueues never names one (schema/grants.go).
const unnestMaxBatch = 20000

// insertMany inserts raws, each a validated payload, with the options o; docs holds
// their decoded values when the jobs are unique or deduplicated (for their keys).
func (jt *JobType) insertMany(ctx context.Context, q *db.Queries, raws []json.RawMessage, docs []any, o enqueueOptions) ([]Enqueued, error) {
	var err error
	if docs != nil {
		out := make([]Enqueued, len(raws))
		for i, raw := range raws {
			if out[i], err = jt.insertDecoded(ctx, q, raw, docs[i], o); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	var ids []int64
	for chunk := range slices.Chunk(raws, unnestMaxBatch) {
		got, err := jt.insertUnnest(ctx, q, chunk, o)
		if err != nil {
			return nil, err
		}
		ids = append(ids, got...)
	}
	out := make([]Enqueued, len(ids))
	for i, id := range ids {
		out[i] = Enqueued{ID: id}
	}
	return out, nil
}

// insertUnnest inserts raws with one statement that also wakes the queue.
func (jt *JobType) insertUnnest(ctx context.Context, q *db.Queries, raws []json.RawMessage, o enqueueOptions) ([]int64, error) {
	var flowKeys []string // nil: NULL, no flow keys
	if jt.flowed() {
		flowKeys = make([]string, len(raws))
		for i, raw := range raws {
			key, err := jt.flowKey(o.version, raw, nil)
			if err != nil {
				return nil, fmt.Errorf("jobc: enqueue %s: payload %d: %w", jt.Kind, i, err)
			}
			flowKeys[i] = *key
		}
	}
	rows, err := q.InsertJobs(ctx, db.InsertJobsParams{
		Kind: jt.Kind, Queue: jt.Queue, AvailableAt: o.runAt, Priority: int16(o.priority),
		PayloadVersion: int32(o.version), Metadata: o.meta, MaxAttempts: int32(jt.MaxAttempts),
		Payloads: raws, FlowKeys: flowKeys,
	})
	if err != nil {
		return nil, fmt.Errorf("jobc: enqueue %d %s jobs: %w", len(raws), jt.Kind, dberr.Describe(err))
	}
	if len(rows) != len(raws) {
		return nil, fmt.Errorf("jobc: enqueue %d %s jobs: %d inserted", len(raws), jt.Kind, len(rows))
	}
	// Ascending ids are the payloads' order (InsertJobs).
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	slices.Sort(ids)
	return ids, nil
}
