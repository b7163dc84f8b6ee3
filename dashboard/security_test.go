package dashboard_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/dashboard"
	"github.com/jobc-dev/jobc/runtime"
)

// TestCSRFRefusal: a POST that is not a form of this dashboard gets 403 and changes
// nothing — without a token, with a wrong one, with another browser's, or sent from
// another site even with the right one.
func TestCSRFRefusal(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{})
	id := e.failed("send_email", "email", "", "boom", `{}`)
	tok := e.token(fmt.Sprintf("/jobs/%d", id))
	same := http.Header{"Origin": {e.srv.URL}, "Sec-Fetch-Site": {"same-origin"}}

	other := newEnv(t, dashboard.Options{})
	otherTok := other.token(fmt.Sprintf("/jobs/%d", other.failed("send_email", "email", "", "boom", `{}`)))

	for _, c := range []struct {
		what   string
		form   url.Values
		header http.Header
		says   string
	}{
		{"no token", url.Values{}, same, "CSRF token"},
		{"a wrong token", url.Values{"csrf": {"AAAA" + tok[4:]}}, same, "CSRF token"},
		{"another dashboard's token", url.Values{"csrf": {otherTok}}, same, "CSRF token"},
		{"cross-site", url.Values{"csrf": {tok}}, http.Header{"Sec-Fetch-Site": {"cross-site"}}, "cross-site"},
		{"another origin", url.Values{"csrf": {tok}}, http.Header{"Origin": {"https://evil.example"}}, "another origin"},
	} {
		for _, action := range []string{"retry", "delete"} {
			status, body := e.do(http.MethodPost, fmt.Sprintf("/jobs/%d/%s", id, action), c.form, c.header)
			wantStatus(t, c.what+" "+action, status, http.StatusForbidden, body)
			wantContains(t, c.what, body, c.says)
		}
		status, body := e.do(http.MethodPost, "/queues/email/pause", c.form, c.header)
		wantStatus(t, c.what+" pause", status, http.StatusForbidden, body)
		for _, action := range []string{"set", "reset"} {
			status, body = e.do(http.MethodPost, "/limits/kind/send_email/"+action, mergeForm(c.form, url.Values{"concurrency": {"9"}}), c.header)
			wantStatus(t, c.what+" limit "+action, status, http.StatusForbidden, body)
			wantContains(t, c.what+" limit "+action, body, c.says)
		}
		status, body = e.do(http.MethodPost, "/failed/delete", mergeForm(c.form, group("send_email", "boom")), c.header)
		wantStatus(t, c.what+" group delete", status, http.StatusForbidden, body)
	}
	// A fresh client (no cookie) with a token read by someone else is refused too.
	e2 := *e
	e2.client = &http.Client{CheckRedirect: e.client.CheckRedirect}
	status, body := e2.do(http.MethodPost, fmt.Sprintf("/jobs/%d/retry", id), url.Values{"csrf": {tok}}, same)
	wantStatus(t, "no cookie", status, http.StatusForbidden, body)

	if got := e.state(id); got != runtime.StateFailed {
		t.Errorf("after refused requests, job %d is %s, want failed (nothing changed)", id, got)
	}
	qs, err := runtime.ListQueueStats(t.Context(), e.pool)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if q.Paused {
			t.Errorf("queue %s paused by a refused request", q.Queue)
		}
	}
	// The same request with the token and cookie goes through: the refusals were the
	// missing pieces, not something else.
	status, body = e.post(fmt.Sprintf("/jobs/%d/retry", id), nil, tok)
	wantStatus(t, "genuine retry", status, http.StatusSeeOther, body)

	// GET never mutates: the action paths do not answer it.
	status, body = e.get(fmt.Sprintf("/jobs/%d/delete", id))
	wantStatus(t, "GET of an action", status, http.StatusMethodNotAllowed, body)
}

func mergeForm(a, b url.Values) url.Values {
	out := url.Values{}
	for _, v := range []url.Values{a, b} {
		for k, vs := range v {
			out[k] = vs
		}
	}
	return out
}

// TestReadOnly: a read-only dashboard shows everything, offers no action, and refuses
// a POST even with a valid token.
func TestReadOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{ReadOnly: true})
	id := e.failed("send_email", "email", "", "boom", `{"secret":"visible"}`)
	e.enqueue(map[string]string{})
	seedFlow(t, e.pool)
	for _, p := range []string{"/", "/jobs", fmt.Sprintf("/jobs/%d", id), "/failed", "/queues", "/versions", "/periodic", "/limits"} {
		status, body := e.get(p)
		wantStatus(t, "GET "+p, status, http.StatusOK, body)
		if strings.Contains(body, `method="post"`) {
			t.Errorf("read-only %s offers a mutation:\n%s", p, body)
		}
		wantContains(t, p, body, "read-only")
	}
	_, body := e.get(fmt.Sprintf("/jobs/%d", id))
	wantContains(t, "read-only job page", body, "boom", "visible")

	// A token from a writable dashboard's page does not matter: the server refuses.
	w := newEnv(t, dashboard.Options{})
	tok := w.token(fmt.Sprintf("/jobs/%d", w.failed("send_email", "email", "", "boom", `{}`)))
	for _, path := range []string{fmt.Sprintf("/jobs/%d/retry", id), fmt.Sprintf("/jobs/%d/delete", id), fmt.Sprintf("/jobs/%d/cancel", id),
		"/queues/email/pause", "/queues/email/resume", "/failed/retry", "/failed/delete", "/limits/kind/send_email/set", "/limits/queue/email/reset"} {
		status, body := e.post(path, mergeForm(group("send_email", "boom"), url.Values{"concurrency": {"9"}}), tok)
		wantStatus(t, "read-only POST "+path, status, http.StatusForbidden, body)
		wantContains(t, path, body, "read-only")
	}
	if got := e.state(id); got != runtime.StateFailed {
		t.Errorf("read-only dashboard changed job %d to %s", id, got)
	}
	if ls := limits(t, e.pool); ls[0].Override != (runtime.LimitValues{}) || ls[0].ChangedAt != nil {
		t.Errorf("read-only dashboard changed a limit: %+v", ls[0])
	}
}

// TestHidePayloads keeps every producer-given value off the job page: the payload, the
// metadata and the unique key (usually made of the payload).
func TestHidePayloads(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{HidePayloads: true})
	id := e.failed("send_email", "email", "", "boom", `{"card":"4111-1111-1111-1111"}`)
	status, body := e.get(fmt.Sprintf("/jobs/%d", id))
	wantStatus(t, "job page", status, http.StatusOK, body)
	wantContains(t, "job page", body, "Payloads are hidden")
	if strings.Contains(body, "4111") {
		t.Errorf("--hide-payloads shows the payload:\n%s", body)
	}
	keyed := e.enqueue(map[string]string{"to": "ada@example.com"}, runtime.WithDedupKey("card-4242-4242"),
		runtime.WithMetadata(map[string]any{"customer": "cust-7777"}))
	status, body = e.get(fmt.Sprintf("/jobs/%d", keyed))
	wantStatus(t, "keyed job page", status, http.StatusOK, body)
	for _, secret := range []string{"ada@example.com", "4242", "cust-7777", "Unique key", "Metadata"} {
		if strings.Contains(body, secret) {
			t.Errorf("--hide-payloads shows %q:\n%s", secret, body)
		}
	}
	// The same job on a dashboard that shows payloads: all three are there, so the
	// test looks for the right strings.
	w := *e
	h, err := dashboard.New(e.pool, dashboard.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.srv = newServer(t, h)
	w.base = w.srv.URL + "/"
	_, body = w.get(fmt.Sprintf("/jobs/%d", keyed))
	wantContains(t, "job page showing payloads", body, "ada@example.com", "card-4242-4242", "cust-7777")
}

// TestAuth: with a bearer token or basic-auth credentials configured, every route
// refuses a request without them (401), including assets and actions.
func TestAuth(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{BearerToken: "s3cret-token-of-32-bytes-or-so", BasicUser: "ops", BasicPassword: "correct horse battery"})
	basic := func(u, p string) http.Header {
		return http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte(u+":"+p))}}
	}
	for _, c := range []struct {
		what   string
		header http.Header
		want   int
	}{
		{"nothing", nil, http.StatusUnauthorized},
		{"a wrong token", http.Header{"Authorization": {"Bearer s3cret-token-of-32-bytes-or-sO"}}, http.StatusUnauthorized},
		{"a token prefix", http.Header{"Authorization": {"Bearer s3cret"}}, http.StatusUnauthorized},
		{"a wrong password", basic("ops", "correct horse battery!"), http.StatusUnauthorized},
		{"a wrong user", basic("root", "correct horse battery"), http.StatusUnauthorized},
		{"the token", http.Header{"Authorization": {"Bearer s3cret-token-of-32-bytes-or-so"}}, http.StatusOK},
		{"the credentials", basic("ops", "correct horse battery"), http.StatusOK},
	} {
		for _, p := range []string{"/", "/jobs", "/static/style.css"} {
			status, body := e.do(http.MethodGet, p, nil, c.header)
			wantStatus(t, c.what+" GET "+p, status, c.want, body)
		}
		status, body := e.do(http.MethodPost, "/queues/email/pause", url.Values{}, c.header)
		if c.want == http.StatusUnauthorized {
			wantStatus(t, c.what+" POST", status, http.StatusUnauthorized, body)
		} else {
			wantStatus(t, c.what+" POST without a CSRF token", status, http.StatusForbidden, body)
		}
	}
	if _, err := dashboard.New(e.pool, dashboard.Options{BasicUser: "ops"}); err == nil || !strings.Contains(err.Error(), "BasicPassword") {
		t.Errorf("New with a user and no password: %v, want an error naming BasicPassword", err)
	}
}

// TestEscaping: a kind, queue, error class, error message and payload holding HTML or
// script show as text on every page.
func TestEscaping(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{})
	const (
		kind    = `<script>alert("kind")</script>`
		queue   = `q"><img src=x onerror=alert(1)>`
		class   = `<b onmouseover=alert(2)>cls</b>`
		msg     = `</pre><script>alert("error")</script>`
		payload = `{"html":"</pre><script>alert(\"payload\")</script>"}`
	)
	id := e.failed(kind, queue, class, msg, payload)
	if err := runtime.PauseQueue(t.Context(), e.pool, queue); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/", "/jobs", "/jobs?state=failed&kind=" + url.QueryEscape(kind), fmt.Sprintf("/jobs/%d", id), "/failed", "/queues", "/versions"} {
		status, body := e.get(p)
		wantStatus(t, "GET "+p, status, http.StatusOK, body)
		for _, bad := range []string{"<script>alert", "<img src=x", "<b onmouseover", `"><img`} {
			if strings.Contains(body, bad) {
				t.Errorf("%s contains %q unescaped:\n%s", p, bad, body)
			}
		}
	}
	_, body := e.get(fmt.Sprintf("/jobs/%d", id))
	wantContains(t, "job page", body, "&lt;script&gt;alert(&#34;kind&#34;)&lt;/script&gt;", "&lt;/pre&gt;&lt;script&gt;alert(&#34;error&#34;)",
		"&lt;b onmouseover=alert(2)&gt;cls&lt;/b&gt;", `&lt;/pre&gt;&lt;script&gt;alert(\&#34;payload\&#34;)`)
	_, body = e.get("/failed")
	wantContains(t, "failed page", body, "&lt;script&gt;alert(&#34;kind&#34;)&lt;/script&gt;",
		`name="group" value="`+group(kind, msg).Get("group")+`"`)
	// The hostile group can still be acted on: its kind and message round-trip.
	tok := e.token("/failed")
	status, body := e.post("/failed/retry", group(kind, msg), tok)
	wantStatus(t, "retry of the hostile group", status, http.StatusSeeOther, body)
	if got := e.state(id); got != runtime.StateAvailable {
		t.Errorf("the hostile group's job is %s after Retry group, want available", got)
	}
}

// TestPrefix: mounted under a prefix, by Options.Prefix or by the application's
// http.StripPrefix, every link and form points inside the prefix.
func TestPrefix(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{Prefix: "/admin/jobs/"})
	id := e.failed("send_email", "email", "", "boom", `{}`)
	_, body := e.get(fmt.Sprintf("/jobs/%d", id))
	wantContains(t, "prefixed job page", body, `href="/admin/jobs/static/style.css"`, `href="/admin/jobs/failed"`,
		fmt.Sprintf(`action="/admin/jobs/jobs/%d/retry"`, id))
	checkLinks(t, body, "/admin/jobs/")

	pool := e.pool
	h, err := dashboard.New(pool, dashboard.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ops/", http.StripPrefix("/ops", h))
	s := &env{t: t, pool: pool, client: e.client}
	srv := newServer(t, mux)
	s.srv, s.base = srv, srv.URL+"/ops/"
	status, body := s.get(fmt.Sprintf("/jobs/%d", id))
	wantStatus(t, "StripPrefix job page", status, http.StatusOK, body)
	wantContains(t, "StripPrefix job page", body, `href="/ops/static/style.css"`, fmt.Sprintf(`action="/ops/jobs/%d/retry"`, id))
	checkLinks(t, body, "/ops/")
	tok := s.token(fmt.Sprintf("/jobs/%d", id))
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.base+fmt.Sprintf("jobs/%d/retry", id), strings.NewReader(url.Values{"csrf": {tok}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, fmt.Sprintf("/ops/jobs/%d?flash=", id)) {
		t.Errorf("retry under StripPrefix: %d to %q, want 303 to /ops/jobs/%d", res.StatusCode, loc, id)
	}
}

// checkLinks fails for a link or form on the page that leaves prefix.
func checkLinks(t *testing.T, body, prefix string) {
	t.Helper()
	for _, m := range attrURL.FindAllStringSubmatch(body, -1) {
		if !strings.HasPrefix(m[2], prefix) {
			t.Errorf("%s=%q is outside %s", m[1], m[2], prefix)
		}
	}
}

// TestJobPageShowsResult: a completed job's result is on its page, with its version,
// unless payloads are hidden: a result is the handler's output, as sensitive as its
// input.
func TestJobPageShowsResult(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{})
	var id int64
	if err := e.pool.QueryRow(t.Context(), `INSERT INTO jobc_jobs_finished (id, kind, queue, state, priority, payload_version, payload,
		metadata, available_at, attempt, max_attempts, errors, created_at, result_version, result)
		VALUES (7001, 'charge', 'q', 'completed', 5, 1, '{}', '{}', now(), 1, 3, '[]', now(), 3, '{"charge_id": "ch_secret_42"}') RETURNING id`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	status, body := e.get(fmt.Sprintf("/jobs/%d", id))
	wantStatus(t, "job page", status, http.StatusOK, body)
	wantContains(t, "job page", body, `id="result"`, "ch_secret_42", `Result <span class="muted">v3</span>`)
	hidden := newEnv(t, dashboard.Options{HidePayloads: true})
	if _, err := hidden.pool.Exec(t.Context(), `INSERT INTO jobc_jobs_finished (id, kind, queue, state, priority, payload_version, payload,
		metadata, available_at, attempt, max_attempts, errors, created_at, result_version, result)
		VALUES (7001, 'charge', 'q', 'completed', 5, 1, '{}', '{}', now(), 1, 3, '[]', now(), 3, '{"charge_id": "ch_secret_42"}')`); err != nil {
		t.Fatal(err)
	}
	status, body = hidden.get(fmt.Sprintf("/jobs/%d", id))
	wantStatus(t, "hidden job page", status, http.StatusOK, body)
	if strings.Contains(body, "ch_secret_42") || strings.Contains(body, `id="result"`) {
		t.Errorf("--hide-payloads shows the result:\n%s", body)
	}
}
