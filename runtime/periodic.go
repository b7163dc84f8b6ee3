package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// periodicLookback is how far back a scheduler that starts looks for an occurrence no
// node enqueued (all were down at the time). Occurrences are unique, so looking back
// never enqueues one twice.
const periodicLookback = time.Minute

// periodicServices returns one service per registered job type with a schedule. Every
// node runs them: each occurrence is enqueued under the unique key
// "@<occurrence time>", held in every state, so of N schedulers exactly one inserts it.
func (w *Worker) periodicServices() ([]service, error) {
	var out []service
	for _, jt := range w.jobTypes() {
		if jt.Schedule == nil {
			continue
		}
		p, err := newPeriodic(jt, w.q, time.Now().Add(-periodicLookback))
		if err != nil {
			return nil, err
		}
		out = append(out, service{"periodic " + jt.Kind, w.cfg.SchedulerInterval, p.run})
	}
	return out, nil
}

// periodic enqueues one scheduled job type's occurrences.
type periodic struct {
	jt      *JobType
	q       *db.Queries
	sched   cron.Schedule
	payload []byte
	since   time.Time // occurrences after this are due for a check
}

func newPeriodic(jt *JobType, q *db.Queries, since time.Time) (*periodic, error) {
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
	return &periodic{jt: jt, q: q, sched: &inZone{sched, loc}, payload: payload, since: since}, nil
}

// inZone evaluates a cron schedule in a time zone.
type inZone struct {
	cron.Schedule
	loc *time.Location
}

func (z *inZone) Next(t time.Time) time.Time { return z.Schedule.Next(t.In(z.loc)) }

// run enqueues the latest occurrence in (since, now], if any; earlier ones missed in
// the same window are skipped, as cron does.
func (p *periodic) run(ctx context.Context) error {
	now := time.Now()
	var due time.Time
	for t := p.sched.Next(p.since); !t.After(now); t = p.sched.Next(t) {
		due = t
	}
	if due.IsZero() {
		return nil
	}
	at := due
	_, err := p.jt.insert(ctx, p.q, p.payload, enqueueOptions{
		priority: p.jt.Priority,
		runAt:    &at,
		meta:     periodicMeta(due),
		dedupKey: ptr("@" + due.UTC().Format(time.RFC3339)),
		finished: []string{string(StateCompleted), string(StateFailed), string(StateCancelled)},
	})
	if err != nil {
		return fmt.Errorf("enqueue the %s occurrence of %s: %w", due.UTC().Format(time.RFC3339), p.jt.Kind, err)
	}
	p.since = due
	return nil
}

func periodicMeta(due time.Time) []byte {
	b, _ := json.Marshal(map[string]string{"jobc_occurrence": due.UTC().Format(time.RFC3339)})
	return b
}

func ptr[T any](v T) *T { return &v }
