package runtime

import (
	"context"
	"errors"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// How a drained queue waits for work. Normally it sleeps: it registers in
// jobc_sleepers, so every enqueue notifies it, and picks new jobs up within a round
// trip. When notifications come faster than floodNotifications per floodWindow, the
// worker stops being notified for floodPoll and polls every floodPollInterval instead:
// a steady stream of enqueues then sends a handful of notifications a second rather
// than one per transaction, and enqueueing transactions do not queue at commit for
// PostgreSQL's notification lock.
const (
	floodNotifications = 5
	floodWindow        = 100 * time.Millisecond
	floodPoll          = time.Second
	floodPollInterval  = 10 * time.Millisecond
)

// fetchLoop claims jobs whenever the queue has free slots and may have work: after a
// claim that filled every slot asked for (more is likely waiting), after a wake-up,
// and on a timer. A claim that came back short means the queue is drained: the worker
// then sleeps until notified (or until Config.PollInterval), or polls quickly for a
// while if notifications flood in (see floodNotifications). It closes q.jobs when ctx
// is done.
func (w *Worker) fetchLoop(ctx context.Context, q *queue) {
	defer func() {
		q.jobsMu.Lock()
		defer q.jobsMu.Unlock()
		q.jobsClosed = true
		close(q.jobs)
	}()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	rearm := func(d time.Duration) {
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(d)
	}
	needFetch, asleep := true, false
	var pollUntil, windowStart time.Time
	var windowBase int64
	firstDone := false
	first := func() {
		if !firstDone {
			firstDone = true
			close(q.firstClaim)
		}
	}
	defer func() {
		first()
		if asleep {
			w.setAsleep(context.WithoutCancel(ctx), q, false)
		}
	}()
	for {
		if ctx.Err() != nil {
			return
		}
		free := q.max - int(q.active.Load())
		// A paused queue claims nothing; needFetch stays set, and the wake-up that
		// resuming it sends claims at once.
		if needFetch && free > 0 {
			asked := min(free, q.batch)
			if n, claimed, err := w.claimUnlessPaused(ctx, q, asked); claimed {
				first()
				switch {
				case err != nil:
					// Logged even as the worker stops: the claim ran to its end regardless
					// (claim), so its error is the database's, and a claim that timed out
					// after the server committed it leaves jobs for the rescuer.
					w.log.ErrorContext(ctx, "jobc worker: claim failed; retrying at the next poll", "queue", q.name, "err", dberr.Describe(err))
					needFetch = false
					rearm(w.pollWait(q))
				case n == asked:
					// Busy: the next claim follows a freed slot. The sleeper row stays,
					// rather than churn with every full claim; if enqueues notify faster
					// than it matters, the flood check below removes it.
					continue
				case time.Now().Before(pollUntil):
					needFetch = false
					rearm(floodPollInterval)
				case !asleep:
					// Sleep, and claim once more: a job enqueued before the sleeper row
					// was visible to its transaction notified nobody.
					asleep = w.setAsleep(ctx, q, true)
					if !asleep { // could not register: poll
						needFetch = false
						rearm(w.cfg.PollInterval)
					}
					continue
				default:
					needFetch = false
					rearm(w.pollWait(q))
				}
			}
		}
		first() // claimed, or paused
		select {
		case <-ctx.Done():
			return
		case <-q.slotFreed:
		case <-q.wake:
			needFetch = true
			now, count := time.Now(), q.notified.Load()
			if now.Sub(windowStart) > floodWindow {
				windowStart, windowBase = now, count
			} else if count-windowBase >= floodNotifications && asleep {
				asleep = w.setAsleep(ctx, q, false)
				pollUntil = now.Add(floodPoll)
			}
		case <-timer.C:
			needFetch = true
		}
	}
}

// pollWait is how long a drained queue waits for its next claim unless notified: the
// poll interval, or less when a rate window that kept jobs waiting opens sooner.
func (w *Worker) pollWait(q *queue) time.Duration {
	wait := w.cfg.PollInterval
	if at := q.claim.OpensAt(); !at.IsZero() {
		wait = min(wait, max(time.Until(at), time.Millisecond))
	}
	return wait
}

// claim leases up to asked jobs and hands them to the handler goroutines. The claim
// may take at most Config.StatementTimeout: a claim that times out after the server
// committed it leaves its jobs leased to nobody who knows, and the rescuer returns them
// once the lease runs out, with the attempt counted. A stop does not cut a claim short,
// for the same reason: the server may have committed it as the stop came, and the
// worker would then exit holding leases it never knew of (TestStopDuringClaims). So a
// claim under way when the worker is asked to stop finishes, and its jobs run in the
// shutdown grace or are given back without counting the attempt; fetchLoop starts no
// claim after the stop.
func (w *Worker) claim(ctx context.Context, q *queue, asked int) (int, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.cfg.StatementTimeout)
	defer cancel()
	sent := time.Now()
	rows, err := q.claim.Claim(ctx, w.claimsOn(), w.log, w.cfg.ID, w.cfg.LeaseDuration, asked)
	w.status.claimed(err)
	// Jobs leased before an error are handed out all the same: dropped, they would
	// wait for the rescuer.
	for _, row := range rows {
		q.active.Add(1)
		w.running.Add(row.ID, row.Attempt, sent.Add(w.cfg.LeaseDuration))
		q.jobs <- row // never blocks: at most q.max jobs are active
	}
	if len(rows) > 0 {
		w.emit(ctx, Event{Kind: EventClaim, Queue: q.name, Count: len(rows)})
	}
	return len(rows), err
}

// claimUnlessPaused claims up to asked jobs of q (see claim) unless q is paused, and
// says whether it claimed. It reads the flag and claims under
// q.claiming, which setPaused waits for, so that no claim is under way once a pause
// is logged.
func (w *Worker) claimUnlessPaused(ctx context.Context, q *queue, asked int) (n int, claimed bool, err error) {
	q.claiming.Lock()
	defer q.claiming.Unlock()
	if q.paused.Load() {
		return 0, false, nil
	}
	n, err = w.claim(ctx, q, asked)
	return n, true, err
}

// claimsOn is where the next claim runs. While the worker starts, that is where its
// start-up statements go (starting); then it is claims, whose connections use generic
// plans, so that no claim is planned again. A custom plan of ClaimJobs costs about as
// much to make as the claim of the job or two a wake-up brings costs to run, and a
// custom plan of ClaimJobsAfter a good part of what a claim of a full batch costs;
// PostgreSQL keeps making them, since they look cheaper than the generic plans. Both
// statements take their ids through an array, so that their generic plans walk the
// claim index as the custom ones do (queries/execution.sql). Generic plans made idle
// pickups and burn-downs faster (bench/README.md, the 2026-12-01 night results). The
// generic plans' cost estimates grow with the table, which is why claims run without
// JIT (dbconn.NoJIT).
func (w *Worker) claimsOn() *db.Queries {
	if on := w.starting(); on != w.q {
		return on
	}
	return w.claims
}

// setAsleep adds or removes the worker's jobc_sleepers row for q and returns the state
// it is now in. On failure the worker stays awake: it polls, so nothing is missed.
func (w *Worker) setAsleep(ctx context.Context, q *queue, asleep bool) bool {
	ctx, cancel := context.WithTimeout(ctx, w.cfg.StatementTimeout)
	defer cancel()
	var err error
	if asleep {
		err = w.q.Sleep(ctx, db.SleepParams{Queue: q.name, Worker: w.cfg.ID})
	} else {
		err = w.q.Wake(ctx, db.WakeParams{Queue: q.name, Worker: w.cfg.ID})
	}
	if err != nil {
		if !errors.Is(ctx.Err(), context.Canceled) {
			w.log.WarnContext(ctx, "jobc worker: could not record whether it waits for notifications; polling instead", "queue", q.name, "err", dberr.Describe(err))
		}
		return false
	}
	return asleep
}
