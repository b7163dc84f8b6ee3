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

// StepKind is the job type the steps of Diamond run: a job with a result, which the
// testworker serves beside chaos_job, without flow control (workflow steps have none).
const StepKind = "chaos_step"

// StepPayload is chaos_step's payload and StepResult its result (version 1 of each).
type (
	StepPayload struct {
		N       int64 `json:"n"`
		SleepMS int64 `json:"sleep_ms,omitempty"`
	}
	StepResult struct {
		N int64 `json:"n"`
	}
)

const (
	stepSchemaV1 = `{"type":"object","additionalProperties":false,"required":["n"],` +
		`"properties":{"n":{"type":"integer"},"sleep_ms":{"type":"integer","minimum":0}}}`
	stepResultV1 = `{"type":"object","additionalProperties":false,"required":["n"],"properties":{"n":{"type":"integer"}}}`
)

// NewStepType returns chaos_step on the given queue.
func NewStepType(queue string) (*runtime.JobType, error) {
	jt, err := runtime.NewJobType(runtime.JobType{
		Kind: StepKind, Queue: queue, Priority: 5, MaxAttempts: MaxAttempts,
		Backoff:      runtime.Backoff{Kind: runtime.BackoffConstant, Initial: Backoff},
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: stepSchemaV1}},
		ResultWriteVersion: 1, ResultVersions: []runtime.Version{{Number: 1, Schema: stepResultV1}},
	})
	if err != nil {
		return nil, fmt.Errorf("chaosjob: %w", err)
	}
	return jt, nil
}

// OrderInput is the input of Order: a chaos_step payload and the items of its
// for_each step.
type OrderInput struct {
	N       int64   `json:"n"`
	SleepMS int64   `json:"sleep_ms,omitempty"`
	Items   []int64 `json:"items"`
}

// PaidSignal is the signal Order's wait step waits for.
type PaidSignal struct {
	N int64 `json:"n"`
}

const orderInputV1 = `{"type":"object","additionalProperties":false,"required":["n","items"],` +
	`"properties":{"n":{"type":"integer"},"sleep_ms":{"type":"integer","minimum":0},"items":{"type":"array","items":{"type":"integer"}}}}`

// Order is the fulfil_order-shaped workflow of the process-level workflow tests: step
// a, then b (once signal paid has come: step pay) and c side by side, then a job per
// item (pack) after c, then d after b and pack: a diamond with a wait and a fan-out
// and fan-in. Each job is a chaos_step of the input's n (b takes it from the signal,
// c and d from a's and b's results; each item's from the item) that works for the
// input's sleep_ms.
func Order(step *runtime.JobType) (*runtime.WorkflowType, error) {
	return runtime.NewWorkflowType(runtime.WorkflowType{
		Name: "chaos_order", InputWriteVersion: 1, InputVersions: []runtime.Version{{Number: 1, Schema: orderInputV1}},
		Signals: []runtime.Signal{{Name: "paid", WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: stepResultV1}}}},
		Steps: []runtime.Step{
			{Name: "a", Job: step, Map: map[string]string{"n": "input.n", "sleep_ms": "input.sleep_ms"}},
			{Name: "pay", After: []string{"a"}, Wait: &runtime.Wait{Signal: "paid", Timeout: time.Hour}},
			{Name: "b", Job: step, After: []string{"pay"}, Map: map[string]string{"n": "pay.result.n", "sleep_ms": "input.sleep_ms"}},
			{Name: "c", Job: step, After: []string{"a"}, Map: map[string]string{"n": "a.result.n", "sleep_ms": "input.sleep_ms"}},
			{Name: "pack", Job: step, After: []string{"c"}, ForEach: "input.items", Map: map[string]string{"n": "item", "sleep_ms": "input.sleep_ms"}},
			{Name: "d", Job: step, After: []string{"b", "pack"}, Map: map[string]string{"n": "b.result.n", "sleep_ms": "input.sleep_ms"}},
		},
	})
}
