// Package completer records the outcomes of a worker's attempts: in batches, one
// statement per kind of outcome and one transaction per batch, retried with backoff
// while the database fails and for as long as the jobs' leases last, and one job at a
// time when a job's row makes a batch fail.
package completer

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/runtime/internal/claim"
	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
	"github.com/jobc-dev/jobc/runtime/internal/lease"
	"github.com/jobc-dev/jobc/runtime/internal/poison"
)

// Outcome is what becomes of an attempt.
type Outcome uint8

const (
	Complete Outcome = iota
	Retry
	Fail
	Cancel
	Release  // shutdown: give the job back without counting the attempt
	Recorded // already recorded by the handler's transaction, or the lease was lost
	Snooze   // the handler returned Snooze: reschedule without counting the attempt
)

// Result is a finished attempt waiting to be recorded.
type Result struct {
	ID      int64
	Attempt int32
	// ClaimedAt is the job's available_at as its claim returned it. With ID and Attempt
	// it names the attempt for Retry, Snooze and Release, which give a later claim of the
	// job the same attempt number (a snooze or a release does not count the attempt).
	ClaimedAt time.Time
	Outcome   Outcome
	RunAt     time.Time // Retry, Snooze
	// Error is the attempt's error as the job's errors store it (JSON); Retry, Fail,
	// Cancel.
	Error []byte
	// Pass, for Complete, is 1 + the index into Config.Passing's kinds of the job's
	// kind when the worker kept the job's place for the next job of its flow key
	// (CompleteJobsPassingOn); 0 when it did not.
	Pass int32
	// Output, for Complete, is the job's result as stored (JSON) and OutputVersion
	// the version of its result contract; nil for a job type without a result.
	Output        []byte
	OutputVersion int32
}

// Config is what a Completer needs of its worker.
type Config struct {
	Queries *db.Queries // on the worker's connection for outcomes
	// Conn, if set, is the connection Queries runs on. A batch of several kinds of
	// outcome is then written in one transaction of it: one commit, and so one WAL
	// flush, for the whole batch, however its outcomes mix.
	Conn             Beginner
	Owner            string        // the worker's id, which holds the leases
	StatementTimeout time.Duration // per attempt to record a batch
	Held             *lease.Held   // the leases the worker holds; recorded attempts are forgotten
	Log              *slog.Logger
	// Recorded, if set, is called after a batch of outcomes is written that freed a
	// place (every batch but one whose completed jobs all passed their places on, see
	// Passing): the jobs in it no longer count against a concurrency limit.
	Recorded func()
	// Passing, if set, lets completed jobs with flow keys pass their places on.
	Passing *Passing
}

// Beginner starts a transaction: a pool or a connection.
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Passing is how completed jobs pass their places on to the next jobs of their flow
// keys (CompleteJobsPassingOn): the flow kinds that may, as jobc_claim_flow takes
// them, and where the jobs leased for them go.
type Passing struct {
	Kinds, Limits []string
	Min, Max      []int32
	Lease         time.Duration
	// Passed is called once for every batch with results whose places were kept
	// (Result.Pass), whether or not their outcomes could be recorded, with the jobs
	// leased for them. It returns the jobs it could not hand to a handler (the worker
	// is stopping): the completer gives those back to the queue at once.
	Passed func(kept []Result, leased []Leased) (untaken []Leased)
}

// Leased is a job leased to the worker for a completed job's place.
type Leased struct {
	Row  claim.Claimed
	Sent time.Time // when the statement that leased it was sent: its lease runs from no earlier
}

// Completer records the outcomes of a worker's attempts in batches.
type Completer struct {
	q                *db.Queries
	conn             Beginner
	owner            string
	statementTimeout time.Duration
	held             *lease.Held
	log              *slog.Logger
	recorded         func()

	passing  *Passing
	leased   []Leased  // by the batch being recorded
	passedAt time.Time // when a statement last looked for keys' next jobs from their start

	// retrying is set while a batch is written again after an error: the try that
	// failed may have committed before its reply was lost (lostLeases).
	retrying bool
}

// New returns a completer for cfg.
func New(cfg Config) *Completer {
	return &Completer{q: cfg.Queries, conn: cfg.Conn, owner: cfg.Owner, statementTimeout: cfg.StatementTimeout, held: cfg.Held, log: cfg.Log,
		recorded: cfg.Recorded, passing: cfg.Passing}
}

// passEvery is how often a statement passing places on looks for keys' next jobs from
// their start, as claim.FullClaimEvery is for claims: in between, from after the
// completed jobs, past fewer dead index entries.
const passEvery = claim.FullClaimEvery

const maxCompleteBatch = 1000

// How recording a batch of outcomes retries: a capped exponential backoff with jitter,
// each attempt bounded by Config.StatementTimeout, for as long as the jobs' leases last.
const (
	recordRetryInitial = 100 * time.Millisecond
	recordRetryMax     = 5 * time.Second
)

// Run records outcomes in batches. It takes whatever results are waiting
// when it is ready to write, so under load each round trip carries many outcomes and at
// low load a single outcome is written at once, without a timer adding latency. It
// returns when results is closed and everything is written, or given up on because ctx
// is done (see recordWithRetry).
func (c *Completer) Run(ctx context.Context, results <-chan Result) {
	batch := make([]Result, 0, maxCompleteBatch)
	for r := range results {
		batch = append(batch[:0], r)
	drain:
		for len(batch) < maxCompleteBatch {
			select {
			case r, ok := <-results:
				if !ok {
					break drain
				}
				batch = append(batch, r)
			default:
				break drain
			}
		}
		if c.recordWithRetry(ctx, batch) && c.recorded != nil {
			c.recorded()
		}
	}
}

// recordWithRetry writes a batch, retrying with backoff while the database fails or
// is unreachable. It stops retrying an outcome once the job's lease has run out: the
// rescuer owns the job then and hands it out again, and a late write would be ignored
// anyway. It also gives up when ctx is done, which happens only when the worker stops
// and its drain time is over; those jobs are rescued the same way. Either way the job
// runs again, as delivery at least once allows, and the worker says so at Warn.
//
// It says whether the batch freed a place: whether a job in it did not pass its place
// on (Passing).
func (c *Completer) recordWithRetry(ctx context.Context, batch []Result) (freed bool) {
	defer c.held.Forget(idsAttempts(batch))
	defer func() { freed = c.pass(ctx, batch) }()
	pending := make([]Result, 0, len(batch))
	for _, r := range batch {
		if r.Outcome != Recorded {
			pending = append(pending, r)
		}
	}
	var lastErr error // the last error of the database, rather than a cancellation
	defer func() { c.retrying = false }()
	for delay := recordRetryInitial; len(pending) > 0; delay = min(2*delay, recordRetryMax) {
		var err error
		pending, err = c.recordOnce(ctx, pending)
		if err == nil {
			return
		}
		c.retrying = true
		if ctx.Err() != nil {
			if lastErr == nil {
				lastErr = err
			}
			c.gaveUp(ctx, pending, "the worker is stopping and its time to record outcomes is over", lastErr)
			return
		}
		lastErr = err
		pending = c.dropExpired(ctx, pending, lastErr)
		if len(pending) == 0 {
			return
		}
		wait := min(jitter(delay), time.Until(latestLease(c.held, pending)))
		c.log.ErrorContext(ctx, "jobc worker: recording outcomes failed; retrying",
			"jobs", len(pending), "err", dberr.Describe(err), "in", wait.String())
		if !sleep(ctx, wait) {
			c.gaveUp(ctx, pending, "the worker is stopping and its time to record outcomes is over", lastErr)
			return
		}
		pending = c.dropExpired(ctx, pending, lastErr)
	}
	return freed // set by pass
}

// pass hands the jobs leased for the kept places of batch to the worker, and gives
// back at once those it cannot take. It says whether a place was freed: a job of batch
// kept none, or a kept one took no job.
func (c *Completer) pass(ctx context.Context, batch []Result) (freed bool) {
	leased := c.leased
	c.leased = nil
	var kept []Result
	for _, r := range batch {
		if r.Pass > 0 {
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 {
		return true
	}
	untaken := c.passing.Passed(kept, leased)
	freed = len(kept) < len(batch) || len(leased)-len(untaken) < len(kept)
	if len(untaken) == 0 {
		return freed
	}
	back := make([]Result, len(untaken))
	for i, l := range untaken {
		back[i] = Result{ID: l.Row.ID, Attempt: l.Row.Attempt, ClaimedAt: l.Row.AvailableAt, Outcome: Release}
	}
	if _, err := c.recordOnce(context.WithoutCancel(ctx), back); err != nil {
		ids, _ := idsAttempts(back)
		c.log.WarnContext(ctx, "jobc worker: could not give back jobs leased as the worker stopped; they run once their leases expire",
			"job_ids", ids, "err", dberr.Describe(err))
	}
	return freed
}

// recordOnce makes one attempt, bounded by Config.StatementTimeout, and returns the
// results it did not get to write.
func (c *Completer) recordOnce(ctx context.Context, pending []Result) ([]Result, error) {
	ctx, cancel := context.WithTimeout(ctx, c.statementTimeout)
	defer cancel()
	return c.record(ctx, pending)
}

// dropExpired returns the results whose leases still last, and logs the others.
func (c *Completer) dropExpired(ctx context.Context, pending []Result, lastErr error) []Result {
	now := time.Now()
	live := pending[:0:0]
	var expired []Result
	for _, r := range pending {
		if until, ok := c.held.Until(r.ID, r.Attempt); ok && now.Before(until) {
			live = append(live, r)
		} else {
			expired = append(expired, r)
		}
	}
	if len(expired) > 0 {
		c.gaveUp(ctx, expired, "their leases have expired, so the rescuer owns the jobs now", lastErr)
	}
	return live
}

// gaveUp logs outcomes that will not be recorded.
func (c *Completer) gaveUp(ctx context.Context, rs []Result, why string, lastErr error) {
	ids, _ := idsAttempts(rs)
	c.log.WarnContext(ctx, "jobc worker: stopped retrying outcomes: "+why+"; the jobs run again once rescued",
		"job_ids", ids, "err", dberr.Describe(lastErr))
}

// latestLease is the latest lease expiry among rs: retrying past it is pointless.
func latestLease(running *lease.Held, rs []Result) time.Time {
	var latest time.Time
	for _, r := range rs {
		if until, ok := running.Until(r.ID, r.Attempt); ok && until.After(latest) {
			latest = until
		}
	}
	return latest
}

// jitter spreads d over [0.8d, 1.2d), so that workers cut off together do not all
// retry at the same instant.
func jitter(d time.Duration) time.Duration {
	return d*8/10 + rand.N(d*4/10)
}

// record writes the outcomes of rs, one statement per kind of outcome, all in one
// transaction when rs holds several kinds (recordTogether). On error it returns the
// results not yet written. A statement that fails because of one job's row is run
// again for each job of its group on its own, and a job whose own statement fails too
// is poisoned (package poison), so that the outcomes of the others are recorded.
func (c *Completer) record(ctx context.Context, rs []Result) ([]Result, error) {
	// Groups are only read. Most batches hold one kind of outcome (every job
	// completed): then rs is the group, not a copy of it grown append by append.
	by := map[Outcome][]Result{}
	if len(rs) > 0 && !slices.ContainsFunc(rs, func(r Result) bool { return r.Outcome != rs[0].Outcome }) {
		by[rs[0].Outcome] = rs
	} else {
		for _, r := range rs {
			by[r.Outcome] = append(by[r.Outcome], r)
		}
	}
	order := []Outcome{Complete, Fail, Cancel, Retry, Snooze, Release}
	if len(by) > 1 && c.conn != nil {
		err := c.recordTogether(ctx, by, order)
		if err == nil {
			return nil, nil
		}
		if !dberr.RowFault(err) {
			return rs, err // nothing was written
		}
		// A job's row failed its statement, and the transaction with it: the kinds
		// are written one at a time below, where that job is found and poisoned.
	}
	// left collects what is still to write once a statement fails; the kinds written
	// before it stay written.
	left := func(from int) []Result {
		var out []Result
		for _, o := range order[from:] {
			out = append(out, by[o]...)
		}
		return out
	}
	for i, o := range order {
		group := by[o]
		if len(group) == 0 {
			continue
		}
		done, err := c.recordGroup(ctx, c.q, o, group)
		if err != nil && dberr.RowFault(err) {
			var rest []Result
			done, rest, err = c.recordAlone(ctx, o, group, err)
			if err != nil {
				return append(rest, left(i+1)...), err
			}
		}
		if err != nil {
			return left(i), err
		}
		ids, _ := idsAttempts(group)
		c.lostLeases(ctx, o.String(), ids, done)
	}
	return nil, nil
}

// recordTogether writes the outcomes of by, kind after kind in order, in one
// transaction: the batch costs one commit, and so one WAL flush, however its outcomes
// mix. On error nothing is written, and the jobs a completion leased for kept places
// are forgotten with the rest.
func (c *Completer) recordTogether(ctx context.Context, by map[Outcome][]Result, order []Outcome) error {
	leased, passedAt := len(c.leased), c.passedAt
	done := make(map[Outcome][]int64, len(by))
	err := pgx.BeginFunc(ctx, c.conn, func(tx pgx.Tx) error {
		q := c.q.WithTx(tx)
		for _, o := range order {
			if group := by[o]; len(group) > 0 {
				d, err := c.recordGroup(ctx, q, o, group)
				if err != nil {
					return fmt.Errorf("record the %s jobs: %w", o, err)
				}
				done[o] = d
			}
		}
		return nil
	})
	if err != nil {
		c.leased, c.passedAt = c.leased[:leased], passedAt
		return err
	}
	for _, o := range order {
		if group := by[o]; len(group) > 0 {
			ids, _ := idsAttempts(group)
			c.lostLeases(ctx, o.String(), ids, done[o])
		}
	}
	return nil
}

// String says what recording the outcome does, for the logs.
func (o Outcome) String() string {
	switch o {
	case Complete:
		return "completed"
	case Fail:
		return "failed"
	case Cancel:
		return "cancelled"
	case Retry:
		return "retried"
	case Snooze:
		return "snoozed"
	case Release:
		return "released"
	case Recorded:
		return "recorded"
	}
	return fmt.Sprintf("outcome(%d)", uint8(o))
}

// recordGroup writes the outcomes of group, all of outcome o, with one statement of q,
// and returns the ids it recorded.
func (c *Completer) recordGroup(ctx context.Context, q *db.Queries, o Outcome, group []Result) ([]int64, error) {
	ids, attempts := idsAttempts(group)
	owner := c.owner
	switch o {
	case Complete:
		if c.passing != nil && slices.ContainsFunc(group, func(r Result) bool { return r.Pass > 0 }) {
			return c.completePassingOn(ctx, q, group)
		}
		results, versions := outputs(group)
		return q.CompleteJobs(ctx, db.CompleteJobsParams{IDs: ids, Attempts: attempts, Owner: owner, Results: results, ResultVersions: versions})
	case Fail, Cancel:
		state := db.JobcStateFailed
		if o == Cancel {
			state = db.JobcStateCancelled
		}
		return q.FinishJobs(ctx, db.FinishJobsParams{IDs: ids, Attempts: attempts, Errors: errorsJSON(group), Owner: owner, State: state})
	case Retry:
		return q.RetryJobs(ctx, db.RetryJobsParams{IDs: ids, Attempts: attempts, ClaimedAts: claimedAts(group), AvailableAts: runAts(group), Errors: errorsJSON(group), Owner: owner})
	case Snooze: // a retry that records no error and does not count the attempt
		return q.RetryJobs(ctx, db.RetryJobsParams{IDs: ids, Attempts: attempts, ClaimedAts: claimedAts(group), AvailableAts: runAts(group), Snooze: true, Owner: owner})
	case Release:
		_, err := q.ReleaseJobs(ctx, db.ReleaseJobsParams{IDs: ids, Attempts: attempts, ClaimedAts: claimedAts(group), Owner: owner})
		return ids, err // a release of a job rescued meanwhile has nothing to say
	}
	return nil, fmt.Errorf("jobc worker: no statement records outcome %d", o)
}

// completePassingOn completes group, whose kept places pass on to the next jobs of
// their keys, and keeps the jobs leased for them for pass.
func (c *Completer) completePassingOn(ctx context.Context, q *db.Queries, group []Result) ([]int64, error) {
	ids, attempts := idsAttempts(group)
	kinds := make([]int32, len(group))
	for i, r := range group {
		kinds[i] = r.Pass
	}
	p := c.passing
	sent := time.Now()
	fromStart := sent.Sub(c.passedAt) >= passEvery
	results, versions := outputs(group)
	rows, err := q.CompleteJobsPassingOn(ctx, db.CompleteJobsPassingOnParams{
		IDs: ids, Attempts: attempts, Owner: c.owner, PassKinds: kinds, FromStart: fromStart,
		Results: results, ResultVersions: versions,
		Kinds: p.Kinds, Limits: p.Limits, MinVersions: p.Min, MaxVersions: p.Max, LeaseSeconds: p.Lease.Seconds(),
	})
	if err != nil {
		return nil, err
	}
	if fromStart {
		c.passedAt = sent
	}
	var done []int64
	for _, r := range rows {
		if !r.Passed {
			done = append(done, r.ID)
			continue
		}
		c.leased = append(c.leased, Leased{Sent: sent, Row: claim.Claimed{AtLimit: r.AtLimit, ClaimJobsRow: db.ClaimJobsRow{
			ID: r.ID, Kind: r.Kind, Queue: r.Queue, Priority: r.Priority, PayloadVersion: r.PayloadVersion,
			Payload: r.Payload, Metadata: r.Metadata, Attempt: r.Attempt, MaxAttempts: r.MaxAttempts,
			CreatedAt: r.CreatedAt, AvailableAt: r.AvailableAt, WaitedSeconds: r.WaitedSeconds,
		}}})
	}
	return done, nil
}

// recordAlone writes the outcomes of group one job at a time, after the statement for
// the whole group failed with batchErr, a row's fault. A job whose own statement fails
// with a row's fault is poisoned, and counts as recorded if that ended it. On any
// other error it returns the results not yet written.
func (c *Completer) recordAlone(ctx context.Context, o Outcome, group []Result, batchErr error) (done []int64, rest []Result, err error) {
	c.log.WarnContext(ctx, "jobc worker: recording outcomes failed because of a job's row; recording them one by one",
		"jobs", len(group), "outcome", o.String(), "err", dberr.Describe(batchErr))
	owner := c.owner
	for j, r := range group {
		d, err := c.recordGroup(ctx, c.q, o, group[j:j+1])
		switch {
		case err == nil:
			done = append(done, d...)
		case dberr.RowFault(err):
			if poison.Job(ctx, c.log, c.q, r.ID, &owner, r.Attempt, "recording the job's outcome ("+o.String()+")", err) {
				done = append(done, r.ID)
			}
		default:
			return done, group[j:], err
		}
	}
	return done, nil, nil
}

// lostLeases logs the attempts whose outcome was not recorded because this worker no
// longer held their lease: it expired (the worker was paused or cut off) and the job was
// rescued, so another attempt runs or ran elsewhere. On a retry it may as well be that
// the try whose reply was lost recorded the outcome, and the log says so rather than
// report a rescue that did not happen.
func (c *Completer) lostLeases(ctx context.Context, outcome string, asked, done []int64) {
	if len(done) == len(asked) {
		return
	}
	msg := "jobc worker: an outcome was not recorded: the job's lease expired before it finished, and it was rescued"
	if c.retrying {
		msg = "jobc worker: an outcome was not recorded by its retry: the try whose reply was lost recorded it, or the job's lease expired and it was rescued"
	}
	recorded := make(map[int64]bool, len(done))
	for _, id := range done {
		recorded[id] = true
	}
	for _, id := range asked {
		if !recorded[id] {
			c.log.WarnContext(ctx, msg, "job_id", id, "outcome", outcome)
		}
	}
}

func idsAttempts(rs []Result) ([]int64, []int32) {
	ids := make([]int64, len(rs))
	attempts := make([]int32, len(rs))
	for i, r := range rs {
		ids[i], attempts[i] = r.ID, r.Attempt
	}
	return ids, attempts
}

func runAts(rs []Result) []time.Time {
	at := make([]time.Time, len(rs))
	for i, r := range rs {
		at[i] = r.RunAt
	}
	return at
}

func claimedAts(rs []Result) []time.Time {
	at := make([]time.Time, len(rs))
	for i, r := range rs {
		at[i] = r.ClaimedAt
	}
	return at
}

func errorsJSON(rs []Result) []json.RawMessage {
	out := make([]json.RawMessage, len(rs))
	for i, r := range rs {
		out[i] = r.Error
	}
	return out
}

// sleep waits for d or until ctx is done, and reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// outputs returns the results of group's jobs, and their versions, by position: nil
// for both when no job of group has one, so that a batch without results passes NULL
// (jobc_finish then looks nothing up).
func outputs(group []Result) (results []json.RawMessage, versions []int32) {
	if !slices.ContainsFunc(group, func(r Result) bool { return r.Output != nil }) {
		return nil, nil
	}
	results, versions = make([]json.RawMessage, len(group)), make([]int32, len(group))
	for i, r := range group {
		results[i], versions[i] = r.Output, r.OutputVersion
	}
	return results, versions
}
