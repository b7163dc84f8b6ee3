package runtime

import (
	"context"
	"sync"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// A starting worker opens connections of its own (see ownPools). A new connection
// costs a new server process, which then loads the catalog entries of every table and
// index its first statements touch, before a cold first claim even starts, and that
// claim then takes about as long again (bench/README.md, "Worker start → first
// handler"). The
// application's pool usually has an idle connection that has done all of that already.
// So the worker runs its start-up statements (the pause check, its registry entry, the
// first claims) on the application's pool, and opens and warms its own connections
// after that: claims go to them once the first is ready.

// firstClaims waits until every queue has made its first claim (or decided not to,
// being paused), and says false if ctx ended first.
func firstClaims(ctx context.Context, queues []*queue) bool {
	for _, q := range queues {
		select {
		case <-q.firstClaim:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// starting returns where the worker's start-up statements go: the application's pool
// while the worker's own first connection is not ready and the application's pool has
// a connection idle (it never waits for one of the application's), the worker's own
// connections otherwise. A borrowed claim commits with the application's
// synchronous_commit, which is at least as durable as the worker's own.
func (w *Worker) starting() *db.Queries {
	select {
	case <-w.ownReady:
		return w.q
	default:
	}
	if w.pool.Stat().IdleConns() > 0 {
		return w.app
	}
	return w.q
}

// warmOwn opens the worker's first own connection, and the first for claims, with
// a claim of no jobs on each: that prepares the claim and loads the job table's and its
// indexes' catalog entries, and writes nothing. It closes ownReady when both are done,
// whether or not they worked: a failed warm-up only means the next claim opens the
// connection itself.
func (w *Worker) warmOwn(ctx context.Context, queues []*queue) {
	defer close(w.ownReady)
	ctx, cancel := context.WithTimeout(ctx, w.cfg.StatementTimeout)
	defer cancel()
	if len(queues) == 0 {
		return
	}
	// One queue's claim prepares the statement that every queue's claims share.
	q := queues[0]
	var wg sync.WaitGroup
	for _, on := range []*db.Queries{w.q, w.claims} {
		wg.Go(func() {
			if err := q.claim.Prepare(ctx, on, w.cfg.ID, w.cfg.LeaseDuration); err != nil {
				w.log.DebugContext(ctx, "jobc worker: warming its connection failed", "err", dberr.Describe(err))
			}
		})
	}
	wg.Wait()
}

// warmOutcomes opens the connection that records outcomes with a completion of no
// jobs, so that the first outcomes are not held up by a new server process.
func (w *Worker) warmOutcomes(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, w.cfg.StatementTimeout)
	defer cancel()
	_, err := w.outcomes.CompleteJobs(ctx, db.CompleteJobsParams{IDs: []int64{}, Owner: w.cfg.ID, Attempts: []int32{}})
	if err != nil {
		w.log.DebugContext(ctx, "jobc worker: warming the outcomes connection failed", "err", dberr.Describe(err))
	}
}
