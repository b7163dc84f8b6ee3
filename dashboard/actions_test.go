package dashboard_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/dashboard"
	"github.com/jobc-dev/jobc/runtime"
)

// TestJobActions retries, cancels and deletes jobs through the pages' forms.
func TestJobActions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{})
	ctx := t.Context()

	failed := e.failed("send_email", "email", "", "boom", `{"to":"a@example.com"}`)
	tok := e.token(fmt.Sprintf("/jobs/%d", failed))
	status, body := e.post(fmt.Sprintf("/jobs/%d/retry", failed), url.Values{"next": {fmt.Sprintf("/jobs/%d", failed)}}, tok)
	wantStatus(t, "retry", status, http.StatusSeeOther, body)
	if got := e.state(failed); got != runtime.StateAvailable {
		t.Errorf("after Retry, job %d is %s, want available", failed, got)
	}
	info, err := runtime.GetJob(ctx, e.pool, failed)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Errors) != 2 || info.Errors[0].Error != "boom" || info.Errors[1].Class != "jobc_retried" {
		t.Errorf("after Retry, the error history is %+v, want the failed attempt kept and the retry recorded", info.Errors)
	}
	// Retrying it again is refused: it is available already.
	status, body = e.post(fmt.Sprintf("/jobs/%d/retry", failed), nil, tok)
	wantStatus(t, "retry of an available job", status, http.StatusConflict, body)

	status, body = e.post(fmt.Sprintf("/jobs/%d/cancel", failed), nil, tok)
	wantStatus(t, "cancel", status, http.StatusSeeOther, body)
	if got := e.state(failed); got != runtime.StateCancelled {
		t.Errorf("after CancelJob, job %d is %s, want cancelled", failed, got)
	}

	status, body = e.post(fmt.Sprintf("/jobs/%d/delete", failed), url.Values{"next": {"//evil.example/"}}, tok)
	wantStatus(t, "delete", status, http.StatusSeeOther, body)
	if _, err := runtime.GetJob(ctx, e.pool, failed); !errors.Is(err, runtime.ErrJobNotFound) {
		t.Errorf("after Delete, GetJob: %v, want ErrJobNotFound", err)
	}

	// A running job cannot be deleted: 409, and it stays.
	running := e.enqueue(map[string]string{})
	if _, err := e.pool.Exec(ctx, `UPDATE jobc_jobs SET state = 'running', attempt = 1, attempted_at = now(),
		lease_owner = 'w1', lease_expires_at = now() + interval '1 hour' WHERE id = $1`, running); err != nil {
		t.Fatal(err)
	}
	status, body = e.post(fmt.Sprintf("/jobs/%d/delete", running), nil, tok)
	wantStatus(t, "delete of a running job", status, http.StatusConflict, body)
	wantContains(t, "delete of a running job", body, "cancel it first")
	if got := e.state(running); got != runtime.StateRunning {
		t.Errorf("a refused delete left job %d %s, want running", running, got)
	}
}

// TestRedirects: an action goes back to the page named by the form's next, inside the
// dashboard only.
func TestRedirects(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{Prefix: "/ops/jobs/"})
	id := e.enqueue(map[string]string{})
	tok := e.token(fmt.Sprintf("/jobs/%d", id))
	for next, want := range map[string]string{
		"/queues":              "/ops/jobs/queues?flash=",
		"//evil.example/x":     "/ops/jobs/queues?flash=",
		"/\\evil.example":      "/ops/jobs/queues?flash=",
		"https://evil.example": "/ops/jobs/queues?flash=",
		"/jobs?state=failed":   "/ops/jobs/jobs?flash=",
	} {
		form := url.Values{"csrf": {tok}, "next": {next}}
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.base+"queues/email/pause", strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, err := e.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, want) {
			t.Errorf("next=%q: %d Location %q, want 303 to %s...", next, res.StatusCode, loc, want)
		}
	}
}

// TestQueueActions pauses and resumes a queue from the Queues page.
func TestQueueActions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{})
	ctx := t.Context()
	e.enqueue(map[string]string{})
	tok := e.token("/queues")
	paused := func() bool {
		t.Helper()
		qs, err := runtime.ListQueueStats(ctx, e.pool)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			if q.Queue == "email" {
				return q.Paused
			}
		}
		t.Fatalf("no queue email in %+v", qs)
		return false
	}
	status, body := e.post("/queues/email/pause", nil, tok)
	wantStatus(t, "pause", status, http.StatusSeeOther, body)
	if !paused() {
		t.Error("after Pause, queue email is not paused")
	}
	_, body = e.get("/queues")
	wantContains(t, "queues after pause", body, `action="/queues/email/resume"`, "paused")
	status, body = e.post("/queues/email/resume", nil, tok)
	wantStatus(t, "resume", status, http.StatusSeeOther, body)
	if paused() {
		t.Error("after Resume, queue email is paused")
	}
	// A queue name with a slash or spaces travels escaped in the path.
	status, body = e.post("/queues/"+url.PathEscape("odd/name x")+"/pause", nil, tok)
	wantStatus(t, "pause of an odd name", status, http.StatusSeeOther, body)
	_, body = e.get("/queues")
	wantContains(t, "odd queue", body, `action="/queues/odd%2Fname%20x/resume"`)
}

// TestFailedGroupActions retries one group and deletes another; jobs outside the group
// are left alone.
func TestFailedGroupActions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{})
	ctx := t.Context()
	var timeouts []int64
	for range 3 {
		timeouts = append(timeouts, e.failed("send_email", "email", "transient", "dial tcp: i/o timeout", `{}`))
	}
	other := e.failed("send_email", "email", "", "a different error", `{}`)
	otherKind := e.failed("charge_card", "billing", "", "dial tcp: i/o timeout", `{}`)
	tok := e.token("/failed")

	status, body := e.post("/failed/retry", group("send_email", "dial tcp: i/o timeout"), tok)
	wantStatus(t, "retry group", status, http.StatusSeeOther, body)
	for _, id := range timeouts {
		if got := e.state(id); got != runtime.StateAvailable {
			t.Errorf("after Retry group, job %d is %s, want available", id, got)
		}
	}
	for _, id := range []int64{other, otherKind} {
		if got := e.state(id); got != runtime.StateFailed {
			t.Errorf("job %d outside the group is %s after Retry group, want failed", id, got)
		}
	}

	status, body = e.post("/failed/delete", group("send_email", "a different error"), tok)
	wantStatus(t, "delete group", status, http.StatusSeeOther, body)
	if _, err := runtime.GetJob(ctx, e.pool, other); !errors.Is(err, runtime.ErrJobNotFound) {
		t.Errorf("after Delete group, job %d: %v, want not found", other, err)
	}
	if got := e.state(otherKind); got != runtime.StateFailed {
		t.Errorf("job %d of another kind is %s after Delete group, want failed", otherKind, got)
	}
	// The retried jobs are not failed any more: a delete of their group changes nothing.
	status, body = e.post("/failed/delete", group("send_email", "dial tcp: i/o timeout"), tok)
	wantStatus(t, "delete of an emptied group", status, http.StatusSeeOther, body)
	for _, id := range timeouts {
		if got := e.state(id); got != runtime.StateAvailable {
			t.Errorf("job %d is %s after deleting its (emptied) group, want available", id, got)
		}
	}
}
