package runtime

import (
	"context"
	"fmt"
	"sort"

	"github.com/jackc/pgx/v5"
)

// registration is one job type's handler, type-erased. Exactly one of run and runTx is
// set. Each returns the job's result, encoded, when its job type has one
// (HandleResult), and nil otherwise.
type registration struct {
	jt    *JobType
	run   func(ctx context.Context, job *Job, version int, payload []byte) (result []byte, err error)
	runTx func(ctx context.Context, tx pgx.Tx, job *Job, version int, payload []byte) (result []byte, err error)
}

// Handle registers fn as the handler of jt. Stored payloads of every version jt knows
// are validated, upcast to the newest version and decoded into T, the newest payload
// type; a payload that fails its schema fails the job without retries and is kept.
// Generated Register functions call Handle. A job type with a result contract takes
// HandleResult instead.
func Handle[T any](w *Worker, jt *JobType, fn func(ctx context.Context, job *Job, p T) error) error {
	if jt.result != nil {
		return fmt.Errorf("jobc: register %s: the job type declares a result: register its handler with HandleResult", jt.Kind)
	}
	decode := decoder[T](jt)
	return w.register(&registration{jt: jt, run: func(ctx context.Context, job *Job, version int, payload []byte) ([]byte, error) {
		p, err := decode(version, payload)
		if err != nil {
			return nil, err
		}
		return nil, fn(ctx, job, p)
	}})
}

// HandleTx registers fn as the transactional handler of jt: fn gets a transaction
// that also marks the job completed, so its database writes happen exactly once. If fn
// returns an error, panics, or the commit fails, the transaction rolls back and the job
// is retried (or failed) like any other. A job type with a result contract takes
// HandleTxResult instead.
func HandleTx[T any](w *Worker, jt *JobType, fn func(ctx context.Context, tx pgx.Tx, job *Job, p T) error) error {
	if jt.result != nil {
		return fmt.Errorf("jobc: register %s: the job type declares a result: register its handler with HandleTxResult", jt.Kind)
	}
	decode := decoder[T](jt)
	return w.register(&registration{jt: jt, runTx: func(ctx context.Context, tx pgx.Tx, job *Job, version int, payload []byte) ([]byte, error) {
		p, err := decode(version, payload)
		if err != nil {
			return nil, err
		}
		return nil, fn(ctx, tx, job, p)
	}})
}

func (w *Worker) register(r *registration) error {
	if w.started.Load() {
		return fmt.Errorf("jobc: register %s: the worker is already running", r.jt.Kind)
	}
	for _, name := range append([]string{r.jt.Kind}, r.jt.Aliases...) {
		if _, dup := w.kinds[name]; dup {
			return fmt.Errorf("jobc: register %s: kind %q already has a handler", r.jt.Kind, name)
		}
	}
	for _, name := range append([]string{r.jt.Kind}, r.jt.Aliases...) {
		w.kinds[name] = r
	}
	return nil
}

// jobTypes returns each registered job type once, ordered by kind.
func (w *Worker) jobTypes() []*JobType {
	seen := map[*JobType]bool{}
	var out []*JobType
	for _, r := range w.kinds {
		if !seen[r.jt] {
			seen[r.jt] = true
			out = append(out, r.jt)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}
