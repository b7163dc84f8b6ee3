package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// periodicLookback is how far back a periodic enqueuer that starts looks for an
// occurrence no node enqueued (all were down at the time). Occurrences are unique, so
// looking back never enqueues one twice.
const periodicLookback = time.Minute

// periodicConfig tunes a periodic enqueuer.
type periodicConfig struct {
	Interval time.Duration // how often the schedule is looked at
}

// periodicEnqueuer enqueues one scheduled job type's occurrences. Every node runs one
// per scheduled type: each occurrence is enqueued under the unique key
// "@<occurrence time>", held in every state, so of N enqueuers exactly one inserts it.
type periodicEnqueuer struct {
	cfg     periodicConfig
	jt      *JobType
	q       *db.Queries
	sched   cron.Schedule
	payload []byte
	now     func() time.Time
	since   time.Time // occurrences after this are due for a check
}

// periodicResult is what one run of a periodic enqueuer did.
type periodicResult struct {
	Occurrence time.Time // the occurrence it enqueued or found enqueued; zero: none was due
	JobID      int64     // the occurrence's job
	Duplicate  bool      // another node had enqueued it
}

func newPeriodicEnqueuer(q *db.Queries, jt *JobType, cfg periodicConfig) (*periodicEnqueuer, error) {
	loc, err := time.LoadLocation(jt.Schedule.Timezone)
	if err != nil {
		return nil, fmt.Errorf("jobc: job type %s: schedule time zone: %w", jt.Kind, err)
	}
	sched, err := cron.ParseStandard(jt.Schedule.Cron)
	if err != nil {
		return nil, fmt.Errorf("jobc: job type %s: schedule %q: %w", jt.Kind, jt.Schedule.Cron, err)
	}
	// A periodic job's payload is {} with the write version's defaults filled in.
	payload, err := withDefaults([]byte("{}"), jt.schemas[jt.WriteVersion])
	if err != nil {
		return nil, err
	}
	if err := jt.Validate(jt.WriteVersion, payload); err != nil {
		return nil, fmt.Errorf("jobc: job type %s: a scheduled job's payload is {} plus defaults: %w", jt.Kind, err)
	}
	p := &periodicEnqueuer{cfg: cfg, jt: jt, q: q, sched: &inZone{sched, loc}, payload: payload, now: time.Now}
	p.since = p.now().Add(-periodicLookback)
	return p, nil
}

func (p *periodicEnqueuer) service() service {
	return service{"periodic " + p.jt.Kind, p.cfg.Interval, withResult(p.runOnce)}
}

// inZone evaluates a cron schedule in a time zone.
type inZone struct {
	cron.Schedule
	loc *time.Location
}

func (z *inZone) Next(t time.Time) time.Time { return z.Schedule.Next(t.In(z.loc)) }

// runOnce enqueues the latest occurrence in (since, now], if any; earlier ones missed
// in the same window are skipped, as cron does.
func (p *periodicEnqueuer) runOnce(ctx context.Context) (periodicResult, error) {
	now := p.now()
	var due time.Time
	for t := p.sched.Next(p.since); !t.After(now); t = p.sched.Next(t) {
		due = t
	}
	if due.IsZero() {
		return periodicResult{}, nil
	}
	at := due
	e, err := p.jt.insert(ctx, p.q, p.payload, enqueueOptions{
		priority: p.jt.Priority,
		version:  p.jt.WriteVersion,
		runAt:    &at,
		meta:     periodicMeta(due),
		dedupKey: ptr("@" + due.UTC().Format(time.RFC3339)),
		finished: []string{string(StateCompleted), string(StateFailed), string(StateCancelled)},
	})
	if err != nil {
		return periodicResult{}, fmt.Errorf("enqueue the %s occurrence of %s: %w", due.UTC().Format(time.RFC3339), p.jt.Kind, err)
	}
	p.since = due
	return periodicResult{Occurrence: due, JobID: e.ID, Duplicate: e.Duplicate}, nil
}

func periodicMeta(due time.Time) []byte {
	b, _ := json.Marshal(map[string]string{"jobc_occurrence": due.UTC().Format(time.RFC3339)})
	return b
}

func ptr[T any](v T) *T { return &v }
