package runtime_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

const emailSchemaV2 = `{"type":"object","additionalProperties":false,"required":["n","recipient"],
	"properties":{"n":{"type":"integer"},"recipient":{"type":"string","minLength":3}}}`

type emailPayloadV2 struct {
	N         int    `json:"n"`
	Recipient string `json:"recipient"`
}

// TestStoredPayloadThatFailsItsSchema: a stored payload that does not match its
// version's schema (written by hand, or by a broken producer) fails the job at once,
// with an error naming the field, and the job is kept.
func TestStoredPayloadThatFailsItsSchema(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	var id int64
	if err := pool.QueryRow(ctx, `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts)
		VALUES ('send_email', 'email', 'available', 5, 1, '{"n": 1, "email": 42}', 5) RETURNING id`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	w := runtime.NewWorker(pool, testConfig(nil))
	called := false
	if err := runtime.Handle(w, emailType(t, nil), func(context.Context, *runtime.Job, emailPayload) error {
		called = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	var info *runtime.JobInfo
	waitFor(t, "the job to fail", 10*time.Second, func() bool {
		var err error
		info, err = runtime.GetJob(ctx, pool, id)
		return err == nil && info.State == runtime.StateFailed
	})
	if called {
		t.Error("the handler ran with an invalid payload")
	}
	if info.Attempt != 1 || len(info.Errors) != 1 || info.Errors[0].Class != "invalid_payload" ||
		!strings.Contains(info.Errors[0].Error, "/email") || !strings.Contains(info.Errors[0].Error, "version 1") {
		t.Errorf("attempt %d, errors %+v; want one invalid_payload error naming /email and the version", info.Attempt, info.Errors)
	}
}

// TestUnknownVersionOrKindIsLeftAndReported: rows of a version or kind this worker does
// not decode are never claimed, and CountUnfinishedByVersion reports that no live worker
// decodes them.
func TestUnknownVersionOrKindIsLeftAndReported(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := emailType(t, nil)
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts) VALUES
		('send_email', 'email', 'available', 5, 9, '{"future": true}', 5),
		('send_fax', 'email', 'available', 5, 1, '{}', 5)`); err != nil {
		t.Fatal(err)
	}
	if _, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "ada@example.com"}); err != nil {
		t.Fatal(err)
	}
	w := runtime.NewWorker(pool, testConfig(nil))
	if err := runtime.Handle(w, jt, func(context.Context, *runtime.Job, emailPayload) error { return nil }); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	waitFor(t, "the decodable job to complete", 10*time.Second, func() bool {
		return countRows(t, pool, `SELECT count(*) FROM jobc_jobs_finished`) == 1
	})
	time.Sleep(200 * time.Millisecond) // several more polls
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs WHERE state = 'available' AND attempt = 0`); n != 2 {
		t.Fatalf("%d of the 2 undecodable jobs left untouched", n)
	}
	counts, err := runtime.CountUnfinishedByVersion(ctx, pool, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	problems := map[string]string{}
	for _, c := range counts {
		key := c.Kind + "@" + strconv.Itoa(c.Version)
		got[key] = len(c.Decoders)
		problems[key] = c.Problem
	}
	if len(got) != 2 || got["send_email@9"] != 0 || got["send_fax@1"] != 0 {
		t.Errorf("report %+v; want send_email v9 and send_fax v1, each with no decoder", counts)
	}
	// The worker serves queue email and handles send_email at version 1 only.
	for key, want := range map[string]string{
		"send_email@9": "no live worker decodes version 9 of kind send_email",
		"send_fax@1":   "workers of queue email do not handle kind send_fax",
	} {
		if problems[key] != want {
			t.Errorf("%s: problem %q, want %q", key, problems[key], want)
		}
	}
}

// versionedType has versions 1 and 2 (email renamed to recipient).
func versionedType(t *testing.T) *runtime.JobType {
	jt, err := runtime.NewJobType(runtime.JobType{
		Kind: "send_email", Queue: "email", Priority: 5, MaxAttempts: 3, WriteVersion: 2,
		Versions: []runtime.Version{
			{Number: 1, Schema: emailSchema},
			{Number: 2, Schema: emailSchemaV2, Upcast: runtime.Changes(runtime.RenameField("email", "recipient"))},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return jt
}

// TestWorkerWarnsOfUndecodableJobsAtStart: a worker that starts while jobs of its kind
// wait in its queue at versions it does not decode says so, by version and state:
// older ones (which nothing will run unless a worker of an earlier build does) as an
// error, newer ones as information; jobs it decodes and jobs of other queues are not
// reported.
func TestWorkerWarnsOfUndecodableJobsAtStart(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := emailType(t, func(jt *runtime.JobType) {
		jt.WriteVersion = 2
		jt.Versions = []runtime.Version{{Number: 2, Schema: jt.Versions[0].Schema}}
	})
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts, available_at)
		SELECT 'send_email', q, s::jobc_state, 5, v, '{}', 3, now() + CASE WHEN s = 'scheduled' THEN interval '1 hour' ELSE interval '0' END
		FROM (VALUES ('email', 'available', 1), ('email', 'available', 1), ('email', 'scheduled', 1),
		             ('email', 'available', 3), ('email', 'available', 2), ('other', 'available', 1)) v(q, s, v)`); err != nil {
		t.Fatal(err)
	}
	log, rec := newLogRecorder()
	cfg := testConfig(nil)
	cfg.Logger = log
	w := runtime.NewWorker(pool, cfg)
	if err := runtime.Handle(w, jt, func(context.Context, *runtime.Job, emailPayload) error { return nil }); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	const older, newer = "ERROR jobc worker: unfinished jobs are stored at a payload version this build no longer decodes",
		"INFO jobc worker: unfinished jobs are stored at a payload version newer than this build decodes"
	// The check runs once, after the first claim; the services started with it bound
	// the wait, as in TestWorkerLogsUnhandledJobsAtStart.
	wait := 5*time.Second + 50*cfg.SchedulerInterval
	deadline := time.Now().Add(wait)
	for len(rec.matching(newer)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no record of the version 3 job within %s; the worker logged:\n%s", wait, strings.Join(rec.all(), "\n"))
		}
		time.Sleep(cfg.SchedulerInterval)
	}
	for _, want := range [][]string{
		{older, "version=1", "state=available", "jobs=2"},
		{older, "version=1", "state=scheduled", "jobs=1"},
		{newer, "version=3", "jobs=1"},
	} {
		if got := rec.matching(want...); len(got) != 1 {
			t.Errorf("%d records with %q, want 1; the worker logged:\n%s", len(got), want, strings.Join(rec.all(), "\n"))
		}
	}
	if got := len(rec.matching(older)) + len(rec.matching(newer)); got != 3 {
		t.Errorf("%d records of undecodable jobs, want 3: none of version 2 nor of queue other; the worker logged:\n%s", got, strings.Join(rec.all(), "\n"))
	}
}
