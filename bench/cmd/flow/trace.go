package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// claimTracer times the workers' jobc_claim_flow calls (bench.Tracer) and counts the
// jobs they return and their errors.
type claimTracer struct {
	mu       sync.Mutex
	calls    int
	rows     int64
	total    time.Duration
	errs     int
	firstErr string
	debug    bool // print every call
}

type traceKey struct{}

func (t *claimTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if !strings.Contains(d.SQL, "jobc_claim_flow(") {
		return ctx
	}
	return context.WithValue(ctx, traceKey{}, time.Now())
}

func (t *claimTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryEndData) {
	start, ok := ctx.Value(traceKey{}).(time.Time)
	if !ok {
		return
	}
	if t.debug {
		fmt.Fprintf(os.Stderr, "claim_flow %s +%.2fms rows=%d err=%v\n", start.Format("05.000"), float64(time.Since(start))/1e6, d.CommandTag.RowsAffected(), d.Err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls++
	t.total += time.Since(start)
	t.rows += d.CommandTag.RowsAffected()
	if d.Err != nil {
		t.errs++
		if t.firstErr == "" {
			t.firstErr = d.Err.Error()
		}
	}
}

// take returns what was traced since the last take and starts over.
func (t *claimTracer) take() claimStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := claimStats{calls: t.calls, rows: t.rows, total: t.total, errs: t.errs, firstErr: t.firstErr}
	t.calls, t.rows, t.total, t.errs, t.firstErr = 0, 0, 0, 0, ""
	return s
}

type claimStats struct {
	calls    int
	rows     int64
	total    time.Duration
	errs     int
	firstErr string
}

func (s claimStats) meanMS() float64 {
	if s.calls == 0 {
		return 0
	}
	return float64(s.total) / float64(s.calls) / float64(time.Millisecond)
}

func (s claimStats) String() string {
	e := ""
	if s.errs > 0 {
		e = fmt.Sprintf(", %d errors (first: %s)", s.errs, s.firstErr)
	}
	per := 0.0
	if s.calls > 0 {
		per = float64(s.rows) / float64(s.calls)
	}
	return fmt.Sprintf("%d claim_flow calls, %.3f ms mean, %.1f rows/call%s", s.calls, s.meanMS(), per, e)
}
