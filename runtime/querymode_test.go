package runtime_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// TestEveryQueryExecModeWritesAndReads: the job and event columns are domains
// (jobc_time, jobc_priority, jobc_positive, jobc_count), which pgx knows by no OID, and
// PostgreSQL gives a parameter written straight into such a column the domain's type.
// Whatever query mode the application's pool uses (the cached statements of the
// default, or the simple protocol and Exec modes that poolers in transaction mode
// need), jobs are enqueued one and many at a time and by unique key, an event is
// published with its subscriber's job, a workflow is started and signalled, and every
// value reads back as written.
func TestEveryQueryExecModeWritesAndReads(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	jt := emailType(t, func(jt *runtime.JobType) { jt.Priority, jt.MaxAttempts = 7, 4 })
	unique := emailType(t, func(jt *runtime.JobType) { jt.Kind, jt.Unique = "unique_email", &runtime.Unique{Fields: []string{"n"}} })
	ship, _ := shopTypes(t)
	et := orderPaid(t, 1, runtime.Subscriber{Job: ship, Version: 1})
	wt, err := runtime.NewWorkflowType(runtime.WorkflowType{
		Name: "modes", InputWriteVersion: 1, InputVersions: []runtime.Version{{Number: 1, Schema: emailSchema}},
		Signals: []runtime.Signal{{Name: "paid", WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: emailSchema}}}},
		Steps: []runtime.Step{
			{Name: "paid", Wait: &runtime.Wait{Signal: "paid", Timeout: time.Hour}},
			{Name: "mail", Job: jt, After: []string{"paid"}, Map: map[string]string{"n": "paid.result.n", "email": "input.email"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []pgx.QueryExecMode{
		pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe, pgx.QueryExecModeDescribeExec,
		pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol,
	} {
		t.Run(mode.String(), func(t *testing.T) {
			cfg, err := pgxpool.ParseConfig(pgtest.SchemaConnString(t, pgtest.SchemaOf(pool)))
			if err != nil {
				t.Fatal(err)
			}
			cfg.ConnConfig.DefaultQueryExecMode = mode
			p, err := pgxpool.NewWithConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			runAt := time.Now().Add(time.Hour).Truncate(time.Microsecond)
			one, err := runtime.Enqueue(ctx, p, jt, emailPayload{N: 1, Email: "ada@example.com"}, runtime.RunAt(runAt))
			if err != nil {
				t.Fatalf("Enqueue: %v", err)
			}
			many, err := runtime.EnqueueMany(ctx, p, jt, []emailPayload{{N: 2, Email: "b@example.com"}, {N: 3, Email: "c@example.com"}})
			if err != nil {
				t.Fatalf("EnqueueMany: %v", err)
			}
			first, err := runtime.Enqueue(ctx, p, unique, emailPayload{N: 9, Email: "u@example.com"})
			if err != nil || first.Duplicate {
				t.Fatalf("Enqueue unique: %+v, %v; want a new job", first, err)
			}
			again, err := runtime.Enqueue(ctx, p, unique, emailPayload{N: 9, Email: "u@example.com"})
			if err != nil || !again.Duplicate || again.ID != first.ID {
				t.Errorf("the same unique job again: %+v, %v; want job %d as a duplicate", again, err, first.ID)
			}
			if _, err := runtime.CancelJob(ctx, p, first.ID); err != nil { // the next mode's job takes the key
				t.Fatalf("CancelJob: %v", err)
			}
			wf, err := runtime.StartWorkflow(ctx, p, wt, emailPayload{N: 1, Email: "wf@example.com"})
			if err != nil {
				t.Fatalf("StartWorkflow: %v", err)
			}
			if err := runtime.SignalWorkflow(ctx, p, wt, wf, "paid", emailPayload{N: 4, Email: "x@example.com"}); err != nil {
				t.Fatalf("SignalWorkflow: %v", err)
			}
			if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs WHERE workflow_id = $1 AND payload->>'n' = '4' AND payload->>'email' = 'wf@example.com'`, int64(wf)); n != 1 {
				t.Errorf("workflow %d: %d jobs of its mail step with the signal's n and the input's email, want 1", wf, n)
			}
			pub, err := runtime.Publish(ctx, p, et, orderPaidV1Payload{OrderID: "o-" + mode.String(), Amount: 5})
			if err != nil {
				t.Fatalf("Publish: %v", err)
			}
			got, err := runtime.GetJob(ctx, p, one.ID)
			if err != nil {
				t.Fatalf("GetJob: %v", err)
			}
			if got.Priority != 7 || got.PayloadVersion != 1 || got.MaxAttempts != 4 || got.Attempt != 0 ||
				!got.AvailableAt.Equal(runAt) || got.State != runtime.StateScheduled {
				t.Errorf("job %d reads back as priority %d, version %d, attempts %d of %d, %s at %s; want 7, 1, 0 of 4, scheduled at %s",
					one.ID, got.Priority, got.PayloadVersion, got.Attempt, got.MaxAttempts, got.State, got.AvailableAt, runAt)
			}
			ids := []int64{one.ID, many[0].ID, many[1].ID, pub.Jobs[0].ID}
			page, err := runtime.ListJobs(ctx, p, runtime.JobFilter{JobSelection: runtime.JobSelection{IDs: ids}})
			if err != nil {
				t.Fatalf("ListJobs: %v", err)
			}
			if len(page.Jobs) != len(ids) {
				t.Fatalf("ListJobs found %d of the jobs %v", len(page.Jobs), ids)
			}
			for _, j := range page.Jobs {
				if j.CreatedAt.IsZero() || j.AvailableAt.IsZero() || j.MaxAttempts < 1 {
					t.Errorf("job %d (%s) reads back with created %s, available %s, max attempts %d",
						j.ID, j.Kind, j.CreatedAt, j.AvailableAt, j.MaxAttempts)
				}
			}
			if n := countRows(t, pool, `SELECT count(*) FROM jobc_events WHERE id = $1 AND created_at <= now() AND available_at <= now()`, pub.ID); n != 1 {
				t.Errorf("event %d: %d rows with finite times written now, want 1", pub.ID, n)
			}
		})
	}
}
