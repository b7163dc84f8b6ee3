package runtime

import (
	"sync"
	"sync/atomic"

	"github.com/jobc-dev/jobc/runtime/internal/claim"
)

// queue is one queue a worker serves: its claim filter, its handler goroutines and
// their free slots.
type queue struct {
	name  string
	max   int // handlers of this queue that may run at once
	batch int // jobs one claim may take

	// The (kind or alias, payload version) pairs this worker decodes and where the
	// next claim starts; the fetch loop's.
	claim *claim.Queue

	active atomic.Int32
	jobs   chan claim.Claimed // claimed jobs for the handler goroutines
	// jobsMu guards sending to jobs from outside the fetch loop (a completed job's
	// place passed on, passing.go) against the fetch loop closing it (jobsClosed).
	jobsMu     sync.Mutex
	jobsClosed bool
	slotFreed  chan struct{} // a handler finished
	wake       chan struct{} // a notification says there may be work
	// firstClaim is closed once the fetch loop has made its first claim, or decided
	// not to (the queue is paused), or stopped.
	firstClaim chan struct{}
	notified   atomic.Int64 // notifications received, to tell a trickle from a flood

	paused   atomic.Bool  // an operator paused the queue: claim nothing (queuepause.go)
	pauseGen atomic.Int64 // pause notifications received, so a slower poll does not undo one
	// claiming is held while paused is read and a claim made (claimUnlessPaused), so
	// that a pause, once setPaused has taken it after the flag, has no claim under way.
	claiming sync.Mutex
}

func newQueue(name string, max, batch int) *queue {
	return &queue{
		name:       name,
		max:        max,
		batch:      batch,
		claim:      claim.NewQueue(name),
		jobs:       make(chan claim.Claimed, max),
		slotFreed:  make(chan struct{}, 1),
		wake:       make(chan struct{}, 1),
		firstClaim: make(chan struct{}),
	}
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
