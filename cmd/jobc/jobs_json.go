package main

import (
	"encoding/json"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

// jobJSON is a job in `jobc jobs show --json` and `jobc jobs list --json`. The field
// names are documented in docs/cli.md and stay stable whatever the runtime's structs
// are called.
type jobJSON struct {
	ID             int64           `json:"id"`
	Kind           string          `json:"kind"`
	Queue          string          `json:"queue"`
	State          string          `json:"state"`
	Priority       int             `json:"priority"`
	PayloadVersion int             `json:"payload_version"`
	Payload        json.RawMessage `json:"payload"`
	Metadata       json.RawMessage `json:"metadata"`
	Attempt        int             `json:"attempt"`
	MaxAttempts    int             `json:"max_attempts"`
	UniqueKey      *string         `json:"unique_key"`
	CreatedAt      time.Time       `json:"created_at"`
	AvailableAt    time.Time       `json:"available_at"`
	AttemptedAt    *time.Time      `json:"attempted_at"`
	FinishedAt     *time.Time      `json:"finished_at"`
	Errors         []errorJSON     `json:"errors"`
	// ResultVersion and Result are a completed job's result (jobc jobs show only;
	// absent elsewhere and for jobs without one).
	ResultVersion int             `json:"result_version,omitempty"`
	Result        json.RawMessage `json:"result,omitempty"`
	// Waiting says why an available or scheduled job is not running (jobc jobs show
	// only; absent elsewhere and for other states).
	Waiting *waitingJSON `json:"waiting,omitempty"`
}

// waitingJSON is runtime.Waiting: why a job waits.
type waitingJSON struct {
	Cause   string     `json:"cause"`
	Reason  string     `json:"reason"`
	Key     string     `json:"key"`
	Limit   int        `json:"limit"`
	Current int        `json:"current"`
	Until   *time.Time `json:"until"`
	HeldBy  *int64     `json:"held_by"`
}

func toWaitingJSON(w runtime.Waiting) *waitingJSON {
	out := &waitingJSON{Cause: string(w.Cause), Reason: w.Reason, Key: w.Key, Limit: w.Limit, Current: w.Current, Until: w.Until}
	if w.HeldBy != 0 {
		out.HeldBy = &w.HeldBy
	}
	return out
}

// errorJSON is the record of one failed attempt.
type errorJSON struct {
	Attempt int       `json:"attempt"`
	At      time.Time `json:"at"`
	Class   string    `json:"class"`
	Error   string    `json:"error"`
	Worker  string    `json:"worker"`
}

// jobPageJSON is the output of `jobc jobs list --json`.
type jobPageJSON struct {
	Jobs      []jobJSON `json:"jobs"`
	More      bool      `json:"more"`
	NextAfter *int64    `json:"next_after"` // pass as --after for the next page; null on the last
}

func toJobJSON(j *runtime.JobInfo) jobJSON {
	out := jobJSON{ID: j.ID, Kind: j.Kind, Queue: j.Queue, State: string(j.State), Priority: j.Priority,
		PayloadVersion: j.PayloadVersion, Payload: rawOrNull(j.Payload), Metadata: rawOrNull(j.Metadata),
		Attempt: j.Attempt, MaxAttempts: j.MaxAttempts, CreatedAt: j.CreatedAt, AvailableAt: j.AvailableAt,
		AttemptedAt: j.AttemptedAt, FinishedAt: j.FinishedAt, Errors: make([]errorJSON, len(j.Errors)),
		ResultVersion: j.ResultVersion, Result: j.Result}
	if j.UniqueKey != "" {
		out.UniqueKey = &j.UniqueKey
	}
	for i, e := range j.Errors {
		out.Errors[i] = errorJSON{Attempt: e.Attempt, At: e.At, Class: e.Class, Error: e.Error, Worker: e.Worker}
	}
	return out
}

func rawOrNull(r json.RawMessage) json.RawMessage {
	if len(r) == 0 {
		return json.RawMessage("null")
	}
	return r
}
