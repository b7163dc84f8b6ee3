package runtime

import (
	"context"
	"fmt"
)

// EnqueueHook wraps enqueues: Enqueue, EnqueueMany and the generated Enqueue<T> call
// it around their insert when it is passed with WithHooks. It may add metadata to
// the jobs (a tracer stores the W3C trace context there, so that the handler's span
// continues the enqueuing trace), start a span around the insert, or count enqueues.
// It must call insert, at most once, and return its error.
type EnqueueHook interface {
	WrapEnqueue(ctx context.Context, e *EnqueueRequest, insert func(ctx context.Context) error) error
}

// EnqueueRequest describes one enqueue call to an EnqueueHook.
type EnqueueRequest struct {
	Kind  string
	Queue string
	Count int // jobs the call inserts: 1, or len(payloads) for EnqueueMany
	// Metadata is the jobs' metadata; a hook may add keys before calling insert.
	Metadata map[string]any
	// IDs are the inserted (or, for a duplicate, the existing) jobs, set once insert
	// returned nil.
	IDs []int64
}

// WithHooks passes enqueue hooks to one enqueue. There is no package-level hook
// registry, so a producer keeps its hooks with its other options — typically one
// variable built at start-up, e.g. hooks := runtime.WithHooks(jobcotel.NewTracer(tp)),
// passed to every Enqueue<T> call — the way an application passes its pool.
func WithHooks(hooks ...EnqueueHook) EnqueueOption {
	return func(o *enqueueOptions) { o.hooks = append(o.hooks, hooks...) }
}

// hooked runs insert through the enqueue's hooks, outermost first. The metadata is
// encoded again after the hooks ran, since they may have added to it.
func (jt *JobType) hooked(ctx context.Context, o *enqueueOptions, count int, insert func(ctx context.Context) ([]int64, error)) error {
	req := &EnqueueRequest{Kind: jt.Kind, Queue: jt.Queue, Count: count, Metadata: o.metadata}
	if req.Metadata == nil {
		req.Metadata = map[string]any{}
	}
	run := func(ctx context.Context) error {
		if len(req.Metadata) > 0 {
			meta, err := encodeMetadata(jt.Kind, req.Metadata)
			if err != nil {
				return fmt.Errorf("jobc: enqueue %s: %w", jt.Kind, err)
			}
			o.meta = meta
		}
		ids, err := insert(ctx)
		if err == nil {
			req.IDs = ids
		}
		return err
	}
	for i := len(o.hooks) - 1; i >= 0; i-- {
		h, next := o.hooks[i], run
		run = func(ctx context.Context) error { return h.WrapEnqueue(ctx, req, next) }
	}
	return run(ctx)
}
