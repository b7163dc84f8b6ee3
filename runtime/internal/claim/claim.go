// Package claim is how a worker leases jobs of one queue: the claim statement over the
// (kind, version) pairs it decodes, where a busy queue's next claim starts, and the
// fallback to one job at a time when a job's row makes the claim fail.
//
// A claim marks its jobs running, which leaves their entries in the claim index dead
// until VACUUM removes them, and every later claim steps over all of them again: with
// a large backlog, stepping over them took a large share of the server's CPU in a
// burn-down, growing with the backlog (bench/README.md, "Busy claims start after the
// last job they claimed"). So while a queue is busy (its claims coming back full),
// the claim of each (kind, version) pair starts after the last job of that pair it
// claimed, the pair's hint: it reads the jobs after the hint, and the jobs of each
// priority more urgent than the hint's whole. What it skips are
// the jobs of the hint's priority that sort before it: the dead entries, and any job
// that became available since with an earlier available_at (a scheduled job or a
// retry whose time had come, a job from a transaction that began before the hint's job
// was claimed) or that another transaction held when the hint's claim ran. Those wait
// for the next claim that reads every pair from its start: one runs at most
// FullClaimEvery after the last one ended, and before a queue is taken for drained.
// Priority is never inverted.
//
// A session that holds a snapshot open (a long report, a stuck transaction, a
// replication slot) keeps every entry a claim left dead since it began, and the index
// cannot mark them dead either: a claim from the start then steps over all of them,
// and a queue that is not busy (a short queue, its jobs claimed as they come) claimed
// from the start every time. At 2,000 jobs/s under a 4-minute snapshot that made
// pickup p99 climb from 13 ms to a median of 659 ms and peaks of 5 s
// (bench/README.md, "Long horizon"). So when a claim from the start took at least
// ExpensiveFullClaim, a queue starts from its hints whether it is busy or not, and
// claims from the start again only FullClaimShare times that claim's duration after
// it ended (at least FullClaimEvery), not after every short claim: the jobs that sort
// before a hint wait that long at most, and only while claims from the start are
// that slow. The claims of flow kinds (jobc_claim_flow), which start each key after
// its hint, follow the same rule (fullClaims).
package claim

import (
	"context"
	"log/slog"
	"math"
	"slices"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
	"github.com/jobc-dev/jobc/runtime/internal/poison"
)

// FullClaimEvery is how long after a claim that read every pair from its start a
// busy queue's claims start from their hints (see the package doc); completed jobs
// passing their places on look for their keys' next jobs the same way
// (runtime/internal/completer).
const FullClaimEvery = 100 * time.Millisecond

// ExpensiveFullClaim is how long a claim from the start of every pair may take before
// the queue's claims start from their hints even when it is not busy (see the package
// doc); such a claim takes well under a millisecond on a table whose dead entries the
// index has marked. FullClaimShare bounds the share of a queue's time such claims
// take: the next one runs FullClaimShare times the last one's duration after it.
const (
	ExpensiveFullClaim = 5 * time.Millisecond
	FullClaimShare     = 20
)

// claimHint is where a busy queue's next claim of one pair starts: the claim order key
// of the last job of the pair it claimed.
type claimHint struct {
	set         bool
	priority    int16
	availableAt time.Time
	id          int64
}

// after says whether a job's claim order key sorts after h's.
func (h claimHint) after(priority int16, availableAt time.Time, id int64) bool {
	if priority != h.priority {
		return priority > h.priority
	}
	if !availableAt.Equal(h.availableAt) {
		return availableAt.After(h.availableAt)
	}
	return id > h.id
}

// Queue is one queue's claims: the (kind or alias, payload version) pairs the worker
// decodes, one per version, whose ranges of the claim index a claim reads each on its
// own, and what the claims remember between them. One goroutine claims with it at a
// time (a queue's fetch loop).
type Queue struct {
	name     string
	kinds    []string
	versions []int32

	hints []claimHint // per pair, as kinds and versions
	busy  bool        // the last claim came back full
	full  fullClaims  // the last claim that read every pair from its start

	flow      flowKinds
	flowFirst bool      // the next claim takes flow kinds before the others
	opensAt   time.Time // when a full rate window opens, from the last flow claim
}

// flowHint is where a busy queue's next claim of one key of a flow kind starts: the
// claim order key of the last job of the key it claimed (see claimHint).
type flowHint struct {
	kind     int32 // 1-based index into the flow kinds, as jobc_claim_flow takes it
	key      string
	priority int16
	at       time.Time
	id       int64
}

// flowKinds are the kinds (or aliases) of a queue whose jobs have flow keys and are
// claimed by jobc_claim_flow, as its array arguments.
type flowKinds struct {
	kinds, limits []string
	min, max      []int32
	after         []string // per kind, the key the last claim of it ended with ("": none)

	hints []flowHint // the keys the last claim took jobs of
	busy  bool       // the last claim came back full
	full  fullClaims // the last claim that read every key from its start
}

// fullClaims is when the last claim that read every pair (or key) from its start
// ended, and how long it took: when the next one is due, and whether claims start
// from their hints until then (see Queue.Hinted).
type fullClaims struct {
	at   time.Time
	took time.Duration
}

// hinted says whether a claim at now starts from the hints: while the claims are
// busy, or those from the start are expensive, for every() after the last of those.
func (c fullClaims) hinted(busy bool, now time.Time) bool {
	return (busy || c.expensive()) && now.Sub(c.at) < c.every()
}

// expensive says whether the last claim from the start took ExpensiveFullClaim or more.
func (c fullClaims) expensive() bool { return c.took >= ExpensiveFullClaim }

// every is how long after a claim from the start the claims start from their hints:
// FullClaimEvery, or FullClaimShare times that claim's duration if more.
func (c fullClaims) every() time.Duration { return max(FullClaimEvery, FullClaimShare*c.took) }

// ended records a claim from the start that began at began and ends now. The window
// starts when the claim ends: a claim from the start that walks a long way must not
// leave no time for the hinted claims it pays for.
func (c *fullClaims) ended(began time.Time) {
	c.at = time.Now()
	c.took = c.at.Sub(began)
}

// NewQueue returns the claims of the queue name, with no pairs yet.
func NewQueue(name string) *Queue { return &Queue{name: name} }

// AddKind adds the pairs of kind (or an alias) with the payload versions
// minVersion..maxVersion.
func (q *Queue) AddKind(kind string, minVersion, maxVersion int) {
	for v := minVersion; v <= maxVersion; v++ {
		q.kinds = append(q.kinds, kind)
		q.versions = append(q.versions, int32(v))
		q.hints = append(q.hints, claimHint{})
	}
}

// AddFlowKind adds kind (or an alias), whose jobs have flow keys, with the payload
// versions minVersion..maxVersion; limit is the job type whose limits apply.
func (q *Queue) AddFlowKind(kind, limit string, minVersion, maxVersion int) {
	f := &q.flow
	f.kinds = append(f.kinds, kind)
	f.limits = append(f.limits, limit)
	f.min = append(f.min, int32(minVersion))
	f.max = append(f.max, int32(maxVersion))
	f.after = append(f.after, "")
}

// HasFlowKinds says whether q has kinds with flow control.
func (q *Queue) HasFlowKinds() bool { return len(q.flow.kinds) > 0 }

// FlowKinds returns the kinds (or aliases) added with AddFlowKind.
func (q *Queue) FlowKinds() []string { return q.flow.kinds }

// OpensAt is when a rate window that kept jobs of q waiting at its last claim opens;
// zero if none did.
func (q *Queue) OpensAt() time.Time { return q.opensAt }

// Claimed is a job a claim leased. AtLimit says the job's key is at its concurrency
// limit with it (jobc_claim_flow): the worker keeps the job's place when it completes,
// for the next job of the key (runtime/internal/completer, Passing).
type Claimed struct {
	db.ClaimJobsRow
	AtLimit bool
}

// Claim leases up to asked jobs of q to owner for lease, through qs. A claim that
// fails because of one job's row is made again one job at a time, and a job whose own
// claim fails is poisoned (logged to log), so that the others are claimed. It returns
// the jobs leased before any error as well as the error: dropped, they would wait for
// the rescuer.
//
// A queue with both kinds with flow control and kinds without takes them in turn: one
// claim fills up from the flow kinds first, the next from the others, so that neither
// keeps the other waiting.
func (q *Queue) Claim(ctx context.Context, qs *db.Queries, log *slog.Logger, owner string, lease time.Duration, asked int) ([]Claimed, error) {
	if len(q.flow.kinds) == 0 {
		return q.claimPlain(ctx, qs, log, owner, lease, asked)
	}
	if len(q.kinds) == 0 {
		return q.claimFlow(ctx, qs, log, owner, lease, asked)
	}
	first, second := q.claimPlain, q.claimFlow
	if q.flowFirst {
		first, second = second, first
	}
	q.flowFirst = !q.flowFirst
	rows, err := first(ctx, qs, log, owner, lease, asked)
	if err != nil || len(rows) == asked {
		return rows, err
	}
	more, err := second(ctx, qs, log, owner, lease, asked-len(rows))
	return append(rows, more...), err
}

// claimPlain claims jobs of the kinds without flow control (Claim).
func (q *Queue) claimPlain(ctx context.Context, qs *db.Queries, log *slog.Logger, owner string, lease time.Duration, asked int) ([]Claimed, error) {
	base := db.ClaimJobsParams{Owner: owner, LeaseSeconds: lease.Seconds()}
	rows, err := q.claimJobs(ctx, qs, base, asked)
	if err != nil && dberr.RowFault(err) {
		var alone []db.ClaimJobsRow
		alone, err = q.claimAlone(ctx, qs, log, base, asked-len(rows))
		rows = append(rows, alone...)
	}
	out := make([]Claimed, len(rows))
	for i, r := range rows {
		out[i] = Claimed{ClaimJobsRow: r}
	}
	return out, err
}

// claimFlow claims jobs of the kinds with flow control (jobc_claim_flow): of a kind
// whose only limit is its concurrency, the keys of its first jobs in claim order
// first, then key by key. It remembers where each kind's walk of its keys stopped,
// the keys' hints, and when a full rate window opens.
func (q *Queue) claimFlow(ctx context.Context, qs *db.Queries, _ *slog.Logger, owner string, lease time.Duration, asked int) ([]Claimed, error) {
	f := &q.flow
	p := db.ClaimFlowJobsParams{
		Queue: q.name, Kinds: f.kinds, Limits: f.limits, MinVersions: f.min, MaxVersions: f.max,
		After: f.after, Owner: owner, LeaseSeconds: lease.Seconds(), Max: int32(asked),
		HintKinds: []int32{}, HintKeys: []string{}, HintPriorities: []int16{}, HintAvailableAt: []time.Time{}, HintIds: []int64{},
		FromPriorities: make([]int16, len(f.kinds)), FromAvailableAt: make([]time.Time, len(f.kinds)),
		FromIds: make([]int64, len(f.kinds)),
	}
	// Like the plain claims (Hinted), a busy queue's claims, or all of them while
	// claims from the start are expensive, start each key after the last job of it
	// they claimed, and read every key from its start again only every() after.
	hinted := f.full.hinted(f.busy, time.Now())
	if hinted {
		for _, h := range f.hints {
			p.HintKinds = append(p.HintKinds, h.kind)
			p.HintKeys = append(p.HintKeys, h.key)
			p.HintPriorities = append(p.HintPriorities, h.priority)
			p.HintAvailableAt = append(p.HintAvailableAt, h.at)
			p.HintIds = append(p.HintIds, h.id)
		}
	}
	// A claim of a kind in claim order (jobc_claim_flow) starts after the last of its
	// hints, the kind's last job the last claim took; from the start without one.
	from := make([]claimHint, len(f.kinds))
	if hinted {
		for _, h := range f.hints {
			if k := &from[h.kind-1]; !k.set || k.after(h.priority, h.at, h.id) {
				*k = claimHint{set: true, priority: h.priority, availableAt: h.at, id: h.id}
			}
		}
	}
	for i, h := range from {
		p.FromPriorities[i] = math.MinInt16 // before every job
		if h.set {
			p.FromPriorities[i], p.FromAvailableAt[i], p.FromIds[i] = h.priority, h.availableAt, h.id
		}
	}
	began := time.Now()
	got, err := qs.ClaimFlowJobs(ctx, p)
	q.opensAt = time.Time{}
	if err != nil {
		f.busy = false
		return nil, err
	}
	if !hinted {
		f.full.ended(began)
	}
	f.hints = f.hints[:0]
	last := map[hintKey]int{} // index into f.hints
	started := slices.Clone(f.after)
	walked := make([]bool, len(f.kinds)) // f.after[i] is a key this claim took
	rows := make([]Claimed, 0, len(got))
	for _, r := range got {
		if r.ID == 0 {
			q.opensAt = r.AvailableAt
			continue
		}
		for i, k := range f.kinds {
			if k == r.Kind {
				if !walked[i] || walkedBefore(started[i], f.after[i], r.FlowKey) {
					f.after[i], walked[i] = r.FlowKey, true
				}
				h := flowHint{kind: int32(i + 1), key: r.FlowKey, priority: r.Priority, at: r.AvailableAt, id: r.ID}
				hk := hintKey{h.kind, h.key}
				if j, ok := last[hk]; !ok {
					last[hk] = len(f.hints)
					f.hints = append(f.hints, h)
				} else if prev := f.hints[j]; (claimHint{set: true, priority: prev.priority, availableAt: prev.at, id: prev.id}).after(h.priority, h.at, h.id) {
					f.hints[j] = h
				}
			}
		}
		rows = append(rows, Claimed{AtLimit: r.AtLimit, ClaimJobsRow: db.ClaimJobsRow{
			ID: r.ID, Kind: r.Kind, Queue: r.Queue, Priority: r.Priority, PayloadVersion: r.PayloadVersion,
			Payload: r.Payload, Metadata: r.Metadata, Attempt: r.Attempt, MaxAttempts: r.MaxAttempts,
			CreatedAt: r.CreatedAt, AvailableAt: r.AvailableAt, WaitedSeconds: r.WaitedSeconds,
		}})
	}
	f.busy = len(rows) == asked
	return rows, nil
}

// walkedBefore says whether a walk of the keys that started after the key from visits
// a before b: it goes through the keys after from in key order, then from the first
// key up to from. The next claim's walk goes on after the last key the last one took
// jobs of, however those jobs came back (in claim order): going on after the key of
// the last job in claim order sent the walk back over keys it had just visited, and a
// fair kind's keys after them waited their turn for the keys before.
func walkedBefore(from, a, b string) bool {
	wrapped := func(k string) bool { return from != "" && k <= from } // visited after the wrap
	if wrapped(a) != wrapped(b) {
		return !wrapped(a)
	}
	return a < b
}

type hintKey struct {
	kind int32
	key  string
}

// Prepare runs a claim of no jobs on qs: it prepares the claim statement, which every
// queue's claims share, and loads the job table's and its indexes' catalog entries
// into the connection, and writes nothing.
func (q *Queue) Prepare(ctx context.Context, qs *db.Queries, owner string, lease time.Duration) error {
	_, err := qs.ClaimJobs(ctx, db.ClaimJobsParams{
		Owner: owner, LeaseSeconds: lease.Seconds(),
		Queue: q.name, Kinds: q.kinds, Versions: q.versions, Max: 0,
	})
	return err
}

// Hinted says whether the next claim starts from the hints: while the queue is busy,
// or claims from the start are expensive, for full.every() after a claim that read every
// pair from its start. Claims run on generic plans (the worker's claimsOn), so a
// hinted claim costs no more planning than the other, and hints cost nothing from the
// first full claim on (bench/README.md).
func (q *Queue) Hinted(now time.Time) bool { return q.full.hinted(q.busy, now) }

// Fresh makes the hints as good as new, as if a claim that read every pair from its
// start had just ended: for tests, whose next claims start from the hints (if the queue
// is busy) however slow the machine running them is.
func (q *Queue) Fresh() {
	q.full = fullClaims{at: time.Now()}
	q.flow.full = fullClaims{at: time.Now()}
}

// ranges returns the ranges a hinted claim of q reads (see the ClaimJobsAfter query):
// each pair that has a hint from just after it, with the pair's more urgent priorities
// whole, and each pair without one from its start.
func (q *Queue) ranges() db.ClaimJobsAfterParams {
	n := len(q.kinds)
	p := db.ClaimJobsAfterParams{
		Queue: q.name, Kinds: q.kinds, Versions: q.versions,
		FromPriorities: make([]int16, n), FromAvailableAt: make([]time.Time, n), FromIds: make([]int64, n),
		UrgentKinds: []string{}, UrgentVersions: []int32{}, UrgentPriorities: []int16{},
	}
	for i, h := range q.hints {
		if !h.set {
			p.FromPriorities[i] = -1 // before every job of the pair
			continue
		}
		p.FromPriorities[i], p.FromAvailableAt[i], p.FromIds[i] = h.priority, h.availableAt, h.id
		for urgent := range h.priority {
			p.UrgentKinds = append(p.UrgentKinds, q.kinds[i])
			p.UrgentVersions = append(p.UrgentVersions, q.versions[i])
			p.UrgentPriorities = append(p.UrgentPriorities, urgent)
		}
	}
	return p
}

// claimJobs runs one claim of up to asked jobs of q on qs: ClaimJobsAfter from the
// hints while Hinted says so, ClaimJobs from every pair's start otherwise. A hinted
// claim that comes back short is followed by one from the start, so the queue is not
// taken for drained while jobs wait before a hint, unless claims from the start are
// expensive: those jobs then wait for the next one, due full.every() after the last.
// base holds the owner and the lease.
func (q *Queue) claimJobs(ctx context.Context, qs *db.Queries, base db.ClaimJobsParams, asked int) ([]db.ClaimJobsRow, error) {
	hinted := q.Hinted(time.Now())
	rows, err := q.claimOnce(ctx, qs, base, hinted, asked, nil)
	if err != nil || !hinted || len(rows) == asked || q.full.expensive() {
		return rows, err
	}
	return q.claimOnce(ctx, qs, base, false, asked-len(rows), rows)
}

// claimOnce runs one claim statement and updates the hints from the jobs it claimed,
// appending them to got.
func (q *Queue) claimOnce(ctx context.Context, qs *db.Queries, base db.ClaimJobsParams, hinted bool, asked int, got []db.ClaimJobsRow) ([]db.ClaimJobsRow, error) {
	var rows []db.ClaimJobsRow
	var err error
	began := time.Now()
	if hinted {
		p := q.ranges()
		p.Owner, p.LeaseSeconds, p.Max = base.Owner, base.LeaseSeconds, int32(asked)
		var after []db.ClaimJobsAfterRow
		after, err = qs.ClaimJobsAfter(ctx, p)
		rows = make([]db.ClaimJobsRow, len(after))
		for i, r := range after {
			rows[i] = db.ClaimJobsRow(r)
		}
	} else {
		rows, err = qs.ClaimJobs(ctx, db.ClaimJobsParams{
			Owner: base.Owner, LeaseSeconds: base.LeaseSeconds, Queue: q.name,
			Kinds: q.kinds, Versions: q.versions, Max: int32(asked),
		})
	}
	if err != nil {
		q.busy = false
		return got, err
	}
	if !hinted {
		wasExpensive := q.full.expensive()
		q.full.ended(began)
		// A pair the claim took nothing of has nothing to skip, while claims from the
		// start are cheap; while they are expensive (this one or the last) its hint
		// stays, or the hinted claims until the next one would read it from its start,
		// over every dead entry (under a held snapshot, 347 claims of 132 ms on
		// average in 10 minutes at 2,000 jobs/s, bench/README.md): what sorts before
		// the hint waits for the next claim from the start, as it does in a pair the
		// claim took jobs of.
		if !wasExpensive && !q.full.expensive() {
			clear(q.hints)
		}
	}
	// Within a pair the jobs claimed from each range are the first of that range in
	// claim order, so the hint moves to the last of them. The jobs of the range more
	// urgent than the hint sort before it and leave it where it is.
	for _, r := range rows {
		i := q.pair(r.Kind, r.PayloadVersion)
		if i < 0 {
			continue
		}
		if h := &q.hints[i]; !h.set || h.after(r.Priority, r.AvailableAt, r.ID) {
			*h = claimHint{set: true, priority: r.Priority, availableAt: r.AvailableAt, id: r.ID}
		}
	}
	q.busy = len(rows) == asked
	if got == nil {
		return rows, nil
	}
	return append(got, rows...), nil
}

// pair returns the index of (kind, version) in q's pairs, or -1.
func (q *Queue) pair(kind string, version int32) int {
	for i := range q.kinds {
		if q.kinds[i] == kind && q.versions[i] == version {
			return i
		}
	}
	return -1
}

// claimAlone claims up to asked jobs of q one statement each, after a claim of the
// batch failed with a row's fault: ClaimCandidates reads the jobs the claim would take
// without computing anything from them, and ClaimJobByID takes each. A job whose claim
// fails with a row's fault is poisoned (package poison). It returns the jobs claimed before any other
// error.
func (q *Queue) claimAlone(ctx context.Context, qs *db.Queries, log *slog.Logger, base db.ClaimJobsParams, asked int) ([]db.ClaimJobsRow, error) {
	ids, err := qs.ClaimCandidates(ctx, db.ClaimCandidatesParams{
		Queue: q.name, Kinds: q.kinds, Versions: q.versions, Max: int32(asked),
	})
	if err != nil {
		return nil, err
	}
	var got []db.ClaimJobsRow
	for _, id := range ids {
		rows, err := qs.ClaimJobByID(ctx, db.ClaimJobByIDParams{ID: id, Owner: base.Owner, LeaseSeconds: base.LeaseSeconds})
		switch {
		case err == nil:
			for _, r := range rows {
				got = append(got, db.ClaimJobsRow(r))
			}
		case dberr.RowFault(err):
			poison.Job(ctx, log, qs, id, nil, 0, "claiming queue "+q.name, err)
		default:
			return got, err
		}
	}
	return got, nil
}
