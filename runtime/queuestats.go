package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// QueueStat is what one queue holds and who serves it.
type QueueStat struct {
	Queue              string
	Available          int64
	Scheduled          int64
	Running            int64
	OldestAvailableAge time.Duration // how long the oldest available job has been due; 0 when none is available
	CompletedLastHour  int64
	// FailedLastHour counts the jobs that failed in the last hour and are still
	// failed: a job retried since (RetryJob, RetryJobs) has left it, as it moved back
	// out of the finished jobs, so the figure can shrink.
	FailedLastHour int64
	Paused         bool
	Workers        int // live workers serving it
}

// ListQueueStats returns one entry per queue that has unfinished jobs or jobs finished in
// the last hour, is paused, or is served by a live worker, ordered by name. It is one
// query; the last hour's counts read only the hour's entries of an index, so older
// finished jobs cost little however many there are (BenchmarkQueueStats measures it;
// the plan is in queries/queues.sql).
func ListQueueStats(ctx context.Context, dbtx DBTX) ([]QueueStat, error) {
	rows, err := db.New(dbtx).QueueStats(ctx)
	if err != nil {
		return nil, fmt.Errorf("jobc: queue stats: %w", dberr.Describe(err))
	}
	out := make([]QueueStat, len(rows))
	for i, r := range rows {
		out[i] = QueueStat{
			Queue: r.Queue, Available: r.Available, Scheduled: r.Scheduled, Running: r.Running,
			OldestAvailableAge: time.Duration(max(r.OldestAvailableSeconds, 0) * float64(time.Second)),
			CompletedLastHour:  r.CompletedLastHour, FailedLastHour: r.FailedLastHour,
			Paused: r.Paused, Workers: int(r.Workers),
		}
	}
	return out, nil
}
