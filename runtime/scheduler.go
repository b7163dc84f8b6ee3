package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// schedulerConfig tunes the scheduler.
type schedulerConfig struct {
	Interval  time.Duration // how often due jobs are looked for
	BatchSize int           // rows per statement; default maintenanceBatch
}

// scheduler makes due scheduled jobs (delayed jobs and retries) available, waking the
// queues that got work (PromoteScheduled, through jobc_wake).
type scheduler struct {
	cfg schedulerConfig
	q   *db.Queries
}

// schedulerResult is what one run of the scheduler did.
type schedulerResult struct {
	Promoted int64            // jobs made available
	ByQueue  map[string]int64 // of those, per queue
}

func newScheduler(q *db.Queries, cfg schedulerConfig) *scheduler {
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = maintenanceBatch
	}
	return &scheduler{cfg: cfg, q: q}
}

func (s *scheduler) service() service {
	return service{"scheduler", s.cfg.Interval, withResult(s.runOnce)}
}

// runOnce promotes every job due now, a batch per statement.
func (s *scheduler) runOnce(ctx context.Context) (schedulerResult, error) {
	res := schedulerResult{ByQueue: map[string]int64{}}
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
