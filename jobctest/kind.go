package jobctest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/runtime"
)

// Kind is one job type in tests, typed by its contract: P is the newest payload type
// (the one handlers receive), W the type its enqueue function takes (the write
// version's) and H its handler interface. jobc generate declares one per job type,
// named like its payload, in the package <out>/<package>test, which only tests import
// (so production binaries do not carry test code); [NewKind] is how it does:
//
//	job := jobstest.SendEmail.RequireEnqueued(t, tx, jobctest.Queue("email"))
//	if job.Payload.Recipient != "ada@example.com" { ... }
//	tx, err := jobstest.SendEmail.Run(t, pool, handlers, jobs.SendEmailV2{...})
//
// A Kind holds no state of its own: it is as safe to share as the job type.
type Kind[P, W, H any] struct {
	jt    *runtime.JobType
	adapt func(H) Handler[P]
}

// Handler is a handler of payloads P in the shape Run calls it: transactional or not,
// it gets the test's transaction.
type Handler[P any] func(ctx context.Context, tx pgx.Tx, job *runtime.Job, p P) error

// NewKind returns the Kind of jt; adapt turns a handler H into the function Run calls.
// The generated test package calls it once per job type, in a package-level var; call
// it by hand for a job type declared without the generator.
func NewKind[P, W, H any](jt *runtime.JobType, adapt func(H) Handler[P]) *Kind[P, W, H] {
	return &Kind[P, W, H]{jt: jt, adapt: adapt}
}

// Type returns the job type.
func (k *Kind[P, W, H]) Type() *runtime.JobType { return k.jt }

// Job is a stored job with its payload decoded as a worker decodes it: validated
// against its version's schema and upcast to the newest version.
type Job[P any] struct {
	Info    *runtime.JobInfo // as stored: the version, the raw payload, state, queue, ...
	Payload P
}

// Option narrows which jobs Find, RequireEnqueued and RequireNotEnqueued look at.
type Option func(*match)

type match struct {
	queue    string
	priority int
	states   []runtime.State
}

// Queue matches the jobs of one queue.
func Queue(name string) Option { return func(m *match) { m.queue = name } }

// Priority matches the jobs enqueued with priority p (runtime.MostUrgent..LeastUrgent).
func Priority(p int) Option { return func(m *match) { m.priority = p } }

// States matches the jobs in any of states, in place of the default: the unfinished
// ones (available, scheduled or running).
func States(states ...runtime.State) Option { return func(m *match) { m.states = states } }

// unfinished are the states a job waits or runs in: what "enqueued" means by default.
var unfinished = []runtime.State{runtime.StateAvailable, runtime.StateScheduled, runtime.StateRunning}

func newMatch(opts []Option) match {
	m := match{states: unfinished}
	for _, o := range opts {
		o(&m)
	}
	return m
}

// differs says how job differs from m, empty when it matches.
func (m match) differs(jt *runtime.JobType, job *runtime.JobInfo) []string {
	var out []string
	if job.Kind != jt.Kind && !slices.Contains(jt.Aliases, job.Kind) {
		out = append(out, "kind "+job.Kind)
	}
	if m.queue != "" && job.Queue != m.queue {
		out = append(out, "queue "+job.Queue)
	}
	if m.priority != 0 && job.Priority != m.priority {
		out = append(out, fmt.Sprintf("priority %d", job.Priority))
	}
	if !slices.Contains(m.states, job.State) {
		out = append(out, string(job.State))
	}
	return out
}

// describe names what m asks for, for failure messages.
func (m match) describe() string {
	var parts []string
	if !slices.Equal(m.states, unfinished) {
		ss := make([]string, len(m.states))
		for i, s := range m.states {
			ss[i] = string(s)
		}
		parts = append(parts, strings.Join(ss, " or "))
	}
	if m.queue != "" {
		parts = append(parts, "queue "+m.queue)
	}
	if m.priority != 0 {
		parts = append(parts, fmt.Sprintf("priority %d", m.priority))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// listLimit is the most jobs one listing returns (runtime.ListJobs's maximum); a test
// database holding more is not one a test reads job by job.
const listLimit = 10000

// Find returns the jobs of k (under its kind or an alias) in db that match opts,
// unfinished ones by default, newest first, each with its payload decoded as a worker
// decodes it. Pass the transaction to see jobs it has not committed yet. A payload a
// worker could not decode is an error.
func (k *Kind[P, W, H]) Find(ctx context.Context, db runtime.DBTX, opts ...Option) ([]Job[P], error) {
	m := newMatch(opts)
	infos, err := list(ctx, db, runtime.JobSelection{Kinds: append([]string{k.jt.Kind}, k.jt.Aliases...), States: m.states})
	if err != nil {
		return nil, err
	}
	var out []Job[P]
	for _, info := range infos {
		if len(m.differs(k.jt, info)) > 0 {
			continue
		}
		p, err := runtime.DecodePayload[P](k.jt, info.PayloadVersion, info.Payload)
		if err != nil {
			return nil, fmt.Errorf("jobctest: %s job #%d (payload version %d): %w", info.Kind, info.ID, info.PayloadVersion, err)
		}
		out = append(out, Job[P]{Info: info, Payload: p})
	}
	return out, nil
}

// RequireEnqueued fails the test unless exactly one job of k in db matches opts
// (unfinished, by default), and returns it with its decoded payload. The failure says
// what db holds instead.
func (k *Kind[P, W, H]) RequireEnqueued(t testing.TB, db runtime.DBTX, opts ...Option) Job[P] {
	t.Helper()
	jobs, err := k.Find(t.Context(), db, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) == 1 {
		return jobs[0]
	}
	m := newMatch(opts)
	if len(jobs) == 0 {
		t.Fatalf("jobctest: no %s job enqueued%s; %s", k.jt.Kind, m.describe(), k.found(t, db, m))
	}
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = fmt.Sprintf("#%d", j.Info.ID)
	}
	t.Fatalf("jobctest: %d %s jobs enqueued%s, want exactly 1: %s", len(jobs), k.jt.Kind, m.describe(), strings.Join(ids, ", "))
	return Job[P]{}
}

// RequireNotEnqueued fails the test if any job of k in db matches opts (unfinished,
// by default), naming them.
func (k *Kind[P, W, H]) RequireNotEnqueued(t testing.TB, db runtime.DBTX, opts ...Option) {
	t.Helper()
	jobs, err := k.Find(t.Context(), db, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) == 0 {
		return
	}
	descs := make([]string, len(jobs))
	for i, j := range jobs {
		descs[i] = fmt.Sprintf("#%d (%s)", j.Info.ID, j.Info.State)
	}
	t.Fatalf("jobctest: %d %s jobs enqueued%s, want none: %s", len(jobs), k.jt.Kind, newMatch(opts).describe(), strings.Join(descs, ", "))
}

// maxFound is how many of the other jobs a failure message names.
const maxFound = 10

// found describes the jobs db holds in m's states, of any kind: what a test that
// expected k's job finds instead.
func (k *Kind[P, W, H]) found(t testing.TB, db runtime.DBTX, m match) string {
	t.Helper()
	infos, err := list(t.Context(), db, runtime.JobSelection{States: m.states})
	if err != nil {
		return fmt.Sprintf("listing the others failed: %v", err)
	}
	if len(infos) == 0 {
		return "found no jobs" + (match{states: m.states}).describe()
	}
	var b strings.Builder
	noun := "jobs"
	if len(infos) == 1 {
		noun = "job"
	}
	fmt.Fprintf(&b, "found %d %s%s: ", len(infos), noun, (match{states: m.states}).describe())
	for i, info := range infos[:min(len(infos), maxFound)] {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s #%d", info.Kind, info.ID)
		if d := m.differs(k.jt, info); len(d) > 0 && (len(d) > 1 || d[0] != "kind "+info.Kind) {
			// The job is of k's kind, or also differs otherwise: say how.
			var rest []string
			for _, s := range d {
				if s != "kind "+info.Kind {
					rest = append(rest, s)
				}
			}
			fmt.Fprintf(&b, " (%s)", strings.Join(rest, ", "))
		}
	}
	if len(infos) > maxFound {
		fmt.Fprintf(&b, ", and %d more", len(infos)-maxFound)
	}
	return b.String()
}

// list returns the jobs sel selects, newest first.
func list(ctx context.Context, db runtime.DBTX, sel runtime.JobSelection) ([]*runtime.JobInfo, error) {
	sel.Limit = listLimit
	page, err := runtime.ListJobs(ctx, db, runtime.JobFilter{JobSelection: sel})
	if err != nil {
		return nil, fmt.Errorf("jobctest: %w", err)
	}
	if page.More {
		// Reading a prefix would pass or fail a test on jobs it never looked at.
		return nil, fmt.Errorf("jobctest: more than %d jobs match: narrow the selection (Queue, Priority, States)", listLimit)
	}
	return page.Jobs, nil
}

// Beginner starts a transaction: a *pgxpool.Pool, a *pgx.Conn, or a pgx.Tx (a
// savepoint inside it).
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Run runs h on one job of payload p as a worker would, inside a transaction on db that
// rolls back when the test ends: it enqueues p in the transaction (validated against
// the write version's schema, as the enqueue function does), reads the stored row
// back, decodes it as a worker does (validate, upcast to the newest version) and calls
// h with a *runtime.Job of the row (attempt 1). It returns the transaction, for the
// test to look at what the handler wrote, and the handler's error, or the enqueue's or
// the decode's. A transactional handler writes through that transaction; any other
// handler writes through its own connections, which do not roll back. The job row
// stays as enqueued: no worker claims it, and nothing records its outcome.
func (k *Kind[P, W, H]) Run(t testing.TB, db Beginner, h H, p W, opts ...runtime.EnqueueOption) (pgx.Tx, error) {
	t.Helper()
	ctx := t.Context()
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatalf("jobctest: begin the test transaction: %v", err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.WithoutCancel(ctx)) })
	enq, err := runtime.Enqueue(ctx, tx, k.jt, p, opts...)
	if err != nil {
		return tx, err
	}
	infos, err := list(ctx, tx, runtime.JobSelection{IDs: []int64{enq.ID}})
	if err != nil {
		return tx, err
	}
	if len(infos) != 1 {
		t.Fatalf("jobctest: the %s job #%d just enqueued is not there", k.jt.Kind, enq.ID)
	}
	info := infos[0]
	payload, err := runtime.DecodePayload[P](k.jt, info.PayloadVersion, info.Payload)
	if err != nil {
		return tx, err
	}
	job := &runtime.Job{
		ID: info.ID, Kind: info.Kind, Queue: info.Queue, Attempt: 1, MaxAttempts: info.MaxAttempts,
		Priority: info.Priority, PayloadVersion: info.PayloadVersion, CreatedAt: info.CreatedAt, Metadata: info.Metadata,
	}
	return tx, k.adapt(h)(ctx, tx, job, payload)
}
