package maintenance

import (
	"math"
	"testing"
	"time"
)

// TestVacuumWaitsItsTurn: a run vacuums once the dead row versions pass the threshold
// (its constant plus the live rows), and after a VACUUM that took d, not
// until VacuumShare × d after the last one ended (runtime's TestVacuumerVacuumsPastTheThreshold
// runs it against a database).
func TestVacuumWaitsItsTurn(t *testing.T) {
	v := NewVacuumer(nil, VacuumerConfig{DeadRows: 1000})
	never := math.Inf(1)
	for _, tc := range []struct {
		dead, live    int64
		since         float64
		took          time.Duration
		due, deferred bool
	}{
		{999, 0, never, 0, false, false},
		{1000, 0, never, 0, true, false},
		{5999, 5000, never, 0, false, false}, // 1000 + 5000
		{6000, 5000, never, 0, true, false},
		{1000, 0, 0, 0, true, false}, // this worker never vacuumed: another's VACUUM does not hold it back
		{1000, 0, 1.9, 100 * time.Millisecond, false, true},
		{1000, 0, 2.0, 100 * time.Millisecond, true, false},
		{999, 0, 1.9, 100 * time.Millisecond, false, false},
	} {
		v.took = tc.took
		if due, deferred := v.due(tc.dead, tc.live, tc.since); due != tc.due || deferred != tc.deferred {
			t.Errorf("%d dead, %d live, %gs after a VACUUM, this worker's last took %s: due %v, deferred %v; want %v, %v",
				tc.dead, tc.live, tc.since, tc.took, due, deferred, tc.due, tc.deferred)
		}
	}
}
