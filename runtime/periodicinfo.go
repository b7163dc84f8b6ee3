package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
	"github.com/jobc-dev/jobc/runtime/internal/maintenance"
)

// PeriodicJob is a scheduled job type, when it runs next and what its last occurrence
// did.
type PeriodicJob struct {
	Kind     string
	Queue    string
	Cron     string
	Timezone string
	Next     time.Time // the next occurrence after now
	Last     *JobInfo  // the newest job of the kind; nil when none exists (or was pruned)
}

// ListPeriodicJobs describes every job type in types that has a Schedule, in the order
// given. The schedules come from the job types (the application's generated
// JobTypes()), not the database: workers enqueue occurrences, nothing stores the plan.
func ListPeriodicJobs(ctx context.Context, dbtx DBTX, types []*JobType, now time.Time) ([]PeriodicJob, error) {
	var out []PeriodicJob
	q := db.New(dbtx)
	for _, jt := range types {
		if jt == nil || jt.Schedule == nil {
			continue
		}
		tz := jt.Schedule.Timezone
		if tz == "" {
			tz = "UTC"
		}
		sched, err := maintenance.Schedule(jt.Schedule.Cron, tz)
		if err != nil {
			return nil, fmt.Errorf("jobc: job type %s: %w", jt.Kind, err)
		}
		p := PeriodicJob{Kind: jt.Kind, Queue: jt.Queue, Cron: jt.Schedule.Cron, Timezone: tz, Next: sched.Next(now)}
		rows, err := q.LastJobOfKind(ctx, jt.Kind)
		if err != nil {
			return nil, fmt.Errorf("jobc: last job of kind %s: %w", jt.Kind, dberr.Describe(err))
		}
		if len(rows) > 0 {
			if p.Last, err = jobInfo(rows[0]); err != nil {
				return nil, err
			}
		}
		out = append(out, p)
	}
	return out, nil
}
