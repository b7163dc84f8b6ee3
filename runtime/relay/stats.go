package relay

import (
	"context"
	"fmt"
	"time"

	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// Stats is the state of the outbox: what `jobc status` shows and what the relay's
// hooks receive every Config.StatsInterval.
type Stats struct {
	Pending int64 // events not yet published, in flight or waiting
	Failed  int64 // events failed for good, kept until sent again or deleted
	// Lag is the age of the oldest pending event: how far behind the broker is.
	// 0 when nothing is pending.
	Lag time.Duration
}

// ReadStats reads the outbox's Stats in one statement (two index-only counts and one
// index probe).
func ReadStats(ctx context.Context, dbtx runtime.DBTX) (Stats, error) {
	row, err := db.New(dbtx).OutboxStats(ctx)
	if err != nil {
		return Stats{}, fmt.Errorf("relay: read the outbox's stats: %w", err)
	}
	return Stats{Pending: row.Pending, Failed: row.Failed, Lag: time.Duration(row.LagSeconds * float64(time.Second))}, nil
}

// FailedEvent is an event failed for good, with the error that failed it.
type FailedEvent struct {
	ID          int64
	Event       string
	Version     int
	Subject     string
	OrderingKey string
	Attempts    int
	CreatedAt   time.Time
	Error       string
}

// ListFailed returns up to limit failed events, newest first.
func ListFailed(ctx context.Context, dbtx runtime.DBTX, limit int) ([]FailedEvent, error) {
	rows, err := db.New(dbtx).ListFailedEvents(ctx, int32(min(max(limit, 0), 1<<30)))
	if err != nil {
		return nil, fmt.Errorf("relay: list failed events: %w", err)
	}
	out := make([]FailedEvent, len(rows))
	for i, r := range rows {
		out[i] = FailedEvent{ID: r.ID, Event: r.Event, Version: int(r.Version), Subject: r.Subject,
			Attempts: int(r.Attempts), CreatedAt: r.CreatedAt}
		if r.OrderingKey != nil {
			out[i].OrderingKey = *r.OrderingKey
		}
		if r.LastError != nil {
			out[i].Error = *r.LastError
		}
	}
	return out, nil
}

// RetryingEvent is an event whose publication failed and that waits for its next
// attempt (with jittered backoff, see Config.RetryInitial). While it waits, the later
// events of its ordering key wait behind it.
type RetryingEvent struct {
	ID          int64
	Event       string
	Version     int
	Subject     string
	OrderingKey string
	Attempts    int // publications tried so far
	CreatedAt   time.Time
	NextAttempt time.Time // when a relay may claim it again
	Error       string    // the last attempt's
	// Behind is how many pending events of its ordering key wait behind it, counted up
	// to the behindMax given to ListRetrying (Behind == behindMax: at least that many).
	Behind int64
}

// ListRetrying returns up to limit events waiting for another attempt after a failed
// publication, the soonest due first, each with the number of its key's events behind
// it, counted up to behindMax. It reads the events in flight and these, never the
// backlog, and at most behindMax entries per event for the counts.
func ListRetrying(ctx context.Context, dbtx runtime.DBTX, limit, behindMax int) ([]RetryingEvent, error) {
	rows, err := db.New(dbtx).ListRetryingEvents(ctx, db.ListRetryingEventsParams{
		Max: int32(min(max(limit, 0), 1<<30)), BehindMax: int32(min(max(behindMax, 0), 1<<30))})
	if err != nil {
		return nil, fmt.Errorf("relay: list retrying events: %w", err)
	}
	out := make([]RetryingEvent, len(rows))
	for i, r := range rows {
		out[i] = RetryingEvent{ID: r.ID, Event: r.Event, Version: int(r.Version), Subject: r.Subject,
			Attempts: int(r.Attempts), CreatedAt: r.CreatedAt, NextAttempt: r.AvailableAt, Behind: r.Behind}
		if r.OrderingKey != nil {
			out[i].OrderingKey = *r.OrderingKey
		}
		if r.LastError != nil {
			out[i].Error = *r.LastError
		}
	}
	return out, nil
}

// RetryFailed makes the given failed events (every failed event when ids is empty)
// pending again, due now with their attempts reset, and returns how many it moved.
// An event of an ordering key whose later events were published meanwhile arrives
// after them: its failure had already broken that key's order.
func RetryFailed(ctx context.Context, dbtx runtime.DBTX, ids []int64) (int64, error) {
	if ids == nil {
		ids = []int64{}
	}
	n, err := db.New(dbtx).RetryFailedEvents(ctx, ids)
	if err != nil {
		return 0, fmt.Errorf("relay: retry failed events: %w", err)
	}
	return n, nil
}
