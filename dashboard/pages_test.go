package dashboard_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/dashboard"
	"github.com/jobc-dev/jobc/runtime"
)

// TestPages renders every page over real data and checks each shows what it is for.
func TestPages(t *testing.T) {
	t.Parallel()
	nightly := runtime.MustJobType(runtime.JobType{
		Kind: "nightly_report", Queue: "reports", MaxAttempts: 1, WriteVersion: 1,
		Schedule: &runtime.Schedule{Cron: "0 3 * * *", Timezone: "Europe/Paris"},
		Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}},
	})
	e := newEnv(t, dashboard.Options{JobTypes: []*runtime.JobType{emailType, nightly}, OldestAvailableWarn: time.Minute})
	ctx := t.Context()
	avail := e.enqueue(map[string]string{"to": "ada@example.com"})
	// An available job two minutes old makes the queue late (warn threshold 1m).
	if _, err := e.pool.Exec(ctx, `UPDATE jobc_jobs SET available_at = now() - interval '2 minutes' WHERE id = $1`, avail); err != nil {
		t.Fatal(err)
	}
	sched := e.enqueue(map[string]string{"to": "later@example.com"}, runtime.RunAfter(time.Hour))
	f1 := e.failed("send_email", "email", "invalid", "smtp: 550 mailbox unavailable", `{"to":"x@example.com"}`)
	e.failed("send_email", "email", "invalid", "smtp: 550 mailbox unavailable", `{"to":"y@example.com"}`)
	e.failed("charge_card", "billing", "", "card declined", `{}`)
	if err := runtime.PauseQueue(ctx, e.pool, "billing"); err != nil {
		t.Fatal(err)
	}

	t.Run("overview", func(t *testing.T) {
		status, body := e.get("/")
		wantStatus(t, "GET /", status, http.StatusOK, body)
		wantContains(t, "overview", body, "<h2>Queues</h2>", `href="/jobs?queue=email"`, `class="num late"`,
			`<svg class="chart"`, `<span class="badge warn">paused</span>`, "No worker has sent a heartbeat lately.",
			`data-refresh="5000"`)
	})
	t.Run("jobs", func(t *testing.T) {
		status, body := e.get("/jobs")
		wantStatus(t, "GET /jobs", status, http.StatusOK, body)
		wantContains(t, "jobs", body, fmt.Sprintf(`href="/jobs/%d"`, avail), fmt.Sprintf(`href="/jobs/%d"`, sched),
			fmt.Sprintf(`href="/jobs/%d"`, f1), "charge_card")
		status, body = e.get("/jobs?state=failed&kind=send_email")
		wantStatus(t, "GET /jobs?state=failed", status, http.StatusOK, body)
		wantContains(t, "failed jobs", body, fmt.Sprintf(`href="/jobs/%d"`, f1), "smtp: 550 mailbox unavailable")
		if strings.Contains(body, fmt.Sprintf(`href="/jobs/%d"`, avail)) || strings.Contains(body, "charge_card</a>") {
			t.Errorf("the failed send_email filter lists other jobs:\n%s", body)
		}
		status, body = e.get("/jobs?queue=billing")
		wantStatus(t, "GET /jobs?queue=billing", status, http.StatusOK, body)
		if !strings.Contains(body, "charge_card") || strings.Contains(body, "smtp: 550") {
			t.Errorf("the billing queue filter shows the wrong jobs:\n%s", body)
		}
		status, body = e.get("/jobs?error=" + url.QueryEscape("MAILBOX unavail"))
		wantStatus(t, "GET /jobs?error=", status, http.StatusOK, body)
		if !strings.Contains(body, fmt.Sprintf(`href="/jobs/%d"`, f1)) || strings.Contains(body, "card declined") || strings.Contains(body, fmt.Sprintf(`href="/jobs/%d"`, avail)) {
			t.Errorf("the error text filter shows the wrong jobs:\n%s", body)
		}
		// The text is matched literally: % is not a wildcard.
		status, body = e.get("/jobs?error=" + url.QueryEscape("%"))
		wantStatus(t, "GET /jobs?error=%", status, http.StatusOK, body)
		wantContains(t, "error text %", body, "No job matches.")
		status, body = e.get("/jobs?class=invalid")
		wantStatus(t, "GET /jobs?class=invalid", status, http.StatusOK, body)
		if !strings.Contains(body, "smtp: 550") || strings.Contains(body, "card declined") {
			t.Errorf("the error class filter shows the wrong jobs:\n%s", body)
		}
	})
	t.Run("job", func(t *testing.T) {
		status, body := e.get(fmt.Sprintf("/jobs/%d", f1))
		wantStatus(t, "GET /jobs/{id}", status, http.StatusOK, body)
		wantContains(t, "job", body, "send_email", `&#34;to&#34;: &#34;x@example.com&#34;`, "smtp: 550 mailbox unavailable",
			`<span class="chip">invalid</span>`, "attempt 1 failed (invalid)", `id="retry"`, `id="delete"`, `data-confirm="Retry job`)
		if strings.Contains(body, `id="cancel"`) {
			t.Errorf("a failed job offers Cancel:\n%s", body)
		}
		status, body = e.get(fmt.Sprintf("/jobs/%d", avail))
		wantStatus(t, "GET available job", status, http.StatusOK, body)
		wantContains(t, "available job", body, `id="cancel"`, `id="delete"`)
		if strings.Contains(body, `id="retry"`) {
			t.Errorf("an available job offers Retry:\n%s", body)
		}
	})
	t.Run("failed", func(t *testing.T) {
		status, body := e.get("/failed")
		wantStatus(t, "GET /failed", status, http.StatusOK, body)
		wantContains(t, "failed", body, "smtp: 550 mailbox unavailable", "card declined", "Retry group", "Delete group")
		// The biggest group (two jobs) comes first.
		if strings.Index(body, "smtp: 550") > strings.Index(body, "card declined") {
			t.Errorf("groups are not ordered by size:\n%s", body)
		}
		wantContains(t, "failed", body, `<td class="num">2</td>`)
	})
	t.Run("queues", func(t *testing.T) {
		status, body := e.get("/queues")
		wantStatus(t, "GET /queues", status, http.StatusOK, body)
		wantContains(t, "queues", body, `action="/queues/billing/resume"`, `action="/queues/email/pause"`)
	})
	t.Run("versions", func(t *testing.T) {
		status, body := e.get("/versions")
		wantStatus(t, "GET /versions", status, http.StatusOK, body)
		// No worker runs: every unfinished job is one nobody takes.
		wantContains(t, "versions", body, `class="undecodable"`, "No live worker can take 2 unfinished jobs: the 2 rows marked below say why.", "no live worker serves queue")
	})
	t.Run("periodic", func(t *testing.T) {
		status, body := e.get("/periodic")
		wantStatus(t, "GET /periodic", status, http.StatusOK, body)
		paris, err := time.LoadLocation("Europe/Paris")
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().In(paris)
		next := time.Date(now.Year(), now.Month(), now.Day(), 3, 0, 0, 0, paris)
		if !next.After(now) {
			next = next.AddDate(0, 0, 1)
		}
		wantContains(t, "periodic", body, "nightly_report", "<code>0 3 * * *</code>", next.UTC().Format("2006-01-02 15:04:05 UTC"), "none yet")
		if strings.Contains(body, "<td><a href=\"/jobs?kind=send_email\">") {
			t.Errorf("a job type without a schedule is listed as periodic:\n%s", body)
		}
	})
	t.Run("static", func(t *testing.T) {
		for _, f := range []string{"static/style.css", "static/app.js"} {
			status, body := e.get(f)
			wantStatus(t, f, status, http.StatusOK, body)
		}
		status, body := e.get("static/style.css")
		wantContains(t, "style.css", body, "prefers-color-scheme: dark", "@media (max-width")
		_ = status
	})
}

// TestBadInput: a malformed id or filter is a 400 naming what is wrong, an unknown job
// a 404.
func TestBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{})
	for _, c := range []struct {
		path string
		want int
		says string
	}{
		{"/jobs/abc", http.StatusBadRequest, "job id: want a positive integer"},
		{"/jobs/-3", http.StatusBadRequest, "job id: want a positive integer"},
		{"/jobs/999999", http.StatusNotFound, "job 999999 not found"},
		{"/jobs?state=bogus", http.StatusBadRequest, "completed"},
		{"/jobs?after=x", http.StatusBadRequest, "after: want a job id"},
		{"/nope", http.StatusNotFound, ""},
	} {
		status, body := e.get(c.path)
		wantStatus(t, "GET "+c.path, status, c.want, body)
		wantContains(t, c.path, body, c.says)
	}
	tok := e.token(fmt.Sprintf("/jobs/%d", e.enqueue(map[string]string{})))
	status, body := e.post("/jobs/424242/retry", nil, tok)
	wantStatus(t, "retry of a missing job", status, http.StatusNotFound, body)
	status, body = e.post("/failed/retry", nil, tok)
	wantStatus(t, "group retry without a kind", status, http.StatusBadRequest, body)
	wantContains(t, "group retry without a kind", body, "names no kind")
	status, body = e.post("/failed/retry", url.Values{"group": {"not base64!"}}, tok)
	wantStatus(t, "group retry with a mangled key", status, http.StatusBadRequest, body)
	wantContains(t, "group retry with a mangled key", body, "not a group of the Failed page")
}

// TestPagination walks the job list by keyset pages and sees every job once.
func TestPagination(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{})
	want := map[int64]bool{}
	payloads := make([]map[string]string, 120)
	for i := range payloads {
		payloads[i] = map[string]string{"to": fmt.Sprintf("u%d@example.com", i)}
	}
	js, err := runtime.EnqueueMany(t.Context(), e.pool, emailType, payloads)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range js {
		want[j.ID] = true
	}
	seen := map[int64]bool{}
	path, pages := "/jobs", 0
	for path != "" {
		pages++
		status, body := e.get(path)
		wantStatus(t, "GET "+path, status, http.StatusOK, body)
		onPage := map[int64]bool{} // the id and the kind both link to a job
		for _, m := range jobLink.FindAllStringSubmatch(body, -1) {
			var id int64
			if _, err := fmt.Sscan(m[1], &id); err != nil {
				t.Fatal(err)
			}
			onPage[id] = true
		}
		for id := range onPage {
			if seen[id] {
				t.Errorf("job %d is listed on two pages", id)
			}
			seen[id] = true
		}
		path = ""
		if m := nextLink.FindStringSubmatch(body); m != nil {
			path = strings.ReplaceAll(m[1], "&amp;", "&")
		}
		if pages > 10 {
			t.Fatal("more than 10 pages for 120 jobs")
		}
	}
	if pages != 3 || len(seen) != len(want) {
		t.Errorf("walked %d pages and saw %d jobs; want 3 pages (50 a page) and %d jobs", pages, len(seen), len(want))
	}
	for id := range want {
		if !seen[id] {
			t.Errorf("job %d never listed", id)
		}
	}
}
