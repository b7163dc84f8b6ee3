package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime"
)

// receiptV1 is version 1 of the test result; receipt, the newest (version 2), adds a
// currency with a default, so a version 1 result reads as version 2 with it filled in.
type receiptV1 struct {
	Receipt string `json:"receipt"`
	Cents   int64  `json:"cents"`
}

type receipt struct {
	Receipt  string `json:"receipt"`
	Cents    int64  `json:"cents"`
	Currency string `json:"currency"`
}

const (
	receiptSchemaV1 = `{"type":"object","additionalProperties":false,"required":["receipt","cents"],
		"properties":{"receipt":{"type":"string","minLength":1},"cents":{"type":"integer","minimum":0}}}`
	receiptSchemaV2 = `{"type":"object","additionalProperties":false,"required":["receipt","cents","currency"],
		"properties":{"receipt":{"type":"string","minLength":1},"cents":{"type":"integer","minimum":0},
		"currency":{"type":"string","default":"EUR"}}}`
)

// resultType is the email job type with a result contract of two versions, written as
// version 1: the build of a fleet that has not yet moved on to version 2.
func resultType(t *testing.T, tweak func(*runtime.JobType)) *runtime.JobType {
	t.Helper()
	return emailType(t, func(jt *runtime.JobType) {
		jt.Kind = "charge"
		jt.ResultWriteVersion = 1
		jt.ResultVersions = []runtime.Version{{Number: 1, Schema: receiptSchemaV1}, {Number: 2, Schema: receiptSchemaV2}}
		if tweak != nil {
			tweak(jt)
		}
	})
}

// storedResult reads job id's stored result and its version as text ("" and 0 for none).
func storedResult(t *testing.T, pool *pgxpool.Pool, id int64) (string, int) {
	t.Helper()
	var res *string
	var v *int
	if err := pool.QueryRow(t.Context(), `SELECT result::text, result_version FROM jobc_jobs_finished WHERE id = $1`, id).Scan(&res, &v); err != nil {
		t.Fatalf("job %d: %v", id, err)
	}
	if res == nil || v == nil {
		return "", 0
	}
	return *res, *v
}

// TestJobResults: a handler's result is stored with its job as it completes, in the
// version it was written as, and JobResult reads it back upcast to the newest version;
// before the job completes, and for a job that failed, there is no result, and the
// error names the job's state.
func TestJobResults(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	jt := resultType(t, nil)
	e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1250, Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runtime.JobResult[receipt](ctx, pool, jt, e.ID); !errors.Is(err, runtime.ErrNoResult) || !strings.Contains(err.Error(), "available") {
		t.Errorf("result of a waiting job: %v; want ErrNoResult naming its state, available", err)
	}
	if _, err := runtime.JobResult[receipt](ctx, pool, jt, e.ID+1000); !errors.Is(err, runtime.ErrJobNotFound) {
		t.Errorf("result of an unknown job: %v; want ErrJobNotFound", err)
	}

	w := runtime.NewWorker(pool, testConfig(nil))
	if err := runtime.HandleResult(w, jt, func(_ context.Context, job *runtime.Job, p emailPayload) (receiptV1, error) {
		return receiptV1{Receipt: fmt.Sprintf("r-%d", job.ID), Cents: int64(p.N)}, nil
	}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	waitJob(t, pool, e.ID, runtime.StateCompleted, 10*time.Second)

	raw, v := storedResult(t, pool, e.ID)
	if want := fmt.Sprintf(`{"cents": 1250, "receipt": "r-%d"}`, e.ID); raw != want || v != 1 {
		t.Errorf("stored result %s (version %d); want %s (version 1)", raw, v, want)
	}
	got, err := runtime.JobResult[receipt](ctx, pool, jt, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := (receipt{Receipt: fmt.Sprintf("r-%d", e.ID), Cents: 1250, Currency: "EUR"}); got != want {
		t.Errorf("JobResult = %+v; want %+v (version 1 upcast to 2, the default filled in)", got, want)
	}
	other := emailType(t, nil)
	if _, err := runtime.JobResult[receipt](ctx, pool, resultType(t, func(jt *runtime.JobType) { jt.Kind = "refund" }), e.ID); err == nil || !strings.Contains(err.Error(), "charge job, not refund") {
		t.Errorf("result of a charge job read as a refund: %v; want an error naming both kinds", err)
	}
	if _, err := runtime.JobResult[receipt](ctx, pool, other, e.ID); err == nil || !strings.Contains(err.Error(), "declares no result") {
		t.Errorf("result through a job type without one: %v; want an error saying so", err)
	}
}

// TestInvalidResultIsTheAttemptsError: a result that does not match its schema is not
// stored; the attempt fails with class invalid_result and the field it got wrong, the
// job retries as its backoff says and, out of attempts, fails with no result.
func TestInvalidResultIsTheAttemptsError(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	jt := resultType(t, func(jt *runtime.JobType) { jt.MaxAttempts = 2 })
	e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	w := runtime.NewWorker(pool, testConfig(nil))
	if err := runtime.HandleResult(w, jt, func(context.Context, *runtime.Job, emailPayload) (receiptV1, error) {
		return receiptV1{Receipt: "r", Cents: -5}, nil
	}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	info := waitJob(t, pool, e.ID, runtime.StateFailed, 10*time.Second)
	if len(info.Errors) != 2 {
		t.Fatalf("%d attempt errors; want 2 (both attempts): %+v", len(info.Errors), info.Errors)
	}
	for _, ae := range info.Errors {
		if ae.Class != "invalid_result" || !strings.Contains(ae.Error, "invalid charge result (version 1): /cents:") {
			t.Errorf("attempt %d: class %q, error %q; want class invalid_result naming /cents of result version 1", ae.Attempt, ae.Class, ae.Error)
		}
	}
	if raw, _ := storedResult(t, pool, e.ID); raw != "" {
		t.Errorf("a failed job stored result %s", raw)
	}
	if _, err := runtime.JobResult[receipt](ctx, pool, jt, e.ID); !errors.Is(err, runtime.ErrNoResult) || !strings.Contains(err.Error(), "failed") {
		t.Errorf("result of a failed job: %v; want ErrNoResult naming its state, failed", err)
	}
}

// TestResultsInBatchesWithJobsWithout: the outcomes of jobs with and without results
// are recorded together, each job with its own result, by position in the batch, and
// the jobs without one with none; a job of a flow kind that passes its place on
// (CompleteJobsPassingOn) stores its result as well.
func TestResultsInBatchesWithJobsWithout(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	charge := resultType(t, nil)
	plain := emailType(t, func(jt *runtime.JobType) { jt.Kind = "notify" })
	chain := resultType(t, func(jt *runtime.JobType) {
		jt.Kind = "charge_in_turn"
		jt.Flow = &runtime.Flow{By: []string{"email"}, Concurrency: 1}
	})
	const n = 60
	var ids []int64
	for _, jt := range []*runtime.JobType{charge, plain, chain} {
		ps := make([]emailPayload, n)
		for i := range ps {
			ps[i] = emailPayload{N: i, Email: "ada@example.com"}
		}
		es, err := runtime.EnqueueMany(ctx, pool, jt, ps)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			ids = append(ids, e.ID)
		}
	}
	w := runtime.NewWorker(pool, testConfig(map[string]runtime.QueueConfig{"email": {MaxWorkers: 20}}))
	result := func(_ context.Context, job *runtime.Job, p emailPayload) (receiptV1, error) {
		return receiptV1{Receipt: fmt.Sprintf("%s-%d", job.Kind, job.ID), Cents: int64(p.N)}, nil
	}
	if err := runtime.HandleResult(w, charge, result); err != nil {
		t.Fatal(err)
	}
	if err := runtime.HandleResult(w, chain, result); err != nil {
		t.Fatal(err)
	}
	if err := runtime.Handle(w, plain, func(context.Context, *runtime.Job, emailPayload) error { return nil }); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	waitDrained(t, pool, 3*n, 30*time.Second)

	rows, err := pool.Query(ctx, `SELECT id, kind, (payload->>'n')::int, result->>'receipt', (result->>'cents')::int, result_version
		FROM jobc_jobs_finished ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	type stored struct {
		id             int64
		kind           string
		n              int
		receipt        *string
		cents, version *int
	}
	var got []stored
	for rows.Next() {
		var s stored
		if err := rows.Scan(&s.id, &s.kind, &s.n, &s.receipt, &s.cents, &s.version); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ids) {
		t.Fatalf("%d finished jobs; want %d", len(got), len(ids))
	}
	for _, s := range got {
		if s.kind == "notify" {
			if s.receipt != nil || s.version != nil {
				t.Errorf("job %d (notify, no result contract) stored a result: %v", s.id, *s.receipt)
			}
			continue
		}
		if want := fmt.Sprintf("%s-%d", s.kind, s.id); s.receipt == nil || *s.receipt != want || *s.cents != s.n || *s.version != 1 {
			t.Errorf("job %d (%s, n %d): stored receipt %v, cents %v, version %v; want %s, %d, 1", s.id, s.kind, s.n, deref(s.receipt), deref(s.cents), deref(s.version), want, s.n)
		}
	}
	passed := countRows(t, pool, `SELECT count(*) FROM jobc_jobs_finished n WHERE n.kind = 'charge_in_turn'
		AND EXISTS (SELECT 1 FROM jobc_jobs_finished p WHERE p.id <> n.id AND p.kind = n.kind AND p.finished_at = n.attempted_at)`)
	if passed == 0 {
		t.Errorf("no charge_in_turn job started in a completed job's place: the passing-on statement was not exercised")
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestTransactionalResults: a transactional handler's result is stored by the
// statement that completes the job in the handler's transaction; when the handler
// fails, neither its writes nor a result are kept.
func TestTransactionalResults(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	if _, err := pool.Exec(ctx, `CREATE TABLE charges (job_id bigint PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	jt := resultType(t, func(jt *runtime.JobType) { jt.Transactional = true })
	ok, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 7, Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	bad, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 8, Email: "bob@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	w := runtime.NewWorker(pool, testConfig(nil))
	if err := runtime.HandleTx(w, jt, func(context.Context, pgx.Tx, *runtime.Job, emailPayload) error { return nil }); err == nil {
		t.Error("HandleTx took a job type with a result; want an error naming HandleTxResult")
	}
	if err := runtime.HandleTxResult(w, jt, func(ctx context.Context, tx pgx.Tx, job *runtime.Job, p emailPayload) (receiptV1, error) {
		if _, err := tx.Exec(ctx, `INSERT INTO charges VALUES ($1)`, job.ID); err != nil {
			return receiptV1{}, err
		}
		if p.Email == "bob@example.com" {
			return receiptV1{}, errors.New("card declined")
		}
		return receiptV1{Receipt: "tx", Cents: int64(p.N)}, nil
	}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	waitJob(t, pool, ok.ID, runtime.StateCompleted, 10*time.Second)
	waitJob(t, pool, bad.ID, runtime.StateFailed, 10*time.Second)
	got, err := runtime.JobResult[receipt](ctx, pool, jt, ok.ID)
	if want := (receipt{Receipt: "tx", Cents: 7, Currency: "EUR"}); err != nil || got != want {
		t.Errorf("result of the transactional job: %+v, %v; want %+v", got, err, want)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM charges WHERE job_id = $1`, bad.ID); n != 0 {
		t.Errorf("the failed handler's write was kept")
	}
	if raw, _ := storedResult(t, pool, bad.ID); raw != "" {
		t.Errorf("the failed transactional job stored result %s", raw)
	}
}

// TestResultContractIsChecked: a job type's result versions compile and are checked
// as payload versions are, and the handler must be registered with the function that
// matches whether the job type has a result.
func TestResultContractIsChecked(t *testing.T) {
	t.Parallel()
	base := runtime.JobType{Kind: "charge", Queue: "q", MaxAttempts: 1, WriteVersion: 1,
		Versions: []runtime.Version{{Number: 1, Schema: emailSchema}}}
	for _, c := range []struct {
		name  string
		tweak func(*runtime.JobType)
		want  string
	}{
		{"write version unknown", func(jt *runtime.JobType) {
			jt.ResultWriteVersion, jt.ResultVersions = 3, []runtime.Version{{Number: 1, Schema: receiptSchemaV1}}
		}, "job type charge: result write version 3 is not one of its versions"},
		{"bad schema", func(jt *runtime.JobType) {
			jt.ResultWriteVersion, jt.ResultVersions = 1, []runtime.Version{{Number: 1, Schema: `{"type": 5}`}}
		}, "job type charge: result version 1 schema"},
		{"write version without versions", func(jt *runtime.JobType) { jt.ResultWriteVersion = 1 },
			"result write version 1 without result versions"},
	} {
		jt := base
		c.tweak(&jt)
		if _, err := runtime.NewJobType(jt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error containing %q", c.name, err, c.want)
		}
	}
	w := runtime.NewWorker(nil, testConfig(nil))
	withResult := resultType(t, nil)
	if err := runtime.Handle(w, withResult, func(context.Context, *runtime.Job, emailPayload) error { return nil }); err == nil || !strings.Contains(err.Error(), "HandleResult") {
		t.Errorf("Handle of a job type with a result: %v; want an error naming HandleResult", err)
	}
	if err := runtime.HandleResult(w, emailType(t, nil), func(context.Context, *runtime.Job, emailPayload) (receiptV1, error) { return receiptV1{}, nil }); err == nil || !strings.Contains(err.Error(), "declares no result") {
		t.Errorf("HandleResult of a job type without a result: %v; want an error saying so", err)
	}
}

// TestResultUpcasts: results of an older version are upcast by the declared changes
// of the versions after it, as payloads are, and a result that fails its version's
// schema is reported as a result's problem.
func TestResultUpcasts(t *testing.T) {
	t.Parallel()
	jt := resultType(t, func(jt *runtime.JobType) {
		jt.ResultVersions = append(jt.ResultVersions, runtime.Version{Number: 3,
			Schema: `{"type":"object","additionalProperties":false,"required":["receipt_id","cents","currency"],
				"properties":{"receipt_id":{"type":"string"},"cents":{"type":"integer"},"currency":{"type":"string"}}}`,
			Upcast: runtime.Changes(runtime.RenameField("receipt", "receipt_id"))})
	})
	got, err := jt.CheckResultUpcast(1, []byte(`{"receipt":"r-1","cents":5}`))
	if want := `{"cents":5,"currency":"EUR","receipt_id":"r-1"}`; err != nil || string(got) != want {
		t.Errorf("CheckResultUpcast(1) = %s, %v; want %s (the default of 2 filled in, then renamed by 3)", got, err, want)
	}
	_, err = jt.CheckResultUpcast(1, []byte(`{"receipt":"","cents":5}`))
	var pe *runtime.PayloadError
	if !errors.As(err, &pe) || !pe.Result || !strings.Contains(err.Error(), "invalid charge result (version 1): /receipt:") {
		t.Errorf("CheckResultUpcast of an invalid result: %v; want a result's PayloadError naming /receipt", err)
	}
	if _, err := emailType(t, nil).CheckResultUpcast(1, []byte(`{}`)); err == nil {
		t.Error("CheckResultUpcast of a job type without a result succeeded")
	}
}
