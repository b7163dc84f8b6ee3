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

// KeyField is the payload field whose value is a job's flow key under Limits by key.
const KeyField = "key"

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
	// Key is the flow key of the job under Limits by key (KeyField); jobs without one
	// share the key of null.
	Key string `json:"key,omitempty"`
}

const schemaV1 = `{"type":"object","additionalProperties":false,"required":["n"],` +
	`"properties":{"n":{"type":"integer"},"sleep_ms":{"type":"integer","minimum":0},` +
	`"fail_attempts":{"type":"integer","minimum":0},"snooze_times":{"type":"integer","minimum":0},` +
	`"key":{"type":"string"}}}`

// Limits are the flow control chaos_job runs with: by key (the payload's KeyField)
// and over its whole queue. The zero Limits is none. A worker and the producers of its
// jobs must use the same Limits: producers compute a job's flow key as they enqueue it.
type Limits struct {
	// Concurrency, Rate and Sequence apply to each key (runtime.Flow with By KeyField).
	Concurrency int
	Rate        runtime.Rate
	Sequence    bool
	// QueueConcurrency and QueueRate apply to the queue (runtime.JobType.QueueFlow).
	QueueConcurrency int
	QueueRate        runtime.Rate
}

// flows returns l as the job type's Flow and QueueFlow (nil: none).
func (l Limits) flows() (flow, queueFlow *runtime.Flow) {
	if l.Concurrency != 0 || !l.Rate.IsZero() || l.Sequence {
		flow = &runtime.Flow{By: []string{KeyField}, Concurrency: l.Concurrency, Rate: l.Rate, Sequence: l.Sequence}
	}
	if l.QueueConcurrency != 0 || !l.QueueRate.IsZero() {
		queueFlow = &runtime.Flow{Concurrency: l.QueueConcurrency, Rate: l.QueueRate}
	}
	return flow, queueFlow
}

// NewJobType returns chaos_job on the given queue, with the flow control l; it
// rejects Limits the runtime rejects (a sequence with a concurrency, a negative
// number).
func NewJobType(queue string, l Limits) (*runtime.JobType, error) {
	flow, queueFlow := l.flows()
	jt, err := runtime.NewJobType(runtime.JobType{
		Kind:         Kind,
		Queue:        queue,
		Priority:     5,
		MaxAttempts:  MaxAttempts,
		Backoff:      runtime.Backoff{Kind: runtime.BackoffConstant, Initial: Backoff},
		WriteVersion: 1,
		Versions:     []runtime.Version{{Number: 1, Schema: schemaV1}},
		Flow:         flow,
		QueueFlow:    queueFlow,
	})
	if err != nil {
		return nil, fmt.Errorf("chaosjob: %w", err)
	}
	return jt, nil
}
