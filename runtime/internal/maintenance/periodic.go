package maintenance

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
)

// periodicLookback is how far back a periodic enqueuer that starts looks for an
// occurrence no node enqueued (all were down at the time). Occurrences are unique, so
// looking back never enqueues one twice.
const periodicLookback = time.Minute

// Schedule parses a job type's cron expression (standard five fields) evaluated in the
// time zone tz; "" is UTC.
func Schedule(expr, tz string) (cron.Schedule, error) {
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("schedule time zone: %w", err)
	}
	sched, err := cron.ParseStandard(expr)
	if err != nil {
		return nil, fmt.Errorf("schedule %q: %w", expr, err)
	}
	return &inZone{sched, loc}, nil
}

// inZone evaluates a cron schedule in a time zone.
type inZone struct {
	cron.Schedule
	loc *time.Location
}

func (z *inZone) Next(t time.Time) time.Time { return z.Schedule.Next(t.In(z.loc)) }

// Occurrence is one occurrence of a periodic job to enqueue.
type Occurrence struct {
	At time.Time // when it is due: the job's run-at
	// Key is the occurrence's unique key, "@<occurrence time>"; the enqueue holds it in
	// every state, so that of N enqueuers exactly one inserts it.
	Key  string
	Meta []byte // the job's metadata: {"jobc_occurrence": <occurrence time>}
}

// PeriodicConfig describes a periodic enqueuer's job type.
type PeriodicConfig struct {
	Kind     string
	Schedule cron.Schedule // from Schedule
	// Enqueue inserts the occurrence's job unless one holds its key, and returns the
	// job's id and whether it had been enqueued before.
	Enqueue func(ctx context.Context, o Occurrence) (id int64, duplicate bool, err error)
	Now     func() time.Time // the clock occurrences are due on; default time.Now
}

// PeriodicEnqueuer enqueues one scheduled job type's occurrences. Every node runs one
// per scheduled type: each occurrence is enqueued under its unique key, so of N
// enqueuers exactly one inserts it.
type PeriodicEnqueuer struct {
	cfg   PeriodicConfig
	since time.Time // occurrences after this are due for a check
}

// PeriodicResult is what one run of a periodic enqueuer did.
type PeriodicResult struct {
	Occurrence time.Time // the occurrence it enqueued or found enqueued; zero: none was due
	JobID      int64     // the occurrence's job
	Duplicate  bool      // another node had enqueued it
}

// NewPeriodicEnqueuer returns an enqueuer that looks back periodicLookback for an
// occurrence it missed.
func NewPeriodicEnqueuer(cfg PeriodicConfig) *PeriodicEnqueuer {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &PeriodicEnqueuer{cfg: cfg, since: cfg.Now().Add(-periodicLookback)}
}

// RunOnce enqueues the latest occurrence in (since, now], if any; earlier ones missed
// in the same window are skipped, as cron does.
func (p *PeriodicEnqueuer) RunOnce(ctx context.Context) (PeriodicResult, error) {
	now := p.cfg.Now()
	var due time.Time
	for t := p.cfg.Schedule.Next(p.since); !t.After(now); t = p.cfg.Schedule.Next(t) {
		due = t
	}
	if due.IsZero() {
		return PeriodicResult{}, nil
	}
	at := due.UTC().Format(time.RFC3339)
	meta, err := json.Marshal(map[string]string{"jobc_occurrence": at})
	if err != nil {
		return PeriodicResult{}, fmt.Errorf("encode the metadata of the %s occurrence of %s: %w", at, p.cfg.Kind, err)
	}
	id, dup, err := p.cfg.Enqueue(ctx, Occurrence{At: due, Key: "@" + at, Meta: meta})
	if err != nil {
		return PeriodicResult{}, fmt.Errorf("enqueue the %s occurrence of %s: %w", at, p.cfg.Kind, err)
	}
	p.since = due
	return PeriodicResult{Occurrence: due, JobID: id, Duplicate: dup}, nil
}
