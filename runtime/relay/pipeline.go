package relay

import "sync"

// pipeline decides when one relay's loops (Config.Concurrency) may claim while another
// of its batches is in flight. An overlapping claim pays when the events it finds are
// claimable (unordered ones, or the only pending event of their key); when most are
// held back by the keys of the batches in flight, it reads its window and visits keys
// to find few, and slows every batch down. So a claim that overlapped and came back less than half
// full holds the next overlapping claims back for a number of batches, doubling with
// each such claim up to maxHold, and a productive overlapping claim lifts the hold.
type pipeline struct {
	mu       sync.Mutex
	inflight int // batches between begin and end
	hold     int // batches to run one at a time before the next overlapping claim
	penalty  int // the hold after the next unproductive overlapping claim
}

// maxHold bounds the hold: one probing claim per maxHold batches at worst.
const maxHold = 64

// begin reports whether a loop may claim now and, if it may, whether its claim
// overlaps another batch in flight. A loop that may claim must call end.
func (p *pipeline) begin() (ok, overlapping bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inflight > 0 && p.hold > 0 {
		return false, false
	}
	p.inflight++
	return true, p.inflight > 1
}

// end records that a batch begun with begin claimed claimed of at most batch events
// and is done.
func (p *pipeline) end(overlapping bool, claimed, batch int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inflight--
	switch {
	case overlapping && claimed*2 < batch:
		p.penalty = min(max(2*p.penalty, 1), maxHold)
		p.hold = p.penalty
	case overlapping:
		p.penalty, p.hold = 0, 0
	case p.hold > 0:
		p.hold--
	}
}
