package maintenance

import (
	"context"
	"testing"
	"time"
)

// TestExpensiveAgingWaitsItsTurn: after a run that took ExpensiveAging or more, the
// ager does not read the queues again until AgingShare times that long has passed
// (this ager has no database: a run that read it would fail).
func TestExpensiveAgingWaitsItsTurn(t *testing.T) {
	a := NewStarvationAger(nil, AgerConfig{Queues: []string{"q"}, Bound: time.Minute})
	a.last, a.took = time.Now(), 50*time.Millisecond
	r, err := a.RunOnce(context.Background())
	if err != nil || !r.Deferred || r.Aged != 0 {
		t.Fatalf("a run right after one of %s: %+v, %v; want it deferred", a.took, r, err)
	}
	a.took = ExpensiveAging / 2 // a cheap run: the next one is not deferred
	if !func() (panicked bool) {
		defer func() { panicked = recover() != nil }()
		_, _ = a.RunOnce(context.Background())
		return false
	}() {
		t.Fatal("a run after a cheap one did not read the database")
	}
}
