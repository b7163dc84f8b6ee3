// Package chaosjob defines chaos_job, the one job type of the testworker command,
// so that the process-level tests (internal/chaostest) enqueue exactly what the
// worker processes decode.
package chaosjob

import (
	"fmt"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

// Kind is the job type's kind.
const Kind = "chaos_job"

// DefaultQueue is the queue chaos_job uses unless the worker is told otherwise.
const DefaultQueue = "chaos"

// MaxAttempts and Backoff are chaos_job's retry policy.
const (
	MaxAttempts = 5
	Backoff     = 100 * time.Millisecond
)

// Payload is chaos_job's payload (version 1).
type Payload struct {
	// N identifies the job to the test that enqueued it.
	N int64 `json:"n"`
	// SleepMS is how long the handler works, in milliseconds; it stops early when its
	// context is cancelled.
	SleepMS int64 `json:"sleep_ms,omitempty"`
	// FailAttempts makes the handler fail while the attempt is at most this.
	FailAttempts int64 `json:"fail_attempts,omitempty"`
	// SnoozeTimes makes the handler snooze (runtime.Snooze(0): due again at once, the
	// attempt not counted) on the first this many executions of the job.
	SnoozeTimes int64 `json:"snooze_times,omitempty"`
}

const schemaV1 = `{"type":"object","additionalProperties":false,"required":["n"],` +
	`"properties":{"n":{"type":"integer"},"sleep_ms":{"type":"integer","minimum":0},` +
	`"fail_attempts":{"type":"integer","minimum":0},"snooze_times":{"type":"integer","minimum":0}}}`

// NewJobType returns chaos_job on the given queue.
func NewJobType(queue string) (*runtime.JobType, error) {
	jt, err := runtime.NewJobType(runtime.JobType{
		Kind:         Kind,
		Queue:        queue,
		Priority:     5,
		MaxAttempts:  MaxAttempts,
		Backoff:      runtime.Backoff{Kind: runtime.BackoffConstant, Initial: Backoff},
		WriteVersion: 1,
		Versions:     []runtime.Version{{Number: 1, Schema: schemaV1}},
	})
	if err != nil {
		return nil, fmt.Errorf("chaosjob: %w", err)
	}
	return jt, nil
}
