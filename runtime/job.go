package runtime

import (
	"encoding/json"
	"log/slog"
	"strconv"
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

	logger *slog.Logger
}

// IdempotencyKey is the same for every attempt of this job and unique across jobs. Pass
// it to external APIs that deduplicate requests, so a retried attempt does not repeat a
// side effect that already happened.
func (j *Job) IdempotencyKey() string { return "jobc-" + strconv.FormatInt(j.ID, 10) }

// Logger returns a logger that tags every record with the job's id, kind and attempt.
func (j *Job) Logger() *slog.Logger { return j.logger }
