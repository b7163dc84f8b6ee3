package dashboard_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/dashboard"
	"github.com/jobc-dev/jobc/runtime"
)

// seedFlow records limits as a starting worker does (kind send_email by "to",
// concurrency 1; queue email, 100 starts a minute), a live worker decoding send_email
// v1, and under them a running and an available job of key a@example.com and an
// available job of key b@example.com, whose ids it returns.
func seedFlow(t *testing.T, pool *pgxpool.Pool) (running, held, free int64) {
	t.Helper()
	ctx := t.Context()
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_limits (scope, name, by_fields, spec_concurrency, spec_rate_limit, spec_rate_per) VALUES
		('kind', 'send_email', '{to}', 1, NULL, NULL),
		('queue', 'email', '{}', NULL, 100, interval '1 minute')`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_workers (id, host, pid, queues, kinds, lease_secs, heartbeat_at)
		VALUES ('w1', 'h1', 11, '{email}', '{"send_email": [1, 1]}', 30, now())`); err != nil {
		t.Fatal(err)
	}
	return flowJob(t, pool, "send_email", "email", "a@example.com", true), flowJob(t, pool, "send_email", "email", "a@example.com", false),
		flowJob(t, pool, "send_email", "email", "b@example.com", false)
}

// flowJob inserts a job of kind in queue with the flow key of to, running or
// available, as an enqueue and a claim leave it.
func flowJob(t *testing.T, pool *pgxpool.Pool, kind, queue, to string, running bool) int64 {
	t.Helper()
	state := "available"
	if running {
		state = "running"
	}
	var id int64
	if err := pool.QueryRow(t.Context(), `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts, flow_key,
		attempt, attempted_at, lease_owner, lease_expires_at)
		VALUES ($1, $2, $3, 2, 1, jsonb_build_object('to', $4::text), 3, json_build_array($4::text)::text,
			CASE WHEN $5 THEN 1 ELSE 0 END, CASE WHEN $5 THEN now() END,
			CASE WHEN $5 THEN 'w1' END, CASE WHEN $5 THEN now() + interval '1 hour' END)
		RETURNING id`, kind, queue, state, to, running).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func limits(t *testing.T, pool *pgxpool.Pool) []runtime.Limit {
	t.Helper()
	ls, err := runtime.ListLimits(t.Context(), pool)
	if err != nil {
		t.Fatal(err)
	}
	return ls
}

// postFollow posts a form as post does, wants the redirect an action answers with,
// and returns the page it leads to, with its banner.
func (e *env) postFollow(what, path string, form url.Values, token string) string {
	e.t.Helper()
	form.Set("csrf", token)
	req, err := http.NewRequestWithContext(e.t.Context(), http.MethodPost, e.base+strings.TrimPrefix(path, "/"), strings.NewReader(form.Encode()))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", e.srv.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	res.Body.Close()
	u, err := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusSeeOther || err != nil {
		e.t.Fatalf("%s: %s, Location %q; want 303", what, res.Status, res.Header.Get("Location"))
	}
	status, body := e.get(u.RequestURI())
	wantStatus(e.t, what+": the page it leads to", status, http.StatusOK, body)
	return body
}

// TestLimitsPage: the Limits page lists every limit with the spec's, the override's
// and the numbers in force and the jobs under them; its form sets an override,
// recorded with who set it, and Reset restores the spec's, each with a banner;
// forms that set nothing or no limit are refused with 400, a kind without limits
// with 404.
func TestLimitsPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{BasicUser: "ops", BasicPassword: "correct-horse-battery"})
	e.client.Transport = basicAuth{"ops", "correct-horse-battery"}
	seedFlow(t, e.pool)

	status, body := e.get("/limits")
	wantStatus(t, "GET /limits", status, http.StatusOK, body)
	kindRow := regexp.MustCompile(`(?s)<tr id="limit-kind-send_email">.*?</tr>`).FindString(body)
	wantContains(t, "the kind's row", kindRow, `href="/jobs?kind=send_email"`, "<td>to</td>", "<td>1 running</td>",
		`<td class="override">—</td>`, `<strong>1 running</strong>`, `<td class="num">1</td><td class="num">2</td>`,
		`action="/limits/kind/send_email/set"`, `name="concurrency"`)
	if strings.Contains(kindRow, "/reset") {
		t.Errorf("a limit without override offers Reset:\n%s", kindRow)
	}
	queueRow := regexp.MustCompile(`(?s)<tr id="limit-queue-email">.*?</tr>`).FindString(body)
	wantContains(t, "the queue's row", queueRow, "whole queue", "<td>100/1m</td>", `<strong>100/1m</strong>`, `placeholder="1m"`)
	wantContains(t, "nav", body, `<a href="/limits" aria-current="page">Limits</a>`)
	if strings.Contains(body, `data-refresh="5000"`) {
		t.Error("the Limits page refreshes itself: a refresh would wipe a form being filled in")
	}

	tok := e.token("/limits")
	page := e.postFollow("set", "/limits/queue/email/set", url.Values{"concurrency": {"4"}, "rate": {"5"}, "per": {"30s"}}, tok)
	ls := limits(t, e.pool)
	if q := ls[1]; q.Override != (runtime.LimitValues{Concurrency: 4, Rate: runtime.Rate{Limit: 5, Per: 30 * time.Second}}) ||
		q.Effective != q.Override || q.ChangedBy != "dashboard:ops" || q.ChangedAt == nil {
		t.Errorf("after Set: %+v", q)
	}
	wantContains(t, "after Set", page, `<div class="flash" role="status">Limits of queue email: concurrency 4, rate 5/30s set; workers apply it from their next claim.</div>`)
	queueRow = regexp.MustCompile(`(?s)<tr id="limit-queue-email">.*?</tr>`).FindString(page)
	wantContains(t, "the queue's row after Set", queueRow, `<td class="override">4 running · 5/30s</td>`, `action="/limits/queue/email/reset"`, "by dashboard:ops")

	// Only what the form gives changes.
	status, body = e.post("/limits/queue/email/set", url.Values{"concurrency": {"6"}, "rate": {""}, "per": {""}}, tok)
	wantStatus(t, "set concurrency only", status, http.StatusSeeOther, body)
	if q := limits(t, e.pool)[1]; q.Override.Concurrency != 6 || q.Override.Rate != (runtime.Rate{Limit: 5, Per: 30 * time.Second}) {
		t.Errorf("after a Set of the concurrency alone: %+v, want the rate kept", q.Override)
	}

	page = e.postFollow("reset", "/limits/queue/email/reset", url.Values{}, tok)
	if q := limits(t, e.pool)[1]; q.Override != (runtime.LimitValues{}) || q.Effective.Rate.Limit != 100 {
		t.Errorf("after Reset: %+v, want the spec's", q)
	}
	wantContains(t, "after Reset", page, "Limits of queue email: the spec&#39;s apply again from the next claim.")

	for _, c := range []struct {
		path string
		form url.Values
		want int
		says string
	}{
		{"/limits/kind/send_email/set", url.Values{}, http.StatusBadRequest, "nothing to set"},
		{"/limits/kind/send_email/set", url.Values{"concurrency": {"0"}}, http.StatusBadRequest, "want a whole number of at least 1"},
		{"/limits/kind/send_email/set", url.Values{"concurrency": {"two"}}, http.StatusBadRequest, "concurrency &#34;two&#34;"},
		{"/limits/kind/send_email/set", url.Values{"rate": {"10"}}, http.StatusBadRequest, "want a positive duration"},
		{"/limits/kind/send_email/set", url.Values{"per": {"1m"}}, http.StatusBadRequest, "want a whole number of starts"},
		{"/limits/kind/send_email/set", url.Values{"rate": {"10"}, "per": {"-1m"}}, http.StatusBadRequest, "want a positive duration"},
		{"/limits/job/send_email/set", url.Values{"concurrency": {"2"}}, http.StatusBadRequest, "want kind or queue"},
		{"/limits/job/send_email/reset", nil, http.StatusBadRequest, "want kind or queue"},
		{"/limits/kind/resize/set", url.Values{"concurrency": {"2"}}, http.StatusNotFound, "no flow control declared"},
		{"/limits/queue/images/reset", nil, http.StatusNotFound, "no flow control declared"},
	} {
		status, body := e.post(c.path, c.form, tok)
		wantStatus(t, fmt.Sprintf("POST %s %v", c.path, c.form), status, c.want, body)
		wantContains(t, fmt.Sprintf("POST %s %v", c.path, c.form), body, c.says)
	}
	if k := limits(t, e.pool)[0]; k.Override != (runtime.LimitValues{}) || k.ChangedAt != nil {
		t.Errorf("refused forms changed the kind's limit: %+v", k)
	}
}

// basicAuth sends every request with basic-auth credentials.
type basicAuth struct{ user, password string }

func (b basicAuth) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.SetBasicAuth(b.user, b.password)
	return http.DefaultTransport.RoundTrip(r)
}

// TestLimitsPageEmpty: without limits the page says why there are none.
func TestLimitsPageEmpty(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{})
	status, body := e.get("/limits")
	wantStatus(t, "GET /limits", status, http.StatusOK, body)
	wantContains(t, "no limits", body, "No limits: no job type or queue with flow control has had a worker start yet.")
}

// TestJobPageWhyWaiting: a waiting job's page says what holds it, with the limit's
// numbers and a link to the Limits page; a running job's page says nothing of the
// kind; with HidePayloads the key, made of payload values, stays off the page.
func TestJobPageWhyWaiting(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{})
	running, held, free := seedFlow(t, e.pool)
	why := regexp.MustCompile(`<dt>Why waiting</dt><dd id="waiting" data-cause="([a-z_]+)">(.*?)</dd>`)

	_, body := e.get(fmt.Sprintf("/jobs/%d", held))
	m := why.FindStringSubmatch(body)
	if m == nil || m[1] != "key_concurrency" || m[2] != `to a@example.com is at its limit 1/1 · <a href="/limits">Limits</a>` {
		t.Errorf("job %d held by its key's limit: %q\n%s", held, m, body)
	}
	_, body = e.get(fmt.Sprintf("/jobs/%d", free))
	if m := why.FindStringSubmatch(body); m == nil || m[1] != "slot" {
		t.Errorf("job %d of a free key: %q", free, m)
	}
	_, body = e.get(fmt.Sprintf("/jobs/%d", running))
	if strings.Contains(body, "Why waiting") {
		t.Errorf("running job %d says why it waits:\n%s", running, body)
	}
	if err := runtime.PauseQueue(t.Context(), e.pool, "email"); err != nil {
		t.Fatal(err)
	}
	_, body = e.get(fmt.Sprintf("/jobs/%d", held))
	if m := why.FindStringSubmatch(body); m == nil || m[1] != "queue_paused" || m[2] != "queue email is paused" {
		t.Errorf("job %d in a paused queue: %q", held, m)
	}

	hidden := newEnv(t, dashboard.Options{HidePayloads: true})
	_, held, _ = seedFlow(t, hidden.pool)
	_, body = hidden.get(fmt.Sprintf("/jobs/%d", held))
	if m := why.FindStringSubmatch(body); m == nil || !strings.HasPrefix(m[2], "its key (hidden) is at its limit 1/1") || strings.Contains(body, "a@example.com") {
		t.Errorf("HidePayloads: job %d: %q\n%s", held, m, body)
	}
}

// throttledCell is a queue's Throttled figure on the Overview.
var throttledCell = regexp.MustCompile(`<td class="num throttled">(?:<a [^>]*>)?(\d+)`)

// TestOverviewThrottled: the Overview counts a queue's available jobs that wait under
// flow control as throttled, apart from the others: from the queue's own limit, or
// from its kinds' limits; a queue whose every available job is throttled says so.
func TestOverviewThrottled(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{})
	seedFlow(t, e.pool)
	// Queue reports: a kind limit only, two jobs under it and one without flow control.
	if _, err := e.pool.Exec(t.Context(), `INSERT INTO jobc_limits (scope, name, by_fields, spec_concurrency) VALUES ('kind', 'render', '{to}', 1)`); err != nil {
		t.Fatal(err)
	}
	flowJob(t, e.pool, "render", "reports", "x", false)
	flowJob(t, e.pool, "render", "reports", "y", false)
	if _, err := e.pool.Exec(t.Context(), `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts)
		VALUES ('plain', 'reports', 'available', 2, 1, '{}', 3)`); err != nil {
		t.Fatal(err)
	}
	status, body := e.get("/")
	wantStatus(t, "GET /", status, http.StatusOK, body)
	rows := regexp.MustCompile(`(?s)<tr>\s*<td><a href="/jobs\?queue=(\w+)">.*?</tr>`).FindAllStringSubmatch(body, -1)
	got := map[string]string{}
	for _, r := range rows {
		if m := throttledCell.FindStringSubmatch(r[0]); m != nil {
			got[r[1]] = m[1]
		}
		if r[1] == "email" && !strings.Contains(r[0], `title="every available job waits under flow control">throttled</span>`) {
			t.Errorf("queue email, every available job throttled, has no throttled badge:\n%s", r[0])
		}
		if r[1] == "reports" && strings.Contains(r[0], ">throttled</span>") {
			t.Errorf("queue reports, one job of three free, has the throttled badge:\n%s", r[0])
		}
	}
	if got["email"] != "2" || got["reports"] != "2" {
		t.Errorf("throttled per queue: %v, want email 2 (its queue limit), reports 2 (its kind's)\n%s", got, body)
	}
	wantContains(t, "overview", body, `<div class="tile throttled"><span class="n">4</span>`)
}
