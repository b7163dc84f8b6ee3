package maintenance

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// RescuerConfig tunes the rescuer.
type RescuerConfig struct {
	BatchSize int // rows per statement; default Batch
}

// Rescuer returns jobs whose lease expired (their worker crashed, was killed or lost
// its connection) to their queue, or fails or cancels them (jobc_rescue_expired).
type Rescuer struct {
	cfg RescuerConfig
	q   *db.Queries
	log *slog.Logger
}

// RescuerResult is what one run of the rescuer did.
type RescuerResult struct {
	Retried   int            // back in their queue, the attempt counted
	Failed    int            // out of attempts
	Cancelled int            // their cancellation had been requested
	ByQueue   map[string]int // jobs rescued, by queue
}

// NewRescuer returns a rescuer that works through q and logs to log.
func NewRescuer(q *db.Queries, log *slog.Logger, cfg RescuerConfig) *Rescuer {
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = Batch
	}
	return &Rescuer{cfg: cfg, q: q, log: log}
}

// RunOnce rescues every job whose lease has expired, a batch per statement, and logs
// what it did: a rescue means a worker vanished with work in hand.
func (r *Rescuer) RunOnce(ctx context.Context) (RescuerResult, error) {
	var res RescuerResult
	for {
		rows, err := r.q.RescueExpired(ctx, int32(r.cfg.BatchSize))
		if err != nil {
			return res, fmt.Errorf("rescue expired leases: %w", err)
		}
		var batch RescuerResult
		for _, row := range rows {
			if row.Problem != "" {
				// jobc_rescue_expired failed this job alone: its rescue failed.
				r.log.ErrorContext(ctx, "jobc worker: a job made the rescue of expired leases fail; it is failed alone, with the error, and the others proceed",
					"job_id", row.ID, "err", row.Problem)
			}
			switch row.State {
			case db.JobcStateAvailable:
				batch.Retried++
			case db.JobcStateFailed:
				batch.Failed++
			case db.JobcStateCancelled:
				batch.Cancelled++
			}
		}
		if len(rows) > 0 {
			if res.ByQueue == nil {
				res.ByQueue = map[string]int{}
			}
			for _, row := range rows {
				res.ByQueue[row.Queue]++
			}
			r.log.WarnContext(ctx, "jobc worker: rescued jobs whose lease expired",
				slog.Int("retried", batch.Retried), slog.Int("failed", batch.Failed), slog.Int("cancelled", batch.Cancelled))
		}
		res.Retried += batch.Retried
		res.Failed += batch.Failed
		res.Cancelled += batch.Cancelled
		if len(rows) < r.cfg.BatchSize {
			return res, nil
		}
	}
}
