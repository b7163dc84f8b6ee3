package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// A job type with a result contract (JobType.ResultVersions; result: in the spec) has
// handlers that return a typed result with their success. The result is checked
// against the result's write version, stored with the job as it completes, in the
// statement that completes it (jobc_finish), and read back, from any version this
// build knows, upcast to the newest, by JobResult.

// HasResult says whether jt's handlers return a result (HandleResult).
func (jt *JobType) HasResult() bool { return jt.result != nil }

// HandleResult registers fn as the handler of jt, a job type with a result contract:
// payloads reach fn as Handle gives them to its handlers, and the R that fn returns
// with a nil error is encoded, checked against the result's write version and stored
// with the job as it completes. A result that does not match its schema is the
// attempt's error (class invalid_result), retried as the job's backoff says: the job
// does not complete without its result. Generated Register functions call
// HandleResult for the job types with result: in their spec.
func HandleResult[T, R any](w *Worker, jt *JobType, fn func(ctx context.Context, job *Job, p T) (R, error)) error {
	if jt.result == nil {
		return fmt.Errorf("jobc: register %s: the job type declares no result: register its handler with Handle", jt.Kind)
	}
	decode := decoder[T](jt)
	return w.register(&registration{jt: jt, run: func(ctx context.Context, job *Job, version int, payload []byte) ([]byte, error) {
		p, err := decode(version, payload)
		if err != nil {
			return nil, err
		}
		r, err := fn(ctx, job, p)
		if err != nil {
			return nil, err
		}
		return jt.encodeResult(r)
	}})
}

// HandleTxResult is HandleResult for a transactional handler (HandleTx): the result is
// stored by the statement that completes the job in fn's transaction.
func HandleTxResult[T, R any](w *Worker, jt *JobType, fn func(ctx context.Context, tx pgx.Tx, job *Job, p T) (R, error)) error {
	if jt.result == nil {
		return fmt.Errorf("jobc: register %s: the job type declares no result: register its handler with HandleTx", jt.Kind)
	}
	decode := decoder[T](jt)
	return w.register(&registration{jt: jt, runTx: func(ctx context.Context, tx pgx.Tx, job *Job, version int, payload []byte) ([]byte, error) {
		p, err := decode(version, payload)
		if err != nil {
			return nil, err
		}
		r, err := fn(ctx, tx, job, p)
		if err != nil {
			return nil, err
		}
		return jt.encodeResult(r)
	}})
}

// classInvalidResult is the class of an attempt whose handler returned a result that
// does not match the result's schema.
const classInvalidResult = "invalid_result"

// encodeResult encodes a handler's result as the result's write version, refusing
// what does not match its schema or would not be read back exactly (as enqueue
// refuses such payloads).
func (jt *JobType) encodeResult(r any) ([]byte, error) {
	raw, _, err := jt.result.marshalPayload(jt.ResultWriteVersion, r, false)
	if err != nil {
		return nil, &ClassError{Class: classInvalidResult, Err: resultError(err)}
	}
	return raw, nil
}

// resultError turns an error of the result contract, whose machinery is the
// payloads', into one that says it is about a result.
func resultError(err error) error {
	var pe *PayloadError
	if errors.As(err, &pe) && !pe.Result {
		re := *pe
		re.Result = true
		return &re
	}
	return err
}

// JobResult returns the result of job id, a job of jt, decoded into R: the result's
// newest version, upcast from the version its handler stored. It returns ErrJobNotFound
// for an id that no job has (or had, before retention pruned it) and ErrNoResult,
// wrapped with the job's state, for a job that has not completed. Generated code has a
// Get<Type>Result for each job type with a result.
func JobResult[R any](ctx context.Context, dbtx DBTX, jt *JobType, id int64) (R, error) {
	var r R
	if jt.result == nil {
		return r, fmt.Errorf("jobc: result of job %d: job type %s declares no result", id, jt.Kind)
	}
	row, err := db.New(dbtx).JobResult(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, fmt.Errorf("jobc: result of job %d: %w", id, ErrJobNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("jobc: result of job %d: %w", id, dberr.Describe(err))
	}
	if row.Kind != jt.Kind && !slices.Contains(jt.Aliases, row.Kind) {
		return r, fmt.Errorf("jobc: result of job %d: it is a %s job, not %s", id, row.Kind, jt.Kind)
	}
	if row.Result == nil {
		if row.State == db.JobcStateCompleted {
			return r, fmt.Errorf("jobc: result of job %d (%s): it completed without one, before its job type declared a result: %w", id, row.Kind, ErrNoResult)
		}
		return r, fmt.Errorf("jobc: result of job %d (%s): the job is %s: %w", id, row.Kind, row.State, ErrNoResult)
	}
	version := int(*row.ResultVersion)
	newest, err := jt.result.decode(version, row.Result)
	if err != nil {
		return r, fmt.Errorf("jobc: result of job %d: %w", id, resultError(err))
	}
	if err := unmarshalerFor[R]()(newest, &r); err != nil {
		return r, fmt.Errorf("jobc: result of job %d: decode %s result (version %d): %w", id, jt.Kind, version, err)
	}
	return r, nil
}

// CheckResultUpcast is CheckUpcast for jt's results: it runs a result of version from
// through what JobResult does before decoding it. jobc check calls it on sample
// documents of every older result version.
func (jt *JobType) CheckResultUpcast(from int, result []byte) ([]byte, error) {
	if jt.result == nil {
		return nil, fmt.Errorf("jobc: job type %s declares no result", jt.Kind)
	}
	out, err := jt.result.CheckUpcast(from, result)
	return out, resultError(err)
}
