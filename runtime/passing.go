package runtime

import (
	"context"

	"github.com/jobc-dev/jobc/runtime/internal/completer"
)

// passing is the flow kinds of a worker whose completed jobs pass their places on to
// the next jobs of their keys (CompleteJobsPassingOn): a handler that completes such a
// job, leased while its key was at its limit (claim.Claimed.AtLimit), keeps its place
// until the outcome is recorded, and the job leased in the same transaction runs in
// it. Jobs of keys below their limits free their places at once, for claims that run
// beside the completer's statements. A key at its concurrency limit so stays there from one job
// to the next, and its next job costs no claim: no walk of the keys, no key lock.
// Kinds that are fair (a key would keep its places while others wait their turn),
// sequences, rate-limited kinds and kinds of queues with limits of their own take
// every place through jobc_claim_flow.
type passing struct {
	kinds, limits []string
	min, max      []int32
	queues        []*queue
	index         map[string]int32 // by kind or alias: 1 + its index in the arrays
}

// passesPlacesOn says whether jt's completed jobs pass their places on (see passing):
// its spec limits concurrency alone. An operator's rate or a queue's limits in force
// stop it in the database (CompleteJobsPassingOn).
func (jt *JobType) passesPlacesOn() bool {
	f := jt.Flow
	return f != nil && jt.QueueFlow == nil && f.Concurrency > 0 && f.Rate.IsZero() && !f.Fair && !f.Sequence
}

func (p *passing) add(q *queue, name string, jt *JobType) {
	if p.index == nil {
		p.index = map[string]int32{}
	}
	p.kinds = append(p.kinds, name)
	p.limits = append(p.limits, jt.Kind)
	p.min = append(p.min, int32(jt.minVersion()))
	p.max = append(p.max, int32(jt.maxVersion()))
	p.queues = append(p.queues, q)
	p.index[name] = int32(len(p.kinds))
}

// passingConfig is the completer's side of passing; nil if no kind passes places on.
func (w *Worker) passingConfig(ctx context.Context) *completer.Passing {
	p := &w.passing
	if len(p.kinds) == 0 {
		return nil
	}
	return &completer.Passing{
		Kinds: p.kinds, Limits: p.limits, Min: p.min, Max: p.max, Lease: w.cfg.LeaseDuration,
		Passed: func(kept []completer.Result, leased []completer.Leased) []completer.Leased {
			return w.passed(ctx, kept, leased)
		},
	}
}

// passed runs the jobs leased for kept places in those places, and frees the places
// nothing took. A queue whose fetch loop has stopped takes no job: those are returned
// (untaken) for the completer to give back.
func (w *Worker) passed(ctx context.Context, kept []completer.Result, leased []completer.Leased) (untaken []completer.Leased) {
	p := &w.passing
	places := map[*queue]int{}
	for _, r := range kept {
		places[p.queues[r.Pass-1]]++
	}
	for q, n := range places {
		taken := 0
		q.jobsMu.Lock()
		for _, l := range leased {
			if l.Row.Queue != q.name {
				continue
			}
			if q.jobsClosed || taken == n { // taken == n cannot happen: a key's next jobs are at most its completed ones
				untaken = append(untaken, l)
				continue
			}
			taken++
			w.running.Add(l.Row.ID, l.Row.Attempt, l.Sent.Add(w.cfg.LeaseDuration))
			q.jobs <- l.Row // never blocks: the place was kept, so at most q.max jobs are active
		}
		q.jobsMu.Unlock()
		if taken > 0 {
			w.emit(ctx, Event{Kind: EventClaim, Queue: q.name, Count: taken})
		}
		if free := n - taken; free > 0 {
			q.active.Add(-int32(free))
			signal(q.slotFreed)
		}
	}
	return untaken
}
