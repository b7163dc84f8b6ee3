package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/relay"
)

// grantsSink fails its first message for good and retries its second, on the first
// batch only; later batches are confirmed.
type grantsSink struct{ batches int }

func (s *grantsSink) Publish(_ context.Context, msgs []relay.Message) []error {
	s.batches++
	if s.batches > 1 {
		return nil
	}
	errs := make([]error, len(msgs))
	for i := range msgs {
		errs[i] = errors.New("broker down")
	}
	errs[0] = relay.Poison(errors.New("too large"))
	return errs
}

func (s *grantsSink) Close() error { return nil }

// checkRelayGrants runs the relay's statements (queries/relay.sql) as the worker role
// on the events the producer published, and its reads as the read-only role.
func checkRelayGrants(t *testing.T, worker, reader *pgxpool.Pool) {
	t.Helper()
	ctx := t.Context()
	// The event grants_test.go publishes, as the relay's catalogue declares it.
	declared, err := runtime.NewEventType(runtime.EventType{
		Name: "grants_event", Subject: "grants.event", OrderingKey: []string{"email"}, Relay: true,
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: emailSchema}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := relay.New(worker, relay.Config{Sink: &grantsSink{}, Events: []*runtime.EventType{declared}, RetryInitial: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	// ClaimEvents, FailEvents, RetryEvents; then MarkEventsPublished after RetryFailedEvents.
	res, err := r.RunOnce(ctx)
	if err != nil || res.Failed != 1 || res.Retried < 1 {
		t.Fatalf("relay as the worker role: %+v, %v; want one failed and the rest retried", res, err)
	}
	failed, err := relay.ListFailed(ctx, reader, 10)
	if err != nil || len(failed) != 1 {
		t.Fatalf("ListFailed as the read-only role: %+v, %v", failed, err)
	}
	retrying, err := relay.ListRetrying(ctx, reader, 10, 10)
	if err != nil || len(retrying) != res.Retried {
		t.Fatalf("ListRetrying as the read-only role: %+v, %v; want the %d retried", retrying, err, res.Retried)
	}
	if _, err := relay.ReadStats(ctx, reader); err != nil {
		t.Errorf("ReadStats as the read-only role: %v", err)
	}
	if n, err := relay.RetryFailed(ctx, worker, nil); err != nil || n != 1 {
		t.Fatalf("RetryFailed as the worker role: %d, %v", n, err)
	}
	if res, err := r.RunOnce(ctx); err != nil || res.Published != 1 {
		t.Fatalf("relay as the worker role, second batch: %+v, %v; want the retried event published", res, err)
	}
	p := relay.NewPruner(worker, relay.PrunerConfig{Retention: time.Nanosecond})
	time.Sleep(time.Millisecond)
	if n, err := p.RunOnce(ctx); err != nil || n != 1 {
		t.Errorf("Pruner as the worker role: %d, %v; want the published event deleted", n, err)
	}
}
