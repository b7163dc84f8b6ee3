package maintenance

import (
	"context"
	"fmt"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// SchedulerConfig tunes the scheduler.
type SchedulerConfig struct {
	BatchSize int // rows per statement; default Batch
}

// Scheduler makes due scheduled jobs (delayed jobs and retries) available, waking the
// queues that got work (PromoteScheduled, through jobc_wake), and fires workflows'
// due timers (FireWorkflowTimers): every worker runs it, with no leader.
type Scheduler struct {
	cfg SchedulerConfig
	q   *db.Queries
}

// SchedulerResult is what one run of the scheduler did.
type SchedulerResult struct {
	Promoted int64            // jobs made available
	ByQueue  map[string]int64 // of those, per queue
	Timers   int64            // workflow steps whose due timers ended them
}

// NewScheduler returns a scheduler that works through q.
func NewScheduler(q *db.Queries, cfg SchedulerConfig) *Scheduler {
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = Batch
	}
	return &Scheduler{cfg: cfg, q: q}
}

// RunOnce promotes every job due now, and fires the workflow timers due now, a batch
// per statement.
func (s *Scheduler) RunOnce(ctx context.Context) (SchedulerResult, error) {
	res := SchedulerResult{ByQueue: map[string]int64{}}
	for {
		n, err := s.q.FireWorkflowTimers(ctx, int32(s.cfg.BatchSize))
		if err != nil {
			return res, fmt.Errorf("fire workflow timers: %w", err)
		}
		res.Timers += int64(n)
		if int(n) < s.cfg.BatchSize {
			break
		}
	}
	for {
		rows, err := s.q.PromoteScheduled(ctx, int32(s.cfg.BatchSize))
		if err != nil {
			return res, fmt.Errorf("promote scheduled jobs: %w", err)
		}
		var n int64
		for _, r := range rows {
			n += r.Jobs
			res.ByQueue[r.Queue] += r.Jobs
		}
		res.Promoted += n
		if n < int64(s.cfg.BatchSize) {
			return res, nil
		}
	}
}
