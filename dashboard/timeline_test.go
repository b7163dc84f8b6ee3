package dashboard_test

import (
	"encoding/json"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jobc-dev/jobc/dashboard"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

var (
	timelineList = regexp.MustCompile(`(?s)<ol class="timeline">(.*?)</ol>`)
	timelineItem = regexp.MustCompile(`(?s)<li class="[^"]*"><time>[^<]*</time> (.*?)</li>`)
	whyItFailed  = regexp.MustCompile(`(?s)<dd id="why">(.*?)</dd>`)
)

// jobPage fetches a job's page and returns its timeline's entries (their text, without
// the time) and what it says about why the job failed ("" when it says nothing).
func (e *env) jobPage(id int64) (timeline []string, why string, body string) {
	e.t.Helper()
	status, body := e.get(fmt.Sprintf("/jobs/%d", id))
	wantStatus(e.t, fmt.Sprintf("GET /jobs/%d", id), status, http.StatusOK, body)
	list := timelineList.FindStringSubmatch(body)
	if list == nil {
		e.t.Fatalf("job %d: no timeline on the page:\n%s", id, body)
	}
	for _, m := range timelineItem.FindAllStringSubmatch(list[1], -1) {
		timeline = append(timeline, html.UnescapeString(tags.ReplaceAllString(m[1], "")))
	}
	if m := whyItFailed.FindStringSubmatch(body); m != nil {
		why = html.UnescapeString(m[1])
	}
	return timeline, why, body
}

// finished stores a job that ended failed after the given attempts' errors, as the
// worker leaves one, with attempt the last of them.
func (e *env) finished(kind string, maxAttempts int, errs ...runtime.AttemptError) int64 {
	e.t.Helper()
	b, err := json.Marshal(errs)
	if err != nil {
		e.t.Fatal(err)
	}
	var id int64
	err = e.pool.QueryRow(e.t.Context(), `
		INSERT INTO jobc_jobs_finished (id, kind, queue, state, priority, payload_version, payload, metadata,
		    available_at, attempt, max_attempts, errors, created_at, attempted_at, finished_at)
		VALUES (nextval(pg_get_serial_sequence('jobc_jobs', 'id')), $1, 'email', 'failed', 1, 1, '{}', '{}',
		    now() - interval '10 minutes', $2, $3, $4, now() - interval '10 minutes', now() - interval '2 minutes', now() - interval '1 minute')
		RETURNING id`, kind, errs[len(errs)-1].Attempt, maxAttempts, b).Scan(&id)
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

func wantTimeline(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s: the timeline reads\n\t%s\nwant\n\t%s", what, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// TestJobTimeline: a job's timeline shows each attempt's error, an operator's retry
// (the record jobc_retry_selected adds) and why a failed job ended failed: out of attempts, a
// permanent error class, poisoned, or its lease expired on its last attempt.
func TestJobTimeline(t *testing.T) {
	t.Parallel()
	strict := runtime.MustJobType(runtime.JobType{
		Kind: "charge_card", Queue: "billing", MaxAttempts: 3, WriteVersion: 1,
		Classes:  []runtime.ErrorClass{{Name: "declined", Retry: false}, {Name: "transient", Retry: true, MaxAttempts: 2}},
		Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}},
	})
	e := newEnv(t, dashboard.Options{JobTypes: []*runtime.JobType{emailType, strict}})
	ctx := t.Context()
	at := time.Now().Add(-5 * time.Minute)

	// Out of attempts, after two attempts that each failed; the first error's stack is
	// more than its first line, and the timeline links to the whole of it.
	out := e.finished("send_email", 2,
		runtime.AttemptError{Attempt: 1, At: at, Class: "transient", Error: "smtp: timeout\ngoroutine 7 [running]:", Worker: "w1"},
		runtime.AttemptError{Attempt: 2, At: at.Add(time.Minute), Class: "transient", Error: "smtp: 421 try again later", Worker: "w1"})
	tl, why, body := e.jobPage(out)
	wantTimeline(t, "out of attempts", tl,
		"enqueued in email",
		"attempt 1 failed (transient): smtp: timeout … whole text",
		"attempt 2 failed (transient): smtp: 421 try again later",
		"attempt 2 started",
		"failed: out of attempts: attempt 2 of 2 failed, with error class transient")
	if want := "out of attempts: attempt 2 of 2 failed, with error class transient"; why != want {
		t.Errorf("out of attempts: the page says it failed because %q, want %q", why, want)
	}
	wantContains(t, "out of attempts", body, `<a href="#error-1">whole text</a>`, `<article class="attempt" id="error-1">`, "goroutine 7 [running]:")

	// An operator retries it: the retry shows, with how and when it had ended.
	failedAt, err := runtime.GetJob(ctx, e.pool, out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runtime.RetryJob(ctx, e.pool, out); err != nil {
		t.Fatal(err)
	}
	tl, why, body = e.jobPage(out)
	retried := "retried after it ended failed at " + failedAt.FinishedAt.UTC().Format("2006-01-02 15:04:05 UTC") +
		" on attempt 2 of 2; one more attempt allowed (max_attempts 3)"
	if len(tl) != 6 || tl[3] != "attempt 2 started" || tl[4] != retried || tl[5] != "available from here on" {
		t.Errorf("after a retry, the timeline reads\n\t%s\nwant its entries 4 to 6 to be the attempt, %q and the job available", strings.Join(tl, "\n\t"), retried)
	}
	if why != "" {
		t.Errorf("a retried job, available again, is said to have failed because %q", why)
	}
	wantContains(t, "retried", body, `Retried <span class="chip">jobc_retried</span>`)

	// A job cancelled before its first attempt and retried: the record says so.
	cancelled := e.enqueue(map[string]string{"to": "c@example.com"})
	if st, err := runtime.CancelJob(ctx, e.pool, cancelled); err != nil || st != runtime.StateCancelled {
		t.Fatalf("cancel job %d: %s, %v", cancelled, st, err)
	}
	ended, err := runtime.GetJob(ctx, e.pool, cancelled)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runtime.RetryJob(ctx, e.pool, cancelled); err != nil {
		t.Fatal(err)
	}
	tl, _, _ = e.jobPage(cancelled)
	wantTimeline(t, "cancelled and retried", tl,
		"enqueued in email",
		"retried after it ended cancelled at "+ended.FinishedAt.UTC().Format("2006-01-02 15:04:05 UTC")+" before its first attempt",
		"available from here on")

	// A permanent error class of the job's type, and a class's own attempt limit, with
	// the job's attempts left; the same error of a kind the dashboard does not know says
	// what it can tell.
	decl := runtime.AttemptError{Attempt: 1, At: at, Class: "declined", Error: "card declined", Worker: "w1"}
	_, why, _ = e.jobPage(e.finished("charge_card", 3, decl))
	if want := "error class declined is permanent (retry: false): it failed on attempt 1 of 3"; why != want {
		t.Errorf("permanent class: the page says it failed because %q, want %q", why, want)
	}
	_, why, _ = e.jobPage(e.finished("charge_card", 3, runtime.AttemptError{Attempt: 2, At: at, Class: "transient", Error: "gateway timeout", Worker: "w1"}))
	if want := "out of attempts for error class transient, which allows 2: it failed on attempt 2 of 3"; why != want {
		t.Errorf("a class's own attempt limit: the page says it failed because %q, want %q", why, want)
	}
	_, why, _ = e.jobPage(e.finished("refund_card", 3, decl))
	if want := "it failed on attempt 1 of 3 with attempts left: its error class declined is not retried, or allows fewer attempts"; why != want {
		t.Errorf("a class of an unknown kind: the page says it failed because %q, want %q", why, want)
	}

	// Poisoned: jobc_poison ends a waiting job that made a statement fail.
	poisoned := e.enqueue(map[string]string{"to": "p@example.com"})
	var finishedID *int64
	if err := e.pool.QueryRow(ctx, `SELECT jobc_poison($1, NULL, 0, 'a statement failed on this job')`, poisoned).Scan(&finishedID); err != nil || finishedID == nil {
		t.Fatalf("poison job %d: %v, %v", poisoned, finishedID, err)
	}
	_, why, _ = e.jobPage(*finishedID)
	if !strings.HasPrefix(why, "poisoned: ") {
		t.Errorf("poisoned: the page says it failed because %q, want it to say poisoned", why)
	}

	// Its lease expired on its last attempt: the rescuer fails it.
	dead := e.enqueue(map[string]string{"to": "d@example.com"})
	if _, err := e.pool.Exec(ctx, `UPDATE jobc_jobs SET state = 'running', attempt = max_attempts, attempted_at = now() - interval '1 minute',
		lease_owner = 'ghost', lease_expires_at = now() - interval '1 second' WHERE id = $1`, dead); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pool.Exec(ctx, `SELECT * FROM jobc_rescue_expired(10)`); err != nil {
		t.Fatal(err)
	}
	if s := e.state(dead); s != runtime.StateFailed {
		t.Fatalf("rescued job %d on its last attempt is %s, want failed", dead, s)
	}
	_, why, _ = e.jobPage(dead)
	if want := "its lease expired on its last attempt (attempt 3 of 3): the worker stopped extending it (crashed, killed or disconnected)"; why != want {
		t.Errorf("lease expired: the page says it failed because %q, want %q", why, want)
	}
}

// FuzzJobTimeline renders the page of a failed job whose last attempt's error, class
// and attempt numbers are fuzzed, as any writer of the errors column may leave them:
// the page answers 200, says why the job failed, lists the error in the timeline, and
// links to the whole text exactly when the timeline shows only part of it.
func FuzzJobTimeline(f *testing.F) {
	e := &env{pool: pgtest.NewSchema(f, migrated)}
	h, err := dashboard.New(e.pool, dashboard.Options{JobTypes: []*runtime.JobType{emailType}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []struct {
		msg, class       string
		attempt, maxAtts uint8
	}{
		{"smtp: 550 mailbox unavailable", "invalid", 1, 3},
		{"panic: x\n\tstack.go:1", "panic", 3, 3},
		{strings.Repeat("é", 241), "", 2, 5},
		{"line\r\nnext", "jobc_retried", 0, 1},
		{"trailing\r\n \n", "transient", 2, 2},
		{"lease expired", "lease_expired", 9, 2},
		{`</span><script>alert(1)</script>`, "jobc_poisoned", 1, 1},
	} {
		f.Add(s.msg, s.class, s.attempt, s.maxAtts)
	}
	f.Fuzz(func(t *testing.T, msg, class string, attempt, maxAttempts uint8) {
		// PostgreSQL text holds neither NUL nor invalid UTF-8.
		if !utf8.ValidString(msg+class) || strings.ContainsRune(msg+class, 0) {
			return
		}
		errs, err := json.Marshal([]runtime.AttemptError{{Attempt: int(attempt), At: time.Now().Add(-time.Minute), Class: class, Error: msg, Worker: "w1"}})
		if err != nil {
			t.Fatal(err)
		}
		var id int64
		if err := e.pool.QueryRow(t.Context(), `
			INSERT INTO jobc_jobs_finished (id, kind, queue, state, priority, payload_version, payload, metadata,
			    available_at, attempt, max_attempts, errors, created_at, attempted_at, finished_at)
			VALUES (nextval(pg_get_serial_sequence('jobc_jobs', 'id')), 'send_email', 'email', 'failed', 1, 1, '{}', '{}',
			    now() - interval '2 minutes', $1, $2, $3, now() - interval '2 minutes', now() - interval '90 seconds', now())
			RETURNING id`, int(attempt), int(maxAttempts)+1, errs).Scan(&id); err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, fmt.Sprintf("/jobs/%d", id), nil))
		body := rec.Body.String()
		if rec.Code != http.StatusOK {
			t.Fatalf("GET /jobs/%d: %d:\n%s", id, rec.Code, body)
		}
		if m := whyItFailed.FindStringSubmatch(body); m == nil || m[1] == "" {
			t.Errorf("job %d: the page does not say why it failed:\n%s", id, body)
		}
		list := timelineList.FindStringSubmatch(body)
		if list == nil {
			t.Fatalf("job %d: no timeline:\n%s", id, body)
		}
		// Enqueued, the error, the attempt, the end.
		if n := len(timelineItem.FindAllStringSubmatch(list[1], -1)); n != 4 {
			t.Errorf("job %d: the timeline has %d entries, want 4:\n%s", id, n, list[1])
		}
		line, rest, _ := strings.Cut(msg, "\n")
		partial := strings.TrimSpace(rest) != "" || utf8.RuneCountInString(strings.TrimSuffix(line, "\r")) > 240
		if linked := strings.Contains(list[1], `<a href="#error-1">whole text</a>`); linked != partial {
			t.Errorf("job %d: error %q: the timeline links to its whole text: %v, want %v:\n%s", id, msg, linked, partial, list[1])
		}
	})
}
