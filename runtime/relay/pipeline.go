package relay

import "sync"

// pipeline decides when one relay's loops (Config.Concurrency) may claim while another
// of its batches is in flight. An overlapping claim pays when the events it finds are
// claimable (unordered ones, or the only pending event of their key); when most are
// held back by the keys of the batches in flight, it reads its window and visits keys
// to find few, and slows every batch down. So a claim that overlapped and came back less than half
// full holds the next overlapping claims back for a number of batches, doubling with
// each such claim up to maxHold, and a productive overlapping claim lifts the hold.
// A loop held back waits for the batch in flight to end, not for PollInterval: that
// batch may have freed the next events of its keys, and its own loop may be held back
// in turn by a claim that began before them.
type pipeline struct {
	mu       sync.Mutex
	inflight int           // batches between begin and end
	hold     int           // batches to run one at a time before the next overlapping claim
	penalty  int           // the hold after the next unproductive overlapping claim
	ended    chan struct{} // closed by the next end (nil: nobody waits)
}

// maxHold bounds the hold: one probing claim per maxHold batches at worst.
const maxHold = 64

// begin reports whether a loop may claim now and, if it may, whether its claim
// overlaps another batch in flight. A loop that may claim must call end; one that may
// not is given a channel closed when a batch in flight ends.
func (p *pipeline) begin() (ok, overlapping bool, ended <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inflight > 0 && p.hold > 0 {
		if p.ended == nil {
			p.ended = make(chan struct{})
		}
		return false, false, p.ended
	}
	p.inflight++
	return true, p.inflight > 1, nil
}

// end records that a batch begun with begin claimed claimed of at most batch events
// and is done.
func (p *pipeline) end(overlapping bool, claimed, batch int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inflight--
	if p.ended != nil {
		close(p.ended)
		p.ended = nil
	}
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
