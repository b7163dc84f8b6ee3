package dbconn

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// healthTracer reports the errors of a connection's statements to failed (and their
// successes to succeeded), the pools that acquire connections to acquired and failed
// acquires to acquireFailed, after passing every event on to the tracer that was
// configured before (next, possibly nil), whichever of pgx's tracer interfaces it
// implements.
type healthTracer struct {
	next          pgx.QueryTracer
	failed        func(ctx context.Context, conn *pgx.Conn, err error)
	acquired      func(pool *pgxpool.Pool)
	succeeded     func()                               // may be nil
	acquireFailed func(ctx context.Context, err error) // may be nil
}

var (
	_ pgx.QueryTracer       = (*healthTracer)(nil)
	_ pgx.BatchTracer       = (*healthTracer)(nil)
	_ pgx.CopyFromTracer    = (*healthTracer)(nil)
	_ pgx.PrepareTracer     = (*healthTracer)(nil)
	_ pgx.ConnectTracer     = (*healthTracer)(nil)
	_ pgxpool.AcquireTracer = (*healthTracer)(nil)
	_ pgxpool.ReleaseTracer = (*healthTracer)(nil)
)

func (t *healthTracer) check(ctx context.Context, conn *pgx.Conn, err error) {
	switch {
	case err != nil && conn != nil:
		t.failed(ctx, conn, err)
	case err == nil && t.succeeded != nil:
		t.succeeded()
	}
}

func (t *healthTracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if t.next != nil {
		return t.next.TraceQueryStart(ctx, conn, data)
	}
	return ctx
}

func (t *healthTracer) TraceQueryEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryEndData) {
	if t.next != nil {
		t.next.TraceQueryEnd(ctx, conn, data)
	}
	t.check(ctx, conn, data.Err)
}

func (t *healthTracer) TraceBatchStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	if n, ok := t.next.(pgx.BatchTracer); ok {
		return n.TraceBatchStart(ctx, conn, data)
	}
	return ctx
}

func (t *healthTracer) TraceBatchQuery(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchQueryData) {
	if n, ok := t.next.(pgx.BatchTracer); ok {
		n.TraceBatchQuery(ctx, conn, data)
	}
}

func (t *healthTracer) TraceBatchEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchEndData) {
	if n, ok := t.next.(pgx.BatchTracer); ok {
		n.TraceBatchEnd(ctx, conn, data)
	}
	t.check(ctx, conn, data.Err)
}

func (t *healthTracer) TraceCopyFromStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceCopyFromStartData) context.Context {
	if n, ok := t.next.(pgx.CopyFromTracer); ok {
		return n.TraceCopyFromStart(ctx, conn, data)
	}
	return ctx
}

func (t *healthTracer) TraceCopyFromEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceCopyFromEndData) {
	if n, ok := t.next.(pgx.CopyFromTracer); ok {
		n.TraceCopyFromEnd(ctx, conn, data)
	}
	t.check(ctx, conn, data.Err)
}

func (t *healthTracer) TracePrepareStart(ctx context.Context, conn *pgx.Conn, data pgx.TracePrepareStartData) context.Context {
	if n, ok := t.next.(pgx.PrepareTracer); ok {
		return n.TracePrepareStart(ctx, conn, data)
	}
	return ctx
}

func (t *healthTracer) TracePrepareEnd(ctx context.Context, conn *pgx.Conn, data pgx.TracePrepareEndData) {
	if n, ok := t.next.(pgx.PrepareTracer); ok {
		n.TracePrepareEnd(ctx, conn, data)
	}
	t.check(ctx, conn, data.Err)
}

func (t *healthTracer) TraceConnectStart(ctx context.Context, data pgx.TraceConnectStartData) context.Context {
	if n, ok := t.next.(pgx.ConnectTracer); ok {
		return n.TraceConnectStart(ctx, data)
	}
	return ctx
}

func (t *healthTracer) TraceConnectEnd(ctx context.Context, data pgx.TraceConnectEndData) {
	if n, ok := t.next.(pgx.ConnectTracer); ok {
		n.TraceConnectEnd(ctx, data)
	}
}

func (t *healthTracer) TraceAcquireStart(ctx context.Context, pool *pgxpool.Pool, data pgxpool.TraceAcquireStartData) context.Context {
	t.acquired(pool)
	if n, ok := t.next.(pgxpool.AcquireTracer); ok {
		return n.TraceAcquireStart(ctx, pool, data)
	}
	return ctx
}

func (t *healthTracer) TraceAcquireEnd(ctx context.Context, pool *pgxpool.Pool, data pgxpool.TraceAcquireEndData) {
	if n, ok := t.next.(pgxpool.AcquireTracer); ok {
		n.TraceAcquireEnd(ctx, pool, data)
	}
	if data.Err != nil && t.acquireFailed != nil {
		t.acquireFailed(ctx, data.Err)
	}
}

func (t *healthTracer) TraceRelease(pool *pgxpool.Pool, data pgxpool.TraceReleaseData) {
	if n, ok := t.next.(pgxpool.ReleaseTracer); ok {
		n.TraceRelease(pool, data)
	}
}
