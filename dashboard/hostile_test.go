package dashboard_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/dashboard"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// doHost sends a request that names host in its Host header; a form is posted with
// the headers a page that is same-origin with host sends.
func (e *env) doHost(method, path, host string, form url.Values) (int, string) {
	e.t.Helper()
	body := strings.NewReader("")
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.base+strings.TrimPrefix(path, "/"), body)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Host = host
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		// What a rebound page sends: it is same-origin with itself.
		req.Header.Set("Origin", "http://"+host)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	res, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	return res.StatusCode, readAll(e.t, res)
}

func readAll(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHostAllowlist: a dashboard on a loopback address answers only requests naming a
// loopback host at its port, or a name it was told to allow. A page of another site
// whose name was pointed at 127.0.0.1 (DNS rebinding) sends its own name: refused,
// reads and writes alike, before authentication or CSRF are looked at.
func TestHostAllowlist(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{AllowedHosts: []string{"jobs.example.com", "ops.example.com:8443"}})
	id := e.failed("send_email", "email", "", "boom", `{"secret":"s"}`)
	_, port, err := net.SplitHostPort(e.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host string
		want int
	}{
		{"127.0.0.1:" + port, http.StatusOK},
		{"localhost:" + port, http.StatusOK},
		{"LOCALHOST:" + port, http.StatusOK},
		{"[::1]:" + port, http.StatusOK},
		{"jobs.example.com", http.StatusOK},
		{"jobs.example.com:9999", http.StatusOK},
		{"ops.example.com:8443", http.StatusOK},
		{"evil.test:" + port, http.StatusMisdirectedRequest},
		{"evil.test", http.StatusMisdirectedRequest},
		{"localhost.evil.test:" + port, http.StatusMisdirectedRequest},
		{"localhost:1", http.StatusMisdirectedRequest},
		{"localhost", http.StatusMisdirectedRequest}, // port 80, not this server's
		{"ops.example.com:9999", http.StatusMisdirectedRequest},
		{"ops.example.com", http.StatusMisdirectedRequest},
	} {
		status, body := e.doHost(http.MethodGet, fmt.Sprintf("/jobs/%d", id), c.host, nil)
		wantStatus(t, "GET with Host "+c.host, status, c.want, body)
		if c.want == http.StatusMisdirectedRequest {
			wantContains(t, "Host "+c.host, body, "does not answer for host", "--allowed-host")
			if strings.Contains(body, `"secret"`) {
				t.Errorf("Host %s: the refusal shows the payload:\n%s", c.host, body)
			}
		}
	}
	// A rebound page would first read a token from a page (refused above) and then
	// post: even with a genuine token and cookie, the POST names the wrong host.
	tok := e.token(fmt.Sprintf("/jobs/%d", id))
	status, body := e.doHost(http.MethodPost, "/queues/email/pause", "evil.test:"+port, url.Values{"csrf": {tok}})
	wantStatus(t, "POST pause with Host evil.test", status, http.StatusMisdirectedRequest, body)
	qs, err := runtime.ListQueueStats(t.Context(), e.pool)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if q.Paused {
			t.Errorf("queue %s paused by a request for another host", q.Queue)
		}
	}

	// Without allowed names, a dashboard off loopback answers any host (it has
	// authentication instead, which a rebound page cannot send); with them, it checks.
	if _, err := dashboard.New(e.pool, dashboard.Options{AllowedHosts: []string{"bad host"}}); err == nil || !strings.Contains(err.Error(), "AllowedHosts[0]") {
		t.Errorf("New with AllowedHosts [\"bad host\"]: %v, want an error naming AllowedHosts[0]", err)
	}
	if _, err := dashboard.New(e.pool, dashboard.Options{AllowedHosts: []string{"ok.example", "x.example:0"}}); err == nil || !strings.Contains(err.Error(), "AllowedHosts[1]") {
		t.Errorf("New with AllowedHosts port 0: %v, want an error naming AllowedHosts[1]", err)
	}
}

// TestGroupActionsWithNewlines: a group whose message has line breaks (every panic's
// stack) is retried and deleted whole. A browser posts a form value's line breaks as
// CRLF; the group's key does not contain any. (dashboard/browsertest does it in
// Chromium.)
func TestGroupActionsWithNewlines(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{})
	const stack = "panic: runtime error: index out of range [3] with length 3\n\ngoroutine 7 [running]:\nmain.handle(...)\n\t/src/app/handle.go:42 +0x1d\r\n"
	var ids []int64
	for range 3 {
		ids = append(ids, e.failed("send_email", "email", "panic", stack, `{}`))
	}
	crlf := e.failed("send_email", "email", "panic", strings.ReplaceAll(stack, "\n", "\r\n"), `{}`)
	tok := e.token("/failed")
	_, body := e.get("/failed")
	key := group("send_email", stack).Get("group")
	wantContains(t, "failed page", body, `name="group" value="`+key+`"`)

	status, body := e.post("/failed/retry", url.Values{"group": {key}}, tok)
	wantStatus(t, "retry of the panic group", status, http.StatusSeeOther, body)
	for _, id := range ids {
		if got := e.state(id); got != runtime.StateAvailable {
			t.Errorf("after Retry group, job %d is %s, want available", id, got)
		}
	}
	if got := e.state(crlf); got != runtime.StateFailed {
		t.Errorf("job %d, whose message differs by its line breaks, is %s after retrying another group, want failed", crlf, got)
	}
	status, body = e.post("/failed/delete", group("send_email", strings.ReplaceAll(stack, "\n", "\r\n")), tok)
	wantStatus(t, "delete of the CRLF group", status, http.StatusSeeOther, body)
	if _, err := runtime.GetJob(t.Context(), e.pool, crlf); err == nil {
		t.Errorf("after Delete group, job %d is still there", crlf)
	}
}

// TestFlashOnlyFromServer: the banner shows the messages of the dashboard's own
// actions, never text from a link.
func TestFlashOnlyFromServer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{})
	id := e.failed("send_email", "email", "", "boom", `{}`)
	for _, q := range []string{"?flash=Your+session+expired%2C+call+555-0100",
		"?flash=Your+session+expired%2C+call+555-0100&fs=AAAA",
		"?flash=Your+session+expired%2C+call+555-0100&fs="} {
		status, body := e.get("/queues" + q)
		wantStatus(t, "GET /queues"+q, status, http.StatusOK, body)
		if strings.Contains(body, "555-0100") || strings.Contains(body, `class="flash"`) {
			t.Errorf("GET /queues%s shows the link's text in the banner:\n%s", q, body)
		}
	}
	tok := e.token(fmt.Sprintf("/jobs/%d", id))
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.base+fmt.Sprintf("jobs/%d/retry", id),
		strings.NewReader(url.Values{"csrf": {tok}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc := res.Header.Get("Location")
	status, body := e.get(loc)
	wantStatus(t, "GET "+loc, status, http.StatusOK, body)
	wantContains(t, "the page after Retry", body, `<div class="flash" role="status">Job `+fmt.Sprint(id)+` is available again.</div>`)
	// The signature covers the text: the server's signature on another text fails.
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("flash", "Job 1 is deleted; call 555-0100")
	_, body = e.get(u.Path + "?" + q.Encode())
	if strings.Contains(body, "555-0100") {
		t.Errorf("a signed flash with its text changed shows:\n%s", body)
	}
}

// TestTokenStrength: a bearer token or password that is short or has white space at
// an end (a one-space token, a pasted newline) is refused when the dashboard is made.
func TestTokenStrength(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewSchema(t, nil)
	for _, c := range []struct {
		opt  dashboard.Options
		says string
	}{
		{dashboard.Options{BearerToken: " "}, "Options.BearerToken starts or ends with white space"},
		{dashboard.Options{BearerToken: "0123456789abcdef\n"}, "Options.BearerToken starts or ends with white space"},
		{dashboard.Options{BearerToken: "short"}, "Options.BearerToken is 5 bytes: use at least 16"},
		{dashboard.Options{BasicUser: "ops", BasicPassword: "hunter2"}, "Options.BasicPassword is 7 bytes"},
		{dashboard.Options{BasicUser: "ops", BasicPassword: " correct horse battery"}, "Options.BasicPassword starts or ends"},
	} {
		if _, err := dashboard.New(pool, c.opt); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("New(%+v): %v, want an error saying %q", c.opt, err, c.says)
		}
	}
	if _, err := dashboard.New(pool, dashboard.Options{BearerToken: "0123456789abcdef"}); err != nil {
		t.Errorf("New with a 16-byte token: %v", err)
	}
}

// lockFinished holds an ACCESS EXCLUSIVE lock on jobc_jobs_finished until the returned
// function is called: every dashboard read of finished jobs waits for it, which is a
// statement that runs for as long as the test wants, without timing anything.
func lockFinished(t *testing.T, pool *pgxpool.Pool) (release func()) {
	t.Helper()
	tx, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(t.Context(), "LOCK TABLE jobc_jobs_finished IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { _ = tx.Rollback(context.WithoutCancel(t.Context())) }) }
	t.Cleanup(release)
	return release
}

// TestQueryTimeout: a request whose statements outlast Options.QueryTimeout is cut
// off and answers 503 with Retry-After, and the dashboard keeps serving.
func TestQueryTimeout(t *testing.T) {
	t.Parallel()
	const timeout = 200 * time.Millisecond
	e := newEnv(t, dashboard.Options{QueryTimeout: timeout})
	id := e.failed("send_email", "email", "", "boom", `{}`)
	tok := e.token("/failed")
	release := lockFinished(t, e.pool)
	for _, p := range []string{"/jobs?error=boom", "/jobs", "/failed"} {
		status, body := e.get(p)
		wantStatus(t, "GET "+p+" while its table is locked", status, http.StatusServiceUnavailable, body)
		wantContains(t, p, body, "did not answer within 200ms")
	}
	// An action too: a group's batch, and a job's retry.
	status, body := e.post("/failed/retry", group("send_email", "boom"), tok)
	wantStatus(t, "Retry group while the table is locked", status, http.StatusServiceUnavailable, body)
	status, body = e.post(fmt.Sprintf("/jobs/%d/retry", id), nil, tok)
	wantStatus(t, "Retry while the table is locked", status, http.StatusServiceUnavailable, body)
	release()
	if got := e.state(id); got != runtime.StateFailed {
		t.Errorf("job %d is %s after its timed-out retries, want failed", id, got)
	}
	status, body = e.post("/failed/retry", group("send_email", "boom"), tok)
	wantStatus(t, "Retry group after the lock", status, http.StatusSeeOther, body)
	status, body = e.get("/jobs?error=boom")
	wantStatus(t, "GET /jobs?error=boom after the lock", status, http.StatusOK, body)
	wantContains(t, "search", body, "boom")
}

// TestSearchCap: past Options.MaxSearches error-text searches at once, another one
// answers 503 with Retry-After at once instead of taking a connection; other pages
// are not capped, and the running searches finish.
func TestSearchCap(t *testing.T) {
	t.Parallel()
	const timeout = time.Minute // the searches wait on the lock, not on this
	e := newEnv(t, dashboard.Options{MaxSearches: 2, QueryTimeout: timeout})
	e.failed("send_email", "email", "", "boom", `{}`)
	release := lockFinished(t, e.pool)

	var wg sync.WaitGroup
	var ok atomic.Int32
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := e.client.Get(e.base + "jobs?error=boom")
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				ok.Add(1)
			}
		}()
	}
	// Wait until both searches wait on the lock, i.e. hold their places.
	var waiting int
	for deadline := time.Now().Add(timeout); ; time.Sleep(10 * time.Millisecond) {
		if err := e.pool.QueryRow(t.Context(), `SELECT count(*) FROM pg_locks
			WHERE relation = 'jobc_jobs_finished'::regclass AND NOT granted`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting >= 2 {
			break
		}
		if time.Now().After(deadline) {
			release()
			t.Fatalf("after %s, %d searches wait on the lock, want 2", timeout, waiting)
		}
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, e.base+"jobs?error=boom", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, res)
	res.Body.Close()
	wantStatus(t, "a third search", res.StatusCode, http.StatusServiceUnavailable, body)
	wantContains(t, "a third search", body, "2 searches by error text are running already")
	if res.Header.Get("Retry-After") == "" {
		t.Error("the refused search has no Retry-After")
	}
	// A page that is not a search is not capped (it reads no finished jobs).
	status, body := e.get("/versions")
	wantStatus(t, "GET /versions during the searches", status, http.StatusOK, body)
	release()
	wg.Wait()
	if ok.Load() != 2 {
		t.Errorf("%d of the 2 capped searches answered 200 once the lock was released", ok.Load())
	}
	status, body = e.get("/jobs?error=boom")
	wantStatus(t, "a search after the others ended", status, http.StatusOK, body)
}

// countingDialer counts the bytes the database sends.
type countingDialer struct {
	read atomic.Int64
}

func (d *countingDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, n: &d.read}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// TestListsLoadNoPayloads: the list pages do not fetch payloads or metadata from the
// database: the bytes the database sends for a page of jobs with 1 MB payloads and
// metadata are a small fraction of one payload, while the job page (which shows one)
// receives it whole, so the count is known to see payloads when there are some.
func TestListsLoadNoPayloads(t *testing.T) {
	t.Parallel()
	const big = 1 << 20
	e := newEnv(t, dashboard.Options{})
	var last int64
	for range 20 {
		j, err := runtime.Enqueue(t.Context(), e.pool, emailType, map[string]string{"to": strings.Repeat("x", big)},
			runtime.WithMetadata(map[string]any{"trace": strings.Repeat("m", big)}))
		if err != nil {
			t.Fatal(err)
		}
		last = j.ID
	}
	if _, err := e.pool.Exec(t.Context(), `UPDATE jobc_jobs SET errors = jsonb_build_array(jsonb_build_object(
		'attempt', 1, 'at', now(), 'error', 'boom ' || repeat('e', 100), 'worker', 'w1'))`); err != nil {
		t.Fatal(err)
	}
	cfg, err := pgxpool.ParseConfig(pgtest.SchemaConnString(t, pgtest.SchemaOf(e.pool)))
	if err != nil {
		t.Fatal(err)
	}
	var d countingDialer
	cfg.ConnConfig.DialFunc = d.dial
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	h, err := dashboard.New(pool, dashboard.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := *e
	c.srv = newServer(t, h)
	c.base = c.srv.URL + "/"
	for _, p := range []string{"/jobs", "/jobs?state=available", "/jobs?error=boom", "/jobs?kind=send_email&error=boom"} {
		before := d.read.Load()
		status, body := c.get(p)
		wantStatus(t, "GET "+p, status, http.StatusOK, body)
		wantContains(t, p, body, fmt.Sprintf(`href="/jobs/%d"`, last))
		got := d.read.Load() - before
		t.Logf("GET %s: %d bytes from the database", p, got)
		if got > big/4 {
			t.Errorf("GET %s read %d bytes from the database for a page of 20 jobs with 1 MB payloads: it loads payloads", p, got)
		}
	}
	before := d.read.Load()
	status, body := c.get(fmt.Sprintf("/jobs/%d", last))
	wantStatus(t, "job page", status, http.StatusOK, body)
	if got := d.read.Load() - before; got < big {
		t.Errorf("the job page read %d bytes from the database, want the payload's %d at least: the count does not see payloads", got, big)
	}
}
