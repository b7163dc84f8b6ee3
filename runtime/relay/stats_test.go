package relay_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/internal/testkit"
	"github.com/jobc-dev/jobc/runtime/relay"
)

// TestListRetrying: the events whose publication failed and that wait for their next
// attempt are listed, soonest due first, each with its error, attempts, when it may
// go again and how many events of its key wait behind it (counted up to a bound);
// events in flight and events never tried are not.
func TestListRetrying(t *testing.T) {
	t.Parallel()
	pool := testkit.MigratedSchema(t)
	et, unordered := orderedType(t), unorderedType(t)
	a := publish(t, pool, et, thing{Key: "a", N: 1}, thing{Key: "a", N: 2}, thing{Key: "a", N: 3}, thing{Key: "a", N: 4})
	b := publish(t, pool, et, thing{Key: "b", N: 1})
	u := publish(t, pool, unordered, thing{N: 9})
	refused := errors.New("nats: no responders available for request")
	sink := &recordSink{fail: func(m relay.Message) error {
		if m.OrderingKey == "a" || m.ID == u[0] {
			return refused
		}
		return nil
	}}
	cfg := relay.Config{Sink: sink, RetryInitial: time.Hour, RetryMax: 2 * time.Hour, RetryJitter: 0.01}
	if res := runOnce(t, newRelay(t, pool, cfg)); res != (relay.BatchResult{Claimed: 3, Published: 1, Retried: 2}) {
		t.Fatalf("batch: %+v, want a1 and the unordered event retried, b1 published", res)
	}

	// An event in flight is not retrying, though it waits past now too.
	gated := &recordSink{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	c := publish(t, pool, et, thing{Key: "c"})
	done := make(chan error)
	go func() {
		_, err := newRelay(t, pool, relay.Config{Sink: gated}).RunOnce(context.Background())
		done <- err
	}()
	<-gated.entered
	defer func() {
		close(gated.gate)
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	if got := readRow(t, pool, c[0]); !got.Leased {
		t.Fatalf("c1 is not in flight: %+v", got)
	}

	got, err := relay.ListRetrying(t.Context(), pool, 10, 100)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, len(got))
	for i, r := range got {
		ids[i] = r.ID
		wait := time.Until(r.NextAttempt)
		if r.Attempts != 1 || r.Error != refused.Error() || wait < 50*time.Minute || wait > 70*time.Minute ||
			(i > 0 && r.NextAttempt.Before(got[i-1].NextAttempt)) {
			t.Errorf("retrying event %d: %+v (next attempt in %s), want attempt 1, the sink's error, due in about RetryInitial, soonest first", i, r, wait)
		}
	}
	slices.Sort(ids)
	if want := []int64{a[0], u[0]}; !slices.Equal(ids, want) {
		t.Fatalf("retrying events %v, want a1 and the unordered event %v (not b1 %d, published, nor c1 %d, in flight)", ids, want, b[0], c[0])
	}
	for _, r := range got {
		if want := map[int64]int64{a[0]: 3, u[0]: 0}[r.ID]; r.Behind != want || (r.ID == a[0]) != (r.OrderingKey == "a") {
			t.Errorf("event %d: %d behind it, key %q; want %d", r.ID, r.Behind, r.OrderingKey, want)
		}
	}
	first, err := relay.ListRetrying(t.Context(), pool, 1, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 1 || first[0].ID != got[0].ID {
		t.Errorf("ListRetrying(1, 100): %+v, want the soonest due only, %d", first, got[0].ID)
	}
	capped, err := relay.ListRetrying(t.Context(), pool, 10, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range capped {
		if r.ID == a[0] && r.Behind != 2 {
			t.Errorf("ListRetrying(10, 2): a1 has %d behind it, want the count stopped at 2", r.Behind)
		}
	}
}
