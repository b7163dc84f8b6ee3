package runtime

import (
	"context"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

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
// fullClaimEvery after the last one ended, and before a queue is taken for drained.
// Priority is never inverted.
const fullClaimEvery = 100 * time.Millisecond

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

// claimState is what a queue's claims remember between them (fetch loop only).
type claimState struct {
	hints  []claimHint // per pair, as queue.kinds and queue.versions
	busy   bool        // the last claim came back full
	fullAt time.Time   // when the last claim that read every pair from its start ended
}

// hinted says whether the next claim starts from the hints: while the queue is busy,
// for fullClaimEvery after a claim that read every pair from its start. Claims run on
// generic plans (claimsOn), so a hinted claim costs no more planning than the other,
// and hints cost nothing from the first full claim on (bench/README.md).
func (c *claimState) hinted(now time.Time) bool {
	return c.busy && now.Sub(c.fullAt) < fullClaimEvery
}

// ranges returns the ranges a hinted claim of q reads (see the ClaimJobsAfter query):
// each pair that has a hint from just after it, with the pair's more urgent priorities
// whole, and each pair without one from its start.
func (q *queue) ranges() db.ClaimJobsAfterParams {
	n := len(q.kinds)
	p := db.ClaimJobsAfterParams{
		Queue: q.name, Kinds: q.kinds, Versions: q.versions,
		FromPriorities: make([]int16, n), FromAvailableAt: make([]time.Time, n), FromIds: make([]int64, n),
		UrgentKinds: []string{}, UrgentVersions: []int32{}, UrgentPriorities: []int16{},
	}
	for i, h := range q.claims.hints {
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
// hints while the queue is busy, ClaimJobs from every pair's start otherwise. A hinted
// claim that comes back short is followed by one from the start, so the queue is not
// taken for drained while jobs wait before a hint. base holds the owner and the lease.
func (q *queue) claimJobs(ctx context.Context, qs *db.Queries, base db.ClaimJobsParams, asked int) ([]db.ClaimJobsRow, error) {
	hinted := q.claims.hinted(time.Now())
	rows, err := q.claimOnce(ctx, qs, base, hinted, asked, nil)
	if err != nil || !hinted || len(rows) == asked {
		return rows, err
	}
	return q.claimOnce(ctx, qs, base, false, asked-len(rows), rows)
}

// claimOnce runs one claim statement and updates the hints from the jobs it claimed,
// appending them to got.
func (q *queue) claimOnce(ctx context.Context, qs *db.Queries, base db.ClaimJobsParams, hinted bool, asked int, got []db.ClaimJobsRow) ([]db.ClaimJobsRow, error) {
	var rows []db.ClaimJobsRow
	var err error
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
		q.claims.busy = false
		return got, err
	}
	if !hinted {
		// The window starts when the claim ends: a claim from the start that walks
		// a long way must not leave no time for the hinted claims it pays for.
		q.claims.fullAt = time.Now()
		clear(q.claims.hints) // a pair with nothing claimed has nothing to skip
	}
	// Within a pair the jobs claimed from each range are the first of that range in
	// claim order, so the hint moves to the last of them. The jobs of the range more
	// urgent than the hint sort before it and leave it where it is.
	for _, r := range rows {
		i := q.pair(r.Kind, r.PayloadVersion)
		if i < 0 {
			continue
		}
		if h := &q.claims.hints[i]; !h.set || h.after(r.Priority, r.AvailableAt, r.ID) {
			*h = claimHint{set: true, priority: r.Priority, availableAt: r.AvailableAt, id: r.ID}
		}
	}
	q.claims.busy = len(rows) == asked
	return append(got, rows...), nil
}

// pair returns the index of (kind, version) in q's pairs, or -1.
func (q *queue) pair(kind string, version int32) int {
	for i := range q.kinds {
		if q.kinds[i] == kind && q.versions[i] == version {
			return i
		}
	}
	return -1
}
