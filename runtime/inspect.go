package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// State is where a job is in its life.
type State string

// Job states.
const (
	StateAvailable State = "available"
	StateScheduled State = "scheduled"
	StateRunning   State = "running"
	StateCompleted State = "completed"
	StateFailed    State = "failed"
	StateCancelled State = "cancelled"
)

// Finished reports whether s is a final state.
func (s State) Finished() bool {
	return s == StateCompleted || s == StateFailed || s == StateCancelled
}

// JobInfo is a job as stored, for inspection and tests.
type JobInfo struct {
	ID    int64
	Kind  string
	Queue string
	State State
	// Priority is the priority the job was enqueued with, also after starvation aging
	// moved it ahead of every declared priority to be claimed sooner.
	Priority int
	// Aged reports that starvation aging moved this unfinished job ahead (always false
	// once the job finished).
	Aged           bool
	PayloadVersion int
	Payload        json.RawMessage
	Metadata       json.RawMessage
	AvailableAt    time.Time
	Attempt        int
	MaxAttempts    int
	Errors         []AttemptError
	UniqueKey      string
	CreatedAt      time.Time
	AttemptedAt    *time.Time
	FinishedAt     *time.Time
}

// AttemptError is the record of one failed attempt.
type AttemptError struct {
	Attempt int       `json:"attempt"`
	At      time.Time `json:"at"`
	Class   string    `json:"class,omitempty"`
	Error   string    `json:"error"`
	Worker  string    `json:"worker"`
}

// ErrJobNotFound is returned by GetJob for an id that no job has (or had, before
// retention pruned it).
var ErrJobNotFound = errors.New("jobc: job not found")

// GetJob returns the job with the given id, unfinished or finished.
func GetJob(ctx context.Context, dbtx DBTX, id int64) (*JobInfo, error) {
	r, err := db.New(dbtx).GetJob(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: id %d", ErrJobNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("jobc: get job %d: %w", id, describeDBError(err))
	}
	return jobInfo(r)
}

func jobInfo(r db.JobcJobsAll) (*JobInfo, error) {
	info := &JobInfo{
		ID: r.ID, Kind: r.Kind, Queue: r.Queue, State: State(r.State), Priority: int(r.Priority),
		PayloadVersion: int(r.PayloadVersion), Payload: r.Payload, Metadata: r.Metadata,
		AvailableAt: r.AvailableAt, Attempt: int(r.Attempt), MaxAttempts: int(r.MaxAttempts),
		CreatedAt: r.CreatedAt, AttemptedAt: r.AttemptedAt, FinishedAt: r.FinishedAt, Aged: r.Aged,
	}
	if r.UniqueKey != nil {
		info.UniqueKey = *r.UniqueKey
	}
	if err := json.Unmarshal(r.Errors, &info.Errors); err != nil {
		return nil, fmt.Errorf("jobc: job %d: decode errors: %w", r.ID, err)
	}
	return info, nil
}
