package runtime_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/internal/testkit"
	"github.com/jobc-dev/jobc/runtime"
)

// grantsEnv is a throwaway cluster with a migration role that owns the jobc tables in
// schema app, and worker, producer and read-only roles that connect as themselves.
type grantsEnv struct {
	cluster                            *pgtest.Cluster
	admin                              *pgx.Conn
	migrator, worker, producer, reader string
}

func newGrantsEnv(t *testing.T) *grantsEnv {
	t.Helper()
	ctx := t.Context()
	cluster, err := pgtest.StartCluster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := cluster.Destroy(ctx); err != nil {
			t.Errorf("destroy cluster: %v", err)
		}
	})
	admin, err := pgx.Connect(ctx, cluster.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(context.Background()) })

	var b [4]byte
	_, _ = rand.Read(b[:])
	suffix := hex.EncodeToString(b[:])
	e := &grantsEnv{cluster: cluster, admin: admin,
		migrator: "jobc_migrator_" + suffix, worker: "jobc_worker_" + suffix,
		producer: "jobc_producer_" + suffix, reader: "jobc_reader_" + suffix}
	for _, r := range []string{e.migrator, e.worker, e.producer, e.reader} {
		e.exec(t, "CREATE ROLE "+pgx.Identifier{r}.Sanitize()+" LOGIN")
		// Roles are cluster-wide: drop them even though the cluster goes too.
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			id := pgx.Identifier{r}.Sanitize()
			for _, s := range []string{"DROP OWNED BY " + id + " CASCADE", "DROP ROLE " + id} {
				if _, err := admin.Exec(ctx, s); err != nil {
					t.Errorf("%s: %v", s, err)
				}
			}
		})
	}
	e.exec(t, "CREATE SCHEMA app AUTHORIZATION "+pgx.Identifier{e.migrator}.Sanitize())
	return e
}

func (e *grantsEnv) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := e.admin.Exec(t.Context(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// pool connects as role with search_path set to schema; log, if set, traces every
// statement.
func (e *grantsEnv) pool(t *testing.T, role, schema string, log *statementLog) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(e.cluster.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.User = role
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	if log != nil {
		cfg.ConnConfig.Tracer = log
	}
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// wantDenied asserts err is insufficient_privilege and its message names object.
func wantDenied(t *testing.T, what string, err error, object string) {
	t.Helper()
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
		t.Errorf("%s: got %v, want SQLSTATE 42501 (insufficient_privilege)", what, err)
		return
	}
	if !strings.Contains(err.Error(), object) {
		t.Errorf("%s: %q does not name %s", what, err, object)
	}
}

// TestLeastPrivilegeRoles runs a producer and a real worker connected as the
// restricted roles that ApplyGrants sets up, through every statement in queries/
// except the migration runner's, and shows that what the roles must not do fails with
// insufficient_privilege.
func TestLeastPrivilegeRoles(t *testing.T) {
	t.Parallel()
	e := newGrantsEnv(t)
	ctx := t.Context()

	// The migration role migrates and owns everything.
	migrator := e.pool(t, e.migrator, "app", nil)
	if _, err := runtime.Migrate(ctx, migrator); err != nil {
		t.Fatalf("migrate as the migration role: %v", err)
	}
	roles := runtime.GrantRoles{Worker: e.worker, Producer: e.producer, ReadOnly: e.reader}

	// A role without access to the schema is told where the tables should be.
	if _, err := runtime.ApplyGrants(ctx, e.pool(t, e.worker, "app", nil), roles); err == nil || !strings.Contains(err.Error(), "jobc_jobs is not on the search_path") {
		t.Errorf("ApplyGrants as the worker role before any grant: %v; want an error saying the tables are not found", err)
	}
	missing := runtime.GrantRoles{Worker: e.worker, ReadOnly: "no_such_role_" + e.worker}
	if _, err := runtime.ApplyGrants(ctx, migrator, missing); err == nil || !strings.Contains(err.Error(), `role "no_such_role_`+e.worker+`" does not exist`) {
		t.Errorf("ApplyGrants with a missing role: %v; want an error naming it", err)
	}
	stmts, err := runtime.ApplyGrants(ctx, migrator, roles)
	if err != nil {
		t.Fatalf("ApplyGrants as the migration role: %v", err)
	}
	for _, s := range stmts {
		t.Log(s)
	}
	// Only the owner may grant; anyone else is refused before anything runs.
	if _, err := runtime.ApplyGrants(ctx, e.pool(t, e.worker, "app", nil), roles); err == nil || !strings.Contains(err.Error(), "owned by "+e.migrator) {
		t.Errorf("ApplyGrants as the worker role: %v; want a refusal naming the owner %s", err, e.migrator)
	}

	checkCatalog(t, e)

	workerLog, producerLog, readerLog := newStatementLog("worker"), newStatementLog("producer"), newStatementLog("read-only")
	workerPool := e.pool(t, e.worker, "app", workerLog)
	producerPool := e.pool(t, e.producer, "app", producerLog)
	readerPool := e.pool(t, e.reader, "app", readerLog)

	var logs bytes.Buffer
	var logMu sync.Mutex
	cfg := runtime.Config{
		Queues:            map[string]runtime.QueueConfig{"grants": {MaxWorkers: 20}},
		Logger:            slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &logMu}, nil)),
		PollInterval:      50 * time.Millisecond,
		SchedulerInterval: 20 * time.Millisecond,
		LeaseDuration:     3 * time.Second, // heartbeats every second
		RescueInterval:    50 * time.Millisecond,
		PruneInterval:     50 * time.Millisecond,
		ShutdownGrace:     200 * time.Millisecond,
		UpgradePayloads:   true,
		Retention:         runtime.Retention{Completed: -1, Failed: -1, Cancelled: time.Second},
	}
	// Every wait below is bounded by a few leases, the longest interval configured.
	patience := 10 * cfg.LeaseDuration
	dump := func() string {
		logMu.Lock()
		defer logMu.Unlock()
		return fmt.Sprintf("statement failures: %q\nworker log:\n%s", append(workerLog.failures(), producerLog.failures()...), logs.String())
	}
	waitState := func(what string, id int64, want runtime.State) *runtime.JobInfo {
		t.Helper()
		deadline := time.Now().Add(patience)
		for {
			info, err := runtime.GetJob(ctx, readerPool, id)
			if err == nil && info.State == want {
				return info
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: job %d after %s: %+v (err %v), want %s\n%s", what, id, patience, info, err, want, dump())
			}
			time.Sleep(cfg.PollInterval / 5)
		}
	}

	newType := func(kind string, tweak func(*runtime.JobType)) *runtime.JobType {
		t.Helper()
		jt := runtime.JobType{
			Kind: kind, Queue: "grants", Priority: 5, MaxAttempts: 3,
			Backoff:      runtime.Backoff{Kind: runtime.BackoffConstant, Initial: 10 * time.Millisecond},
			WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: emailSchema}},
		}
		if tweak != nil {
			tweak(&jt)
		}
		out, err := runtime.NewJobType(jt)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	okType := newType("grants_ok", nil)
	retryType := newType("grants_retry", nil)
	failType := newType("grants_fail", func(jt *runtime.JobType) { jt.MaxAttempts = 1 })
	blockType := newType("grants_block", nil)
	txType := newType("grants_tx", func(jt *runtime.JobType) { jt.Transactional = true })
	uniqueType := newType("grants_unique", func(jt *runtime.JobType) { jt.Unique = &runtime.Unique{Fields: []string{"n"}} })
	periodicType := newType("grants_periodic", func(jt *runtime.JobType) {
		jt.Schedule = &runtime.Schedule{Cron: "@every 1s", Timezone: "UTC"}
		jt.Versions = []runtime.Version{{Number: 1, Schema: `{"type":"object","properties":{"n":{"type":"integer","default":7},"email":{"type":"string","default":"cron@example.com"}}}`}}
	})
	versions := []runtime.Version{
		{Number: 1, Schema: emailSchema},
		{Number: 2, Schema: emailSchemaV2, Upcast: runtime.Changes(runtime.RenameField("email", "recipient"))},
	}
	oldWriter := newType("grants_versioned", func(jt *runtime.JobType) { jt.Versions = versions })
	newReader := newType("grants_versioned", func(jt *runtime.JobType) { jt.Versions = versions; jt.WriteVersion = 2 })
	snoozeType := newType("grants_snooze", nil)
	// Flow control: claimed key by key (ClaimFlowJobs), its limits recorded at start
	// (RegisterLimits) and its key rows pruned (PruneFlowKeys) by the worker role.
	flowType := newType("grants_flow", func(jt *runtime.JobType) {
		jt.Flow = &runtime.Flow{By: []string{"email"}, Concurrency: 2, Rate: runtime.Rate{Limit: 100, Per: time.Second}}
	})
	// A kind limited to one at a time: its first job's completion passes its place on
	// to the second (CompleteJobsPassingOn).
	passingType := newType("grants_passing", func(jt *runtime.JobType) { jt.Flow = &runtime.Flow{Concurrency: 1} })

	// The producer enqueues: plain, unique (twice), scheduled, many (one statement and
	// COPY), and an old
	// payload version far in the future for the upgrader.
	if err := runtime.CheckSchema(ctx, producerPool); err != nil {
		t.Errorf("CheckSchema as the producer role: %v", err)
	}
	enqueue := func(jt *runtime.JobType, n int, opts ...runtime.EnqueueOption) runtime.Enqueued {
		t.Helper()
		en, err := runtime.Enqueue(ctx, producerPool, jt, emailPayload{N: n, Email: "ada@example.com"}, opts...)
		if err != nil {
			t.Fatalf("enqueue %s as the producer: %v", jt.Kind, err)
		}
		return en
	}
	ok := enqueue(okType, 1)
	flowed := enqueue(flowType, 1)
	flowWaiting := enqueue(flowType, 2, runtime.RunAfter(time.Hour))
	passing := []runtime.Enqueued{enqueue(passingType, 1), enqueue(passingType, 2)}
	// One enqueued by a producer without the kind's flow control, which the worker's
	// flow keyer gives its key (UnkeyedJobs, SetFlowKeys).
	unkeyed := enqueue(newType("grants_flow", nil), 3)
	retried := enqueue(retryType, 1)
	failed := enqueue(failType, 1)
	cancelRunning := enqueue(blockType, 1)
	released := enqueue(blockType, 2)
	inTx := enqueue(txType, 1)
	unique := enqueue(uniqueType, 1)
	if dup := enqueue(uniqueType, 1); !dup.Duplicate || dup.ID != unique.ID {
		t.Errorf("second unique enqueue: %+v, want a duplicate of job %d", dup, unique.ID)
	}
	scheduled := enqueue(okType, 2, runtime.RunAfter(5*cfg.SchedulerInterval))
	cancelPending := enqueue(okType, 3, runtime.RunAfter(time.Hour))
	upgraded := enqueue(oldWriter, 1, runtime.RunAfter(time.Hour))
	many, err := runtime.EnqueueMany(ctx, producerPool, okType, []emailPayload{{N: 10, Email: "a@example.com"}, {N: 11, Email: "b@example.com"}})
	if err != nil || len(many) != 2 {
		t.Fatalf("EnqueueMany as the producer: %v, %v", many, err)
	}
	// The producer publishes a relayed event with an ordering key and a subscriber, once
	// and as a batch (LockEventKeys, InsertEvent, InsertEvents).
	eventType, err := runtime.NewEventType(runtime.EventType{
		Name: "grants_event", Subject: "grants.event", OrderingKey: []string{"email"}, Relay: true,
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: emailSchema}},
		Subscribers: []runtime.Subscriber{{Job: newType("grants_subscriber", nil)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	later := runtime.WithSubscriberOptions(runtime.RunAfter(time.Hour))
	if p, err := runtime.Publish(ctx, producerPool, eventType, emailPayload{N: 1, Email: "a@example.com"}, later); err != nil || p.ID == 0 || len(p.Jobs) != 1 {
		t.Fatalf("Publish as the producer: %+v, %v", p, err)
	}
	if ps, err := runtime.PublishMany(ctx, producerPool, eventType, []emailPayload{{N: 2, Email: "a@example.com"}, {N: 3, Email: "b@example.com"}}, later); err != nil || len(ps) != 2 {
		t.Fatalf("PublishMany as the producer: %+v, %v", ps, err)
	}
	// The producer starts a workflow (StartWorkflow, through jobc_workflow_start): its
	// first step's job returns a result that the second's payload maps. The trigger
	// that advances it runs as the worker role finishes the first job.
	wfFirst := newType("grants_wf_first", func(jt *runtime.JobType) {
		jt.ResultWriteVersion, jt.ResultVersions = 1, []runtime.Version{{Number: 1, Schema: emailSchema}}
	})
	wfSecond := newType("grants_wf_second", nil)
	// A wait step takes the signal the producer sends (SignalWorkflow), and a sleep
	// step's timer is fired by the worker's scheduler (FireWorkflowTimers).
	wfType, err := runtime.NewWorkflowType(runtime.WorkflowType{
		Name: "grants_workflow", InputWriteVersion: 1, InputVersions: []runtime.Version{{Number: 1, Schema: emailSchema}},
		Signals: []runtime.Signal{{Name: "paid", WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: emailSchema}}}},
		Steps: []runtime.Step{
			{Name: "paid", Wait: &runtime.Wait{Signal: "paid", Timeout: time.Hour}},
			{Name: "first", Job: wfFirst, After: []string{"paid"}},
			{Name: "nap", Sleep: time.Millisecond, After: []string{"first"}},
			{Name: "second", Job: wfSecond, After: []string{"nap"}, Map: map[string]string{"n": "first.result.n", "email": "input.email"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	workflow, err := runtime.StartWorkflow(ctx, producerPool, wfType, emailPayload{N: 1, Email: "ada@example.com"})
	if err != nil {
		t.Fatalf("StartWorkflow as the producer: %v", err)
	}
	if err := runtime.SignalWorkflow(ctx, producerPool, wfType, workflow, "paid", emailPayload{N: 7, Email: "ada@example.com"}); err != nil {
		t.Fatalf("SignalWorkflow as the producer: %v", err)
	}
	// A job that makes the claim fail (attempt + 1 overflows; set up by the superuser)
	// is claimed alone and failed (ClaimCandidates, ClaimJobByID, PoisonJob).
	poisoned := enqueue(okType, 6)
	e.exec(t, `UPDATE app.jobc_jobs SET attempt = 2147483647, max_attempts = 2147483647 WHERE id = $1`, poisoned.ID)
	// Two jobs of a worker that died: one has attempts left, one does not. (Set up by
	// the superuser: no role of jobc's writes a lease for a worker that does not exist.)
	snoozer := enqueue(snoozeType, 1)
	rescued, dead := enqueue(okType, 4), enqueue(okType, 5)
	e.exec(t, `UPDATE app.jobc_jobs SET state = 'running', lease_owner = 'ghost',
		lease_expires_at = now() - interval '1 second', attempt = CASE WHEN id = $1 THEN 1 ELSE 3 END
		WHERE id IN ($1, $2)`, rescued.ID, dead.ID)

	// The worker runs as the worker role.
	w := runtime.NewWorker(workerPool, cfg)
	handle := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	emailOK := func(context.Context, *runtime.Job, emailPayload) error { return nil }
	handle(runtime.Handle(w, okType, emailOK))
	handle(runtime.Handle(w, retryType, func(_ context.Context, job *runtime.Job, _ emailPayload) error {
		if job.Attempt == 1 {
			return errors.New("first attempt fails")
		}
		return nil
	}))
	handle(runtime.Handle(w, failType, func(context.Context, *runtime.Job, emailPayload) error { return errors.New("always fails") }))
	handle(runtime.Handle(w, blockType, func(ctx context.Context, _ *runtime.Job, _ emailPayload) error {
		<-ctx.Done()
		return ctx.Err()
	}))
	handle(runtime.HandleTx(w, txType, func(ctx context.Context, tx pgx.Tx, job *runtime.Job, _ emailPayload) error {
		first, err := job.Once(ctx, tx, "charge")
		if err != nil {
			return err
		}
		if !first {
			return errors.New("the step ran before")
		}
		return nil
	}))
	handle(runtime.Handle(w, uniqueType, emailOK))
	handle(runtime.Handle(w, flowType, emailOK))
	handle(runtime.Handle(w, passingType, emailOK))
	handle(runtime.Handle(w, periodicType, emailOK))
	var snoozes atomic.Int32
	handle(runtime.Handle(w, snoozeType, func(_ context.Context, job *runtime.Job, _ emailPayload) error {
		if snoozes.Add(1) == 1 {
			return job.Snooze(cfg.SchedulerInterval)
		}
		return nil
	}))
	handle(runtime.Handle(w, newReader, func(context.Context, *runtime.Job, emailPayloadV2) error { return nil }))
	handle(runtime.HandleResult(w, wfFirst, func(_ context.Context, _ *runtime.Job, p emailPayload) (emailPayload, error) {
		return emailPayload{N: p.N + 41, Email: p.Email}, nil
	}))
	var wfSecondN atomic.Int32
	handle(runtime.Handle(w, wfSecond, func(_ context.Context, _ *runtime.Job, p emailPayload) error {
		wfSecondN.Store(int32(p.N))
		return nil
	}))
	stop := startWorker(t, w)

	waitState("plain job", ok.ID, runtime.StateCompleted)
	waitState("job with flow control", flowed.ID, runtime.StateCompleted)
	for _, en := range passing {
		waitState("job of a kind limited to one at a time", en.ID, runtime.StateCompleted)
	}
	waitState("job of a flow kind enqueued without its key", unkeyed.ID, runtime.StateCompleted)
	if info := waitState("retried job", retried.ID, runtime.StateCompleted); info.Attempt != 2 {
		t.Errorf("retried job completed at attempt %d, want 2", info.Attempt)
	}
	waitState("failing job", failed.ID, runtime.StateFailed)
	if info := waitState("job that made the claim fail", poisoned.ID, runtime.StateFailed); len(info.Errors) == 0 || info.Errors[len(info.Errors)-1].Class != "jobc_poisoned" {
		t.Errorf("job that made the claim fail: %+v; want its last error of class jobc_poisoned", info.Errors)
	}
	waitState("transactional job", inTx.ID, runtime.StateCompleted)
	waitState("unique job", unique.ID, runtime.StateCompleted)
	waitState("scheduled job", scheduled.ID, runtime.StateCompleted)
	waitState("first copied job", many[0].ID, runtime.StateCompleted)
	waitState("second copied job", many[1].ID, runtime.StateCompleted)
	if info := waitState("rescued job", rescued.ID, runtime.StateCompleted); len(info.Errors) != 1 || info.Errors[0].Class != "lease_expired" {
		t.Errorf("rescued job errors %+v, want one lease_expired", info.Errors)
	}
	waitState("job out of attempts after its lease expired", dead.ID, runtime.StateFailed)
	if info := waitState("snoozed job", snoozer.ID, runtime.StateCompleted); info.Attempt != 1 || len(info.Errors) != 0 || snoozes.Load() != 2 {
		t.Errorf("snoozed job completed at attempt %d with errors %+v after %d runs; want attempt 1, no errors, 2 runs", info.Attempt, info.Errors, snoozes.Load())
	}
	for deadline := time.Now().Add(patience); ; time.Sleep(cfg.PollInterval / 5) {
		info, err := runtime.GetWorkflow(ctx, readerPool, workflow)
		if err != nil {
			t.Fatalf("GetWorkflow as the read-only role: %v", err)
		}
		if info.State == runtime.WorkflowCompleted {
			if page, err := runtime.ListWorkflows(ctx, readerPool, runtime.WorkflowFilter{Name: "grants_workflow"}); err != nil || len(page.Workflows) != 1 {
				t.Errorf("ListWorkflows as the read-only role: %+v, %v; want the one workflow", page, err)
			}
			if _, _, err := runtime.CountWorkflows(ctx, readerPool); err != nil {
				t.Errorf("CountWorkflows as the read-only role: %v", err)
			}
			if err := runtime.CancelWorkflow(ctx, workerPool, workflow); !errors.Is(err, runtime.ErrWorkflowEnded) {
				t.Errorf("CancelWorkflow of an ended workflow as the worker role: %v; want ErrWorkflowEnded", err)
			}
			if err := runtime.RetryWorkflow(ctx, workerPool, workflow); !errors.Is(err, runtime.ErrWorkflowNotRetryable) {
				t.Errorf("RetryWorkflow of a completed workflow as the worker role: %v; want ErrWorkflowNotRetryable", err)
			}
			if n := wfSecondN.Load(); n != 42 {
				t.Errorf("the workflow's second step got n %d; want 42, mapped from the first's result", n)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("workflow %d after %s: %s%s\n%s", workflow, patience, info.State, describeSteps(info), dump())
		}
	}
	waitState("job to cancel while it runs", cancelRunning.ID, runtime.StateRunning)
	waitState("job to release at shutdown", released.ID, runtime.StateRunning)

	// The worker role cancels (the control API); the read-only and producer roles
	// cannot.
	if st, err := runtime.CancelJob(ctx, workerPool, cancelRunning.ID); err != nil || st != runtime.StateRunning {
		t.Fatalf("cancel a running job as the worker role: %s, %v", st, err)
	}
	waitState("job cancelled while running", cancelRunning.ID, runtime.StateCancelled)
	if st, err := runtime.CancelJob(ctx, workerPool, cancelPending.ID); err != nil || st != runtime.StateCancelled {
		t.Fatalf("cancel a pending job as the worker role: %s, %v", st, err)
	}
	// Cancelled jobs are kept for a second, then pruned by the worker role.
	deadline := time.Now().Add(cfg.Retention.Cancelled + patience)
	for {
		_, err := runtime.GetJob(ctx, readerPool, cancelPending.ID)
		if errors.Is(err, runtime.ErrJobNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cancelled job %d not pruned after %s: %v\n%s", cancelPending.ID, cfg.Retention.Cancelled+patience, err, dump())
		}
		time.Sleep(cfg.PruneInterval)
	}

	// A periodic occurrence, enqueued by the worker's scheduler under a unique key.
	deadline = time.Now().Add(patience)
	for {
		page, err := runtime.ListJobs(ctx, readerPool, runtime.JobFilter{JobSelection: runtime.JobSelection{
			Kinds: []string{periodicType.Kind}, States: []runtime.State{runtime.StateCompleted}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Jobs) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no periodic job completed after %s\n%s", patience, dump())
		}
		time.Sleep(cfg.SchedulerInterval)
	}
	// The upgrader rewrote the waiting version 1 job to version 2.
	deadline = time.Now().Add(patience)
	for {
		info, err := runtime.GetJob(ctx, readerPool, upgraded.ID)
		if err != nil {
			t.Fatal(err)
		}
		if info.PayloadVersion == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d still at payload version %d after %s\n%s", upgraded.ID, info.PayloadVersion, patience, dump())
		}
		time.Sleep(cfg.SchedulerInterval)
	}
	// The control API as the worker role: retry the failed job (it gets one more
	// attempt and fails again), count and delete, pause and resume the queue.
	onlyFailed := runtime.JobSelection{IDs: []int64{failed.ID}}
	if n, err := runtime.CountRetryableJobs(ctx, workerPool, onlyFailed); err != nil || n != 1 {
		t.Errorf("CountRetryableJobs of the failed job as the worker role: %d, %v; want 1", n, err)
	}
	if _, err := runtime.RetryJob(ctx, workerPool, failed.ID); err != nil {
		t.Fatalf("RetryJob as the worker role: %v", err)
	}
	if info := waitState("retried failed job", failed.ID, runtime.StateFailed); info.Attempt != 2 || len(info.Errors) != 3 || info.Errors[1].Class != "jobc_retried" {
		t.Errorf("retried job failed again at attempt %d with errors %+v; want attempt 2, both errors kept and the retry between them", info.Attempt, info.Errors)
	}
	onlyOK := runtime.JobSelection{IDs: []int64{ok.ID}}
	if n, err := runtime.CountDeletableJobs(ctx, workerPool, onlyOK); err != nil || n != 1 {
		t.Errorf("CountDeletableJobs of a completed job as the worker role: %d, %v; want 1", n, err)
	}
	if res, err := runtime.DeleteJobs(ctx, workerPool, onlyOK); err != nil || res.Changed != 1 {
		t.Errorf("DeleteJobs of a completed job as the worker role: %+v, %v; want 1 deleted", res, err)
	}
	if err := runtime.PauseQueue(ctx, workerPool, "grants"); err != nil {
		t.Fatalf("PauseQueue as the worker role: %v", err)
	}
	// The job is enqueued once the worker has seen the pause (its notification or the
	// next poll): enqueued before, its wake-up could overtake the pause's, which a
	// loaded machine showed.
	paused := time.Now().Add(patience)
	for !strings.Contains(func() string { logMu.Lock(); defer logMu.Unlock(); return logs.String() }(), "queue paused; claiming nothing") {
		if time.Now().After(paused) {
			t.Fatalf("the worker did not see the pause within %s\n%s", patience, dump())
		}
		time.Sleep(cfg.PollInterval / 5)
	}
	held := enqueue(okType, 7)
	// Two poll intervals, in which a worker that claimed from the paused queue would.
	time.Sleep(2 * cfg.PollInterval)
	if info := waitState("job of a paused queue", held.ID, runtime.StateAvailable); info.Attempt != 0 {
		t.Errorf("a job of the paused queue ran: attempt %d\n%s", info.Attempt, dump())
	}
	if stats, err := runtime.ListQueueStats(ctx, readerPool); err != nil || len(stats) != 1 || !stats[0].Paused || stats[0].Available < 1 || stats[0].Workers != 1 {
		t.Errorf("ListQueueStats as the read-only role: %+v, %v; want the paused grants queue with the held job available and its worker", stats, err)
	}
	if jt, err := runtime.ReadJobsTable(ctx, readerPool); err != nil || jt.Bytes <= 0 {
		t.Errorf("ReadJobsTable as the read-only role: %+v, %v; want the table's size", jt, err)
	}
	if hs, err := runtime.ListHistory(ctx, readerPool); err != nil || len(hs) != 3 || !hs[0].Covers(time.Now()) {
		t.Errorf("ListHistory as the read-only role: %+v, %v; want the three states, with the worker's partitions", hs, err)
	}
	if err := runtime.ResumeQueue(ctx, workerPool, "grants"); err != nil {
		t.Fatalf("ResumeQueue as the worker role: %v", err)
	}
	waitState("job of the resumed queue", held.ID, runtime.StateCompleted)

	// The queue ran dry, so the worker sleeps; an enqueue now notifies it.
	deadline = time.Now().Add(patience)
	for workerLog.succeeded()["Sleep"] == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the worker never registered as sleeping\n%s", dump())
		}
		time.Sleep(cfg.PollInterval)
	}
	waitState("job enqueued while the worker sleeps", enqueue(okType, 6).ID, runtime.StateCompleted)
	// Heartbeats (ExtendLeases) keep the blocked job's lease past its first expiry: it
	// is still on its first attempt a lease and two rescue rounds after it started.
	info := waitState("blocked job", released.ID, runtime.StateRunning)
	if info.AttemptedAt == nil {
		t.Fatalf("running job %d has no attempted_at", released.ID)
	}
	time.Sleep(time.Until(info.AttemptedAt.Add(cfg.LeaseDuration + 2*cfg.RescueInterval)))
	if info := waitState("blocked job", released.ID, runtime.StateRunning); info.Attempt != 1 {
		t.Errorf("the blocked job is at attempt %d: its lease expired and it was rescued\n%s", info.Attempt, dump())
	}

	// The worker role does not own jobc_jobs: the vacuumer leaves it to autovacuum and
	// says so, once.
	if got := strings.Count(func() string { logMu.Lock(); defer logMu.Unlock(); return logs.String() }(), "may not vacuum jobc_jobs"); got != 1 {
		t.Errorf("the worker said %d times that its role may not vacuum jobc_jobs, want once\n%s", got, dump())
	}

	// The read-only role reads what `jobc status`, `jobc jobs` and dashboards show.
	if _, err := runtime.ListJobs(ctx, readerPool, runtime.JobFilter{}); err != nil {
		t.Errorf("ListJobs as the read-only role: %v", err)
	}
	if ws, err := runtime.ListWorkers(ctx, readerPool, 0); err != nil || len(ws) != 1 || ws[0].ID != w.ID() {
		t.Errorf("ListWorkers as the read-only role: %+v, %v; want the one worker", ws, err)
	}
	if _, err := runtime.CountUnfinishedByVersion(ctx, readerPool, 0); err != nil {
		t.Errorf("CountUnfinishedByVersion as the read-only role: %v", err)
	}
	if err := runtime.CheckSchema(ctx, readerPool); err != nil {
		t.Errorf("CheckSchema as the read-only role: %v", err)
	}
	// The dashboard's own reads (queries/dashboard.sql).
	if _, err := runtime.ListFailedGroups(ctx, readerPool, 0); err != nil {
		t.Errorf("ListFailedGroups as the read-only role: %v", err)
	}
	if _, err := runtime.ListFailedGroupJobIDs(ctx, readerPool, periodicType.Kind, "", 0, 0); err != nil {
		t.Errorf("ListFailedGroupJobIDs as the read-only role: %v", err)
	}
	if page, err := runtime.ListJobsByError(ctx, readerPool, "always fails", runtime.JobFilter{}); err != nil || len(page.Jobs) == 0 {
		t.Errorf("ListJobsByError as the read-only role: %+v, %v; want the failed job", page, err)
	}
	if _, err := runtime.ListQueueThroughput(ctx, readerPool, time.Hour, time.Minute); err != nil {
		t.Errorf("ListQueueThroughput as the read-only role: %v", err)
	}
	if ps, err := runtime.ListPeriodicJobs(ctx, readerPool, []*runtime.JobType{periodicType}, time.Now()); err != nil || len(ps) != 1 || ps[0].Last == nil {
		t.Errorf("ListPeriodicJobs as the read-only role: %+v, %v; want the periodic type with its last job", ps, err)
	}

	// Shutdown releases the blocked job, sleepers and the registry entry.
	stop()
	if info := waitState("released job", released.ID, runtime.StateAvailable); info.Attempt != 0 {
		t.Errorf("released job at attempt %d, want 0", info.Attempt)
	}
	if ws, err := runtime.ListWorkers(ctx, readerPool, 0); err != nil || len(ws) != 0 {
		t.Errorf("after shutdown, ListWorkers: %+v, %v; want none", ws, err)
	}

	// The dashboard's and `jobc jobs list`'s payload-free lists, as the read-only role.
	if page, err := runtime.ListJobSummaries(ctx, readerPool, runtime.JobFilter{}); err != nil || len(page.Jobs) == 0 {
		t.Errorf("ListJobSummaries as the read-only role: %d jobs, %v", len(page.Jobs), err)
	}
	if _, err := runtime.ListJobSummariesByError(ctx, readerPool, "always fails", runtime.JobFilter{}); err != nil {
		t.Errorf("ListJobSummariesByError as the read-only role: %v", err)
	}
	if holders, err := runtime.UniqueKeyHolderForTest(ctx, workerPool, uniqueType.Kind, "no such key"); err != nil || len(holders) != 0 {
		t.Errorf("UniqueKeyHolder as the worker: %v, %v", holders, err)
	}

	// Flow control's operations: the read-only role lists limits and asks why a job
	// waits; the worker role (the control API's) sets and resets a limit.
	if ls, err := runtime.ListLimits(ctx, readerPool); err != nil || len(ls) != 2 || ls[0].Name != flowType.Kind {
		t.Errorf("ListLimits as the read-only role: %+v, %v; want the limits of %s and %s", ls, err, flowType.Kind, passingType.Kind)
	}
	if why, err := runtime.WhyWaiting(ctx, readerPool, flowWaiting.ID); err != nil || why.Cause != runtime.WaitScheduled {
		t.Errorf("WhyWaiting as the read-only role: %+v, %v; want scheduled", why, err)
	}
	if err := runtime.SetLimit(ctx, workerPool, runtime.LimitChange{Scope: runtime.LimitKind, Name: flowType.Kind, Concurrency: 1, By: "grants"}); err != nil {
		t.Errorf("SetLimit as the worker role: %v", err)
	}
	if err := runtime.ResetLimit(ctx, workerPool, runtime.LimitKind, flowType.Kind, "grants"); err != nil {
		t.Errorf("ResetLimit as the worker role: %v", err)
	}

	// The relay, as the worker role, on the events published above.
	checkRelayGrants(t, workerPool, readerPool)

	// A busy queue's claims start after the last job they claimed (ClaimJobsAfter).
	busyType := newType("grants_busy", func(jt *runtime.JobType) { jt.Queue = "grants_busy" })
	enqueue(busyType, 1)
	enqueue(busyType, 2)
	busy := runtime.NewClaimQueueForTest("grants_busy", map[string][2]int{busyType.Kind: {1, 1}})
	for _, wantHinted := range []bool{false, true} {
		busy.Fresh()
		if ids, hinted, err := busy.Claim(ctx, workerPool, 1); err != nil || len(ids) != 1 || hinted != wantHinted {
			t.Errorf("a claim of one as the worker: %v (hinted %v), %v; want one job, hinted %v", ids, hinted, err, wantHinted)
		}
	}

	// A kind nobody handles waits in a queue: the worker's reporter finds it
	// (UnhandledKinds) and counts its jobs (UnhandledJobs).
	enqueue(newType("grants_unhandled", func(jt *runtime.JobType) { jt.Queue = "grants_unhandled" }), 1)
	unhandled := runtime.NewUnhandledReporterForTest(workerPool, slog.New(slog.DiscardHandler), []string{"grants_unhandled"}, []string{}, time.Minute, time.Now)
	if res, err := unhandled.RunOnce(ctx); err != nil {
		t.Errorf("the unhandled-jobs reporter as the worker role: %v", err)
	} else if len(res.Found) != 0 {
		t.Errorf("the unhandled-jobs reporter found %+v; want nothing yet, the job has waited less than a minute", res.Found)
	}

	// The tables' owner, no superuser, may vacuum jobc_jobs: its vacuumer does, as
	// soon as there are dead row versions (the worker role's said it may not, above).
	ownerLog := newStatementLog("owner")
	ownerPool := e.pool(t, e.migrator, "app", ownerLog)
	testkit.DeadJobs(t, ownerPool, 1000)
	if r, err := runtime.NewVacuumerForTest(ownerPool, 1).RunOnce(ctx); err != nil || !r.Vacuumed || r.NotPermitted {
		t.Errorf("the vacuumer as the tables' owner: %+v, %v; want it to vacuum jobc_jobs", r, err)
	}

	// Every failure of a restricted role's statement is a gap in the grants.
	for _, l := range []*statementLog{workerLog, producerLog, readerLog, ownerLog} {
		for _, f := range l.failures() {
			t.Errorf("missing privilege: %s", f)
		}
	}
	// Every statement in queries/ ran as a restricted role, except the migration
	// runner's own. A statement added later fails here until this test runs it.
	migrationOnly := map[string]bool{"MigrationLock": true, "RecordMigration": true, "RecordLibrary": true}
	ran := map[string]bool{}
	for _, l := range []*statementLog{workerLog, producerLog, readerLog, ownerLog} {
		for name := range l.succeeded() {
			ran[name] = true
		}
	}
	var never []string
	for _, name := range queryNames(t) {
		if !ran[name] && !migrationOnly[name] {
			never = append(never, name)
		}
	}
	if len(never) > 0 {
		sort.Strings(never)
		t.Errorf("statements never run as a restricted role, so their privileges are untested: %s (make this test run them)", strings.Join(never, ", "))
	}

	checkForbidden(t, e)
	checkSchemaOwnedByOthers(t, e, roles)
}

// checkSchemaOwnedByOthers: when the migration role owns the tables but not their
// schema, its GRANT USAGE on the schema does nothing (PostgreSQL only warns), so
// ApplyGrants fails, grants nothing, and says who must grant what; once the schema's
// owner has granted USAGE, it succeeds.
func checkSchemaOwnedByOthers(t *testing.T, e *grantsEnv, roles runtime.GrantRoles) {
	t.Helper()
	ctx := t.Context()
	e.exec(t, "CREATE SCHEMA shared")
	e.exec(t, "GRANT USAGE, CREATE ON SCHEMA shared TO "+pgx.Identifier{e.migrator}.Sanitize())
	migrator := e.pool(t, e.migrator, "shared", nil)
	if _, err := runtime.Migrate(ctx, migrator); err != nil {
		t.Fatalf("migrate schema shared: %v", err)
	}
	_, err := runtime.ApplyGrants(ctx, migrator, roles)
	if err == nil || !strings.Contains(err.Error(), "cannot use schema \"shared\"") || !strings.Contains(err.Error(), "GRANT USAGE ON SCHEMA \"shared\" TO") {
		t.Errorf("ApplyGrants in a schema the migration role does not own: %v; want an error saying the schema's owner must grant USAGE", err)
	}
	var granted bool
	if err := e.admin.QueryRow(ctx, `SELECT has_table_privilege($1, 'shared.jobc_jobs', 'SELECT')`, e.reader).Scan(&granted); err != nil {
		t.Fatal(err)
	}
	if granted {
		t.Error("the failed ApplyGrants left privileges behind")
	}
	e.exec(t, fmt.Sprintf("GRANT USAGE ON SCHEMA shared TO %s, %s, %s",
		pgx.Identifier{e.worker}.Sanitize(), pgx.Identifier{e.producer}.Sanitize(), pgx.Identifier{e.reader}.Sanitize()))
	if _, err := runtime.ApplyGrants(ctx, migrator, roles); err != nil {
		t.Errorf("ApplyGrants once the schema's owner granted USAGE: %v", err)
	}
}

// checkCatalog asserts, for every object in schema app, what each role may do: the
// migration role owns it, the read-only role reads every relation (a partition of
// history through jobc_jobs_finished, not by itself), the worker uses every sequence
// and function, and none of them may do more than rows.
func checkCatalog(t *testing.T, e *grantsEnv) {
	t.Helper()
	rows, err := e.admin.Query(t.Context(), `
SELECT c.relname, c.relkind::text, c.relowner::regrole::text,
       c.relkind = 'S' OR c.relispartition OR has_table_privilege($2, c.oid, 'SELECT'),
       c.relkind <> 'S' OR has_sequence_privilege($3, c.oid, 'USAGE'),
       has_table_privilege($3, c.oid, 'TRUNCATE, REFERENCES, TRIGGER')
         OR has_table_privilege($4, c.oid, 'UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
         OR has_table_privilege($2, c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
UNION ALL
SELECT p.proname || '()', 'function', p.proowner::regrole::text, true,
       has_function_privilege($3, p.oid, 'EXECUTE'), false
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = $1
ORDER BY 1`, "app", e.reader, e.worker, e.producer)
	if err != nil {
		t.Fatal(err)
	}
	type object struct {
		name, kind, owner     string
		readable, usable, too bool
	}
	objects, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (object, error) {
		var o object
		err := r.Scan(&o.name, &o.kind, &o.owner, &o.readable, &o.usable, &o.too)
		return o, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(objects) < 7 {
		t.Fatalf("%d objects in schema app after migrating: %+v", len(objects), objects)
	}
	for _, o := range objects {
		if o.owner != e.migrator {
			t.Errorf("%s is owned by %s, want the migration role %s", o.name, o.owner, e.migrator)
		}
		if !o.readable {
			t.Errorf("the read-only role cannot SELECT from %s: add it to the objects in schema/grants.go", o.name)
		}
		if !o.usable {
			t.Errorf("the worker role cannot use %s %s: add it to the objects in schema/grants.go", o.kind, o.name)
		}
		if o.too {
			t.Errorf("a restricted role holds more than row privileges on %s", o.name)
		}
	}
}

// checkForbidden runs statements the roles must not run, each on its own connection.
func checkForbidden(t *testing.T, e *grantsEnv) {
	t.Helper()
	ctx := t.Context()
	conn := func(role string) *pgx.Conn {
		cfg, err := pgx.ParseConfig(e.cluster.ConnString())
		if err != nil {
			t.Fatal(err)
		}
		cfg.User = role
		cfg.RuntimeParams["search_path"] = "app"
		c, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}
	worker, producer, reader := conn(e.worker), conn(e.producer), conn(e.reader)
	for _, c := range []struct {
		role   string
		conn   *pgx.Conn
		sql    string
		object string
	}{
		{"worker", worker, "DROP TABLE jobc_jobs", "jobc_jobs"},
		{"worker", worker, "ALTER TABLE jobc_jobs ADD COLUMN extra int", "jobc_jobs"},
		{"worker", worker, "TRUNCATE jobc_jobs_finished", "jobc_jobs_finished"},
		{"worker", worker, "CREATE TABLE intruder (id int)", "schema app"},
		{"worker", worker, "UPDATE jobc_migrations SET name = 'x'", "jobc_migrations"},
		{"worker", worker, "DELETE FROM jobc_migrations", "jobc_migrations"},
		{"producer", producer, "UPDATE jobc_jobs SET priority = 1", "jobc_jobs"},
		{"producer", producer, "DELETE FROM jobc_jobs", "jobc_jobs"},
		{"producer", producer, "SELECT count(*) FROM jobc_jobs_finished", "jobc_jobs_finished"},
		{"producer", producer, "SELECT payload FROM jobc_jobs", "jobc_jobs"},
		{"read-only", reader, "DELETE FROM jobc_jobs", "jobc_jobs"},
		{"read-only", reader, "UPDATE jobc_jobs_finished SET priority = 1", "jobc_jobs_finished"},
		{"read-only", reader, "INSERT INTO jobc_workers (id, host, pid, queues, kinds, lease_secs) VALUES ('x', 'h', 1, '{}', '{}', 1)", "jobc_workers"},
		{"read-only", reader, "TRUNCATE jobc_jobs", "jobc_jobs"},
		{"read-only", reader, "DROP TABLE jobc_jobs", "jobc_jobs"},
	} {
		_, err := c.conn.Exec(ctx, c.sql)
		wantDenied(t, c.role+": "+c.sql, err, c.object)
	}
	_, err := runtime.CancelJob(ctx, reader, 1)
	wantDenied(t, "read-only: runtime.CancelJob", err, "jobc_jobs")
	_, err = runtime.CancelJob(ctx, producer, 1)
	wantDenied(t, "producer: runtime.CancelJob", err, "jobc_jobs")
	_, err = runtime.Enqueue(ctx, reader, emailType(t, nil), emailPayload{N: 1, Email: "ada@example.com"})
	wantDenied(t, "read-only: runtime.Enqueue", err, "jobc_jobs")
	wantDenied(t, "read-only: runtime.PauseQueue", runtime.PauseQueue(ctx, reader, "grants"), "jobc_queues")
	wantDenied(t, "producer: runtime.PauseQueue", runtime.PauseQueue(ctx, producer, "grants"), "jobc_queues")
	_, err = runtime.RetryJobs(ctx, reader, runtime.JobSelection{Kinds: []string{"grants_fail"}})
	wantDenied(t, "read-only: runtime.RetryJobs", err, "jobc_retry_selected")

	// The worker role cannot migrate: neither in the migrated schema nor in a fresh
	// one, where it fails before creating anything.
	workerMigrate := func(schema string) error {
		_, err := runtime.Migrate(ctx, e.pool(t, e.worker, schema, nil))
		return err
	}
	wantDenied(t, "worker: runtime.Migrate on the migrated schema", workerMigrate("app"), "schema app")
	e.exec(t, "CREATE SCHEMA fresh")
	e.exec(t, "GRANT USAGE ON SCHEMA fresh TO "+pgx.Identifier{e.worker}.Sanitize())
	wantDenied(t, "worker: runtime.Migrate on a fresh schema", workerMigrate("fresh"), "schema fresh")
	var n int
	if err := e.admin.QueryRow(ctx, `SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'fresh'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("the worker's failed migration left %d objects in schema fresh", n)
	}
}

// lockedWriter serialises writes of the worker's goroutines to one buffer.
type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
