package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// Flow is the fleet-wide flow control a spec declares for a job type (JobType.Flow) or
// for the queue it runs in (JobType.QueueFlow). Workers enforce it when they claim,
// however many of them run: jobs of a kind with a Flow, or of a queue with one, are
// claimed by jobc_claim_flow (schema/0001_baseline.sql; docs/internals.md), and the
// numbers in force are the ones recorded in jobc_limits, where an operator may change
// them (SetLimit); the spec's are the defaults.
type Flow struct {
	// By names the top-level payload fields whose values make the key that Concurrency,
	// Rate, Fair and Sequence apply to; nil makes the whole kind (or queue) one key.
	// Each must be a required scalar field of every payload version.
	By []string
	// Concurrency is how many jobs of one key may run at once, fleet-wide; 0: no limit.
	Concurrency int
	// Rate limits how many jobs of one key may start in any window of Rate.Per.
	Rate Rate
	// Fair makes claims take keys in turn, one job per key, rather than fill up from
	// whichever key comes first.
	Fair bool
	// Sequence runs one job of a key at a time, in enqueue order; a job of the key
	// that failed holds it until it is retried or deleted.
	Sequence bool
}

// Rate is at most Limit starts in any window of Per; the zero Rate limits nothing.
type Rate struct {
	Limit int
	Per   time.Duration
}

// IsZero says whether r limits nothing.
func (r Rate) IsZero() bool { return r.Limit == 0 }

func (f *Flow) check(kind string, queue bool) error {
	what := "job type " + kind
	if queue {
		what = "queue of job type " + kind
	}
	if err := f.values().check(); err != nil {
		return fmt.Errorf("jobc: %s: %w", what, err)
	}
	switch {
	case queue && (len(f.By) > 0 || f.Fair || f.Sequence):
		return fmt.Errorf("jobc: %s: a queue's flow control has concurrency and rate only", what)
	case f.Sequence && f.Concurrency > 0:
		return fmt.Errorf("jobc: %s: a sequence runs one job per key at a time; drop concurrency", what)
	case (f.Fair || f.Sequence) && len(f.By) == 0:
		return fmt.Errorf("jobc: %s: fairness and sequences need by fields", what)
	case f.Concurrency == 0 && f.Rate.IsZero() && !f.Fair && !f.Sequence:
		return fmt.Errorf("jobc: %s: flow control that controls nothing", what)
	}
	return nil
}

// values are f's numbers.
func (f *Flow) values() LimitValues { return LimitValues{Concurrency: f.Concurrency, Rate: f.Rate} }

// flowed says whether jt's jobs are claimed key by key and so carry a flow key.
func (jt *JobType) flowed() bool { return jt.Flow != nil || jt.QueueFlow != nil }

// flowKey returns the flow key of a job of jt (nil: none): the JSON array of the By
// fields' values, bounded as unique keys are; "[]", the array of no values, when the
// kind is one key. Every key so starts with "[" (or, hashed, "sha256:"), and none is
// empty: the empty string sorts before every key, where a claim's walk of the keys
// starts (jobc_claim_flow). raw is a payload of the version.
func (jt *JobType) flowKey(version int, raw []byte, doc any) (*string, error) {
	if !jt.flowed() {
		return nil, nil
	}
	key := "[]"
	if jt.Flow != nil && len(jt.Flow.By) > 0 {
		values, err := payloadValues(jt.schemas[version], raw, doc, jt.Flow.By)
		if err != nil {
			return nil, fmt.Errorf("flow key: %w", err)
		}
		b, err := json.Marshal(values)
		if err != nil {
			return nil, fmt.Errorf("flow key: %w", err)
		}
		key = boundKey(string(b))
	}
	return &key, nil
}

// registerLimits records the spec's flow control of the worker's job types and their
// queues in jobc_limits, before the first claim reads them: the spec's values are the
// defaults an operator's override (SetLimit) replaces.
func (w *Worker) registerLimits(ctx context.Context) error {
	queues := map[string]*Flow{}
	for _, jt := range w.jobTypes() {
		if jt.Flow != nil {
			if err := w.starting().RegisterLimits(ctx, limitsParams(LimitKind, jt.Kind, jt.Flow)); err != nil {
				return fmt.Errorf("jobc: record the flow control of job type %s: %w", jt.Kind, dberr.Describe(err))
			}
		}
		if jt.QueueFlow != nil {
			queues[jt.Queue] = jt.QueueFlow
		}
	}
	for name, f := range queues {
		if err := w.starting().RegisterLimits(ctx, limitsParams(LimitQueue, name, f)); err != nil {
			return fmt.Errorf("jobc: record the flow control of queue %s: %w", name, dberr.Describe(err))
		}
	}
	return nil
}

func limitsParams(scope LimitScope, name string, f *Flow) db.RegisterLimitsParams {
	p := db.RegisterLimitsParams{Scope: string(scope), Name: name, ByFields: f.By, Fair: f.Fair, Sequence: f.Sequence}
	if p.ByFields == nil {
		p.ByFields = []string{}
	}
	p.SpecConcurrency, p.SpecRateLimit, p.SpecRatePerSeconds = f.values().columns()
	return p
}

// LimitScope says what a limit applies to: the jobs of a kind, or of a queue.
type LimitScope string

const (
	LimitKind  LimitScope = "kind"
	LimitQueue LimitScope = "queue"
)

// flowKeyerSlice is how many jobs of a flow kind one run of the flow keyer reads.
const flowKeyerSlice = 1000

// flowKeyer gives flow keys to the available jobs of the worker's flow kinds that
// have none: a producer built before the kind gained flow control (a deploy under
// way) enqueued them, and a worker that claims the kind key by key never claims a job
// without a key. It reads each kind's available jobs a slice at a time, in the order
// of the claim index, and starts over at the end, so a run costs a bounded read
// however many jobs wait, and every job is reached within a lap.
type flowKeyer struct {
	q     *db.Queries
	log   *slog.Logger
	kinds []*flowKeyerKind
}

type flowKeyerKind struct {
	queue, kind string // kind or alias, as stored
	jt          *JobType
	at          db.UnkeyedJobsParams // where the next slice starts
}

// FlowKeyerResult is what one run of the flow keyer did: jobs of flow kinds it gave
// the flow key their producer did not.
type FlowKeyerResult struct {
	Keyed int64
}

func newFlowKeyer(q *db.Queries, log *slog.Logger, queues []*queue, kinds map[string]*registration) *flowKeyer {
	k := &flowKeyer{q: q, log: log}
	for _, qu := range queues {
		for _, name := range qu.claim.FlowKinds() {
			r := kinds[name]
			k.kinds = append(k.kinds, &flowKeyerKind{queue: qu.name, kind: name, jt: r.jt, at: db.UnkeyedJobsParams{AfterVersion: -1}})
		}
	}
	return k
}

// RunOnce reads the next slice of each flow kind and keys the jobs in it that lack a
// key.
func (k *flowKeyer) RunOnce(ctx context.Context) (FlowKeyerResult, error) {
	var res FlowKeyerResult
	for _, fk := range k.kinds {
		n, err := fk.run(ctx, k.q, k.log)
		res.Keyed += n
		if err != nil {
			return res, err
		}
		if n > 0 {
			k.log.WarnContext(ctx, "jobc worker: gave flow keys to jobs enqueued without one; a producer without this kind's flow control is still running",
				"kind", fk.kind, "queue", fk.queue, "jobs", n)
		}
	}
	return res, nil
}

func (fk *flowKeyerKind) run(ctx context.Context, q *db.Queries, log *slog.Logger) (int64, error) {
	p := fk.at
	p.Queue, p.Kind, p.Max = fk.queue, fk.kind, flowKeyerSlice
	rows, err := q.UnkeyedJobs(ctx, p)
	if err != nil {
		return 0, fmt.Errorf("read jobs of %s without a flow key: %w", fk.kind, dberr.Describe(err))
	}
	if len(rows) < flowKeyerSlice {
		fk.at = db.UnkeyedJobsParams{AfterVersion: -1} // the lap is done: start over
	} else {
		last := rows[len(rows)-1]
		fk.at = db.UnkeyedJobsParams{AfterVersion: last.PayloadVersion, AfterPriority: last.Priority, AfterAvailableAt: last.AvailableAt, AfterID: last.ID}
	}
	var ids []int64
	var keys []string
	for _, r := range rows {
		if !r.Unkeyed {
			continue
		}
		key, err := fk.jt.flowKey(int(r.PayloadVersion), r.Payload, nil)
		if err != nil {
			// A stored payload is JSON, so this does not happen; if it did, the job
			// would wait for a worker that claims the kind without keys.
			log.ErrorContext(ctx, "jobc worker: cannot compute a job's flow key", "job_id", r.ID, "kind", fk.kind, "err", err)
			continue
		}
		ids, keys = append(ids, r.ID), append(keys, *key)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	n, err := q.SetFlowKeys(ctx, db.SetFlowKeysParams{IDs: ids, Keys: keys})
	if err != nil {
		return 0, fmt.Errorf("give %d jobs of %s their flow keys: %w", len(ids), fk.kind, dberr.Describe(err))
	}
	return n, nil
}

// String writes r as ParseRate reads it, LIMIT/PERIOD with the period's zero units
// left off: "100/1m", not "100/1m0s"; "none" for the zero Rate.
func (r Rate) String() string {
	if r.IsZero() {
		return "none"
	}
	per := r.Per.String()
	if strings.HasSuffix(per, "m0s") {
		per = strings.TrimSuffix(per, "0s")
	}
	if strings.HasSuffix(per, "h0m") {
		per = strings.TrimSuffix(per, "0m")
	}
	return strconv.Itoa(r.Limit) + "/" + per
}

// ParseRate reads a rate written LIMIT/PERIOD, as the CLI, the dashboard and Rate.String
// write it: "100/1m" is at most 100 starts in any minute. A unit alone stands for one
// of it ("100/m" is "100/1m").
func ParseRate(s string) (Rate, error) {
	n, per, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Rate{}, fmt.Errorf("rate %q: want LIMIT/PERIOD, such as 100/1m", s)
	}
	limit, err := strconv.Atoi(n)
	if err != nil || limit < 1 {
		return Rate{}, fmt.Errorf("rate %q: %q is not a count of at least 1 (want LIMIT/PERIOD, such as 100/1m)", s, n)
	}
	d, err := time.ParseDuration(per)
	if err != nil {
		d, err = time.ParseDuration("1" + per)
	}
	if err != nil || d <= 0 {
		return Rate{}, fmt.Errorf("rate %q: %q is not a positive duration (want LIMIT/PERIOD, such as 100/1m)", s, per)
	}
	return Rate{Limit: limit, Per: d}, nil
}
