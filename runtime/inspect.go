package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
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
	// ResultVersion and Result are a completed job's result as its handler stored it
	// (a job type with a result contract), in that version of the result; 0 and nil
	// for every other job. GetJob fills them in; listings leave them out.
	ResultVersion int
	Result        json.RawMessage
}

// AttemptError is the record of one failed attempt.
type AttemptError struct {
	Attempt int       `json:"attempt"`
	At      time.Time `json:"at"`
	Class   string    `json:"class,omitempty"`
	Error   string    `json:"error"`
	Worker  string    `json:"worker"`
}

// GetJob returns the job with the given id, unfinished or finished.
func GetJob(ctx context.Context, dbtx DBTX, id int64) (*JobInfo, error) {
	r, err := db.New(dbtx).GetJob(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: id %d", ErrJobNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("jobc: get job %d: %w", id, dberr.Describe(err))
	}
	info, err := jobInfo(r)
	if err != nil || info.State != StateCompleted {
		return info, err
	}
	res, err := db.New(dbtx).JobResult(ctx, id)
	switch {
	case errors.Is(err, pgx.ErrNoRows): // pruned since: the job as it was read
	case err != nil:
		return nil, fmt.Errorf("jobc: get job %d: its result: %w", id, dberr.Describe(err))
	case res.ResultVersion != nil:
		info.ResultVersion, info.Result = int(*res.ResultVersion), res.Result
	}
	return info, nil
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
	info.Errors = decodeAttemptErrors(r.Errors)
	return info, nil
}

// decodeAttemptErrors reads a job's errors column, whatever a writer put there, so
// that one malformed row cannot break a listing: an entry that is not an object, or a
// field of the wrong type, is shown as its JSON text rather than refused. The table
// holds errors to a list (jobc_jobs_errors_list); a value from before that constraint
// that is not a list is read as a list of one.
func decodeAttemptErrors(raw []byte) []AttemptError {
	var entries []json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		if len(raw) == 0 {
			return nil
		}
		entries = []json.RawMessage{raw}
	}
	out := make([]AttemptError, 0, len(entries))
	for _, e := range entries {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(e, &fields); err != nil || fields == nil {
			out = append(out, AttemptError{Error: "malformed error entry: " + string(e)})
			continue
		}
		var a AttemptError
		text := func(key string) string {
			v, ok := fields[key]
			if !ok {
				return ""
			}
			var s string
			if json.Unmarshal(v, &s) == nil {
				return s
			}
			return string(v)
		}
		a.Class, a.Error, a.Worker = text("class"), text("error"), text("worker")
		if v, ok := fields["attempt"]; ok {
			if json.Unmarshal(v, &a.Attempt) != nil {
				a.Error += " (malformed attempt: " + string(v) + ")"
			}
		}
		if v, ok := fields["at"]; ok {
			if json.Unmarshal(v, &a.At) != nil {
				a.Error += " (malformed time: " + string(v) + ")"
			}
		}
		out = append(out, a)
	}
	return out
}
