package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime"
)

// The schemas of a job whose v2 renamed email to recipient.
const (
	notifyV1 = `{"type":"object","additionalProperties":false,"required":["email"],"properties":{"email":{"type":"string"}}}`
	notifyV2 = `{"type":"object","additionalProperties":false,"required":["recipient"],"properties":{"recipient":{"type":"string"}}}`
)

type notifyV2Payload struct {
	Recipient string `json:"recipient"`
}

// notifyType is the job as a deploy builds it: v1 producers, and v2 workers whose
// hand-written upcast is up.
func notifyType(t *testing.T, up runtime.Upcast) *runtime.JobType {
	t.Helper()
	versions := []runtime.Version{{Number: 1, Schema: notifyV1}}
	write := 1
	if up != nil {
		versions = append(versions, runtime.Version{Number: 2, Schema: notifyV2, Upcast: up})
		write = 2
	}
	jt, err := runtime.NewJobType(runtime.JobType{Kind: "notify", Queue: "notify", Priority: 1, MaxAttempts: 1, WriteVersion: write, Versions: versions})
	if err != nil {
		t.Fatal(err)
	}
	return jt
}

// TestRetryAfterFaultyUpcast is the bad deploy of issue 9: a hand-written v1→v2 upcast
// forgets the rename, so every v1 job fails permanently (an invalid payload is never
// retried, and these jobs have a single attempt). After the fix ships, `jobc jobs
// retry --kind notify --state failed` puts them back, the fixed worker completes them,
// and each job's history still shows the failed attempt.
func TestRetryAfterFaultyUpcast(t *testing.T) {
	pool, url := migratedDB(t)
	ctx := t.Context()
	var ids []int64
	for _, email := range []string{"ada@example.com", "grace@example.com", "edsger@example.com"} {
		e, err := runtime.Enqueue(ctx, pool, notifyType(t, nil), map[string]string{"email": email})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	// A failed job of another kind, which a retry by kind must leave alone.
	const otherID = 1 << 40
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_jobs_finished (id, kind, queue, state, priority, payload_version, payload,
		metadata, available_at, attempt, max_attempts, errors, created_at)
		VALUES ($1, 'other', 'notify', 'failed', 0, 1, '{}', '{}', now(), 1, 1, '[]', now())`, otherID); err != nil {
		t.Fatal(err)
	}

	const poll = 50 * time.Millisecond
	faulty := runtime.Upcast(func(p []byte) ([]byte, error) { return p, nil }) // the bug: no rename
	runWorker(t, pool, poll, notifyType(t, faulty), nil, func() (bool, string) {
		return allInState(t, pool, ids, runtime.StateFailed), jobStates(t, pool, ids)
	})
	for _, id := range ids {
		j, err := runtime.GetJob(ctx, pool, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(j.Errors) != 1 || j.Errors[0].Class != "invalid_payload" || j.Attempt != 1 || j.MaxAttempts != 1 {
			t.Fatalf("job %d after the faulty upcast: attempt %d/%d, errors %+v; want one invalid_payload failure", id, j.Attempt, j.MaxAttempts, j.Errors)
		}
	}
	out, errOut, code := jobc(t, "jobs", "retry", "--kind", "notify", "--state", "failed", "--dry-run", "--database-url", url)
	if code != 0 || !strings.Contains(out, "would retry 3 job(s)") {
		t.Fatalf("retry --dry-run: exit %d\n%s%s", code, out, errOut)
	}
	if !allInState(t, pool, ids, runtime.StateFailed) {
		t.Fatalf("the dry run changed jobs:%s", jobStates(t, pool, ids))
	}
	out, errOut, code = jobc(t, "jobs", "retry", "--kind", "notify", "--state", "failed", "--database-url", url)
	if code != 0 || !strings.Contains(out, "retried 3 job(s)") {
		t.Fatalf("retry: exit %d\n%s%s", code, out, errOut)
	}
	for _, id := range ids {
		if !strings.Contains(out, strconv.FormatInt(id, 10)) {
			t.Errorf("retry output does not list job %d:\n%s", id, out)
		}
	}
	if !allInState(t, pool, ids, runtime.StateAvailable) {
		t.Fatalf("after retry:%s; want every job available", jobStates(t, pool, ids))
	}
	if !allInState(t, pool, []int64{otherID}, runtime.StateFailed) {
		t.Errorf("retry --kind notify changed a job of another kind:%s", jobStates(t, pool, []int64{otherID}))
	}

	fixed := runtime.UpcastFunc(func(v1 struct {
		Email string `json:"email"`
	}) (notifyV2Payload, error) {
		return notifyV2Payload{Recipient: v1.Email}, nil
	})
	got := make(chan string, len(ids))
	runWorker(t, pool, poll, notifyType(t, fixed), got, func() (bool, string) {
		return allInState(t, pool, ids, runtime.StateCompleted), jobStates(t, pool, ids)
	})
	close(got)
	var recipients []string
	for r := range got {
		recipients = append(recipients, r)
	}
	if len(recipients) != len(ids) {
		t.Errorf("the fixed handler ran %d times, want %d: %v", len(recipients), len(ids), recipients)
	}
	for _, id := range ids {
		out, errOut, code := jobc(t, "jobs", "show", strconv.FormatInt(id, 10), "--json", "--database-url", url)
		if code != 0 {
			t.Fatalf("jobs show %d: exit %d: %s", id, code, errOut)
		}
		var j jobJSON
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatalf("jobs show %d --json: %v\n%s", id, err, out)
		}
		// The failure of attempt 1, then the retry's record (jobc_retried, jobc_retry_selected).
		if j.State != "completed" || j.Attempt != 2 || j.MaxAttempts != 2 || len(j.Errors) != 2 ||
			j.Errors[0].Attempt != 1 || j.Errors[0].Class != "invalid_payload" || j.Errors[1].Class != "jobc_retried" {
			t.Errorf("job %d after the fix: %s", id, out)
		}
	}
}

// runWorker runs a worker for jt until done reports true, then stops it. Each
// handled payload's recipient is sent to got when it is not nil.
func runWorker(t *testing.T, pool *pgxpool.Pool, poll time.Duration, jt *runtime.JobType, got chan<- string, done func() (bool, string)) {
	t.Helper()
	w := runtime.NewWorker(pool, runtime.Config{
		Logger:            slog.New(slog.DiscardHandler),
		PollInterval:      poll,
		SchedulerInterval: poll,
	})
	if err := runtime.Handle(w, jt, func(ctx context.Context, job *runtime.Job, p notifyV2Payload) error {
		if got != nil {
			got <- p.Recipient
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	finished := make(chan error, 1)
	go func() { finished <- w.Run(ctx) }()
	waitFor(t, "the worker to finish the jobs", slowdown*(time.Second+poll), done)
	stop()
	if err := <-finished; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("worker: %v", err)
	}
}
