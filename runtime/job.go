package runtime

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// Job is the handle a handler receives alongside its payload.
type Job struct {
	ID             int64
	Kind           string // as stored: a former kind (alias) for old rows
	Queue          string
	Attempt        int // 1 on the first run
	MaxAttempts    int
	Priority       int
	PayloadVersion int // the stored version; the handler's payload is always the newest
	CreatedAt      time.Time
	Metadata       json.RawMessage // a JSON object, {} when none was set

	base    *slog.Logger // the worker's; tagged with the job on first use
	logOnce sync.Once
	logger  *slog.Logger
	worker  *Worker // the worker running the job; nil for a Job built by hand
}

// IdempotencyKey is the same for every attempt of this job and unique across jobs. Pass
// it to external APIs that deduplicate requests, so a retried attempt does not repeat a
// side effect that already happened.
func (j *Job) IdempotencyKey() string { return "jobc-" + strconv.FormatInt(j.ID, 10) }

// Heartbeat extends the job's lease now. The worker already extends the leases of all
// its running jobs together, every third of the lease duration; call Heartbeat to learn
// whether the lease is still held before an expensive or irreversible step.
func (j *Job) Heartbeat(ctx context.Context) error {
	if j.worker == nil {
		return ErrLeaseLost
	}
	return j.worker.extendOne(ctx, j.ID)
}

// Logger returns a logger that tags every record with the job's id, kind and attempt
// (slog.Default for a Job built by hand, as in a handler's unit test).
func (j *Job) Logger() *slog.Logger {
	j.logOnce.Do(func() {
		base := j.base
		if base == nil {
			base = slog.Default()
		}
		j.logger = base.With("job_id", j.ID, "kind", j.Kind, "attempt", j.Attempt)
	})
	return j.logger
}
