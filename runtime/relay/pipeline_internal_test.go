package relay

import "testing"

// TestPipeline: overlapping claims are allowed until one comes back less than half
// full; then batches run one at a time for a hold that doubles with each unproductive
// overlapping claim (up to maxHold), and a productive one lifts it. A loop held back
// waits until the batch in flight ends.
func TestPipeline(t *testing.T) {
	var p pipeline
	const batch = 100
	ok, overlapping, _ := p.begin()
	if !ok || overlapping {
		t.Fatalf("first claim: %v %v, want allowed and not overlapping", ok, overlapping)
	}
	// A second loop overlaps, productively: overlapping stays allowed.
	if ok, overlapping, _ := p.begin(); !ok || !overlapping {
		t.Fatalf("second claim: %v %v, want an overlapping one", ok, overlapping)
	}
	p.end(true, batch, batch)
	if ok, overlapping, _ := p.begin(); !ok || !overlapping {
		t.Fatal("after a productive overlapping claim, overlapping is refused")
	}
	// Unproductive: held for 1 batch, then 2, 4, ... up to maxHold.
	for _, want := range []int{1, 2, 4, 8, 16, 32, 64, 64} {
		p.end(true, batch/2-1, batch)
		if p.hold != want {
			t.Fatalf("hold %d after an unproductive overlapping claim, want %d", p.hold, want)
		}
		for i := range want {
			ok, _, ended := p.begin()
			if ok {
				t.Fatalf("overlapping claim allowed with %d of %d held batches to go", want-i, want)
			}
			select {
			case <-ended:
				t.Fatal("the held loop's wait ended before the batch in flight did")
			default:
			}
			p.end(false, batch, batch) // the batch in flight ends, the next one starts alone
			select {
			case <-ended:
			default:
				t.Fatal("the batch in flight ended, and the held loop still waits")
			}
			if ok, overlapping, _ := p.begin(); !ok || overlapping {
				t.Fatalf("a lone claim during the hold: %v %v", ok, overlapping)
			}
		}
		if ok, overlapping, _ := p.begin(); !ok || !overlapping {
			t.Fatalf("after a hold of %d batches, the overlapping claim is still refused", want)
		}
	}
	p.end(true, batch, batch)
	if p.hold != 0 || p.penalty != 0 {
		t.Fatalf("after a productive overlapping claim: hold %d penalty %d, want both 0", p.hold, p.penalty)
	}
}
