package dashboard_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/dashboard"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func migrated(ctx context.Context, pool *pgxpool.Pool) error {
	_, err := runtime.Migrate(ctx, pool)
	return err
}

// emailType is a plain job type the tests enqueue.
var emailType = runtime.MustJobType(runtime.JobType{
	Kind: "send_email", Queue: "email", Priority: 2, MaxAttempts: 3, WriteVersion: 1,
	Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object","properties":{"to":{"type":"string"}}}`}},
})

// env is a migrated schema, a dashboard over it served by httptest, and a browser-like
// client with a cookie jar that does not follow redirects (tests look at them).
type env struct {
	t      *testing.T
	pool   *pgxpool.Pool
	srv    *httptest.Server
	client *http.Client
	base   string // the dashboard's URL, ending in "/"
}

func newEnv(t *testing.T, opt dashboard.Options) *env {
	t.Helper()
	pool := pgtest.NewSchema(t, migrated)
	h, err := dashboard.New(pool, opt)
	if err != nil {
		t.Fatal(err)
	}
	root := h
	base := "/"
	if opt.Prefix != "" {
		mux := http.NewServeMux()
		mux.Handle(opt.Prefix, h)
		root, base = mux, opt.Prefix
	}
	srv := httptest.NewServer(root)
	t.Cleanup(srv.Close)
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &env{t: t, pool: pool, srv: srv, client: client, base: srv.URL + base}
}

// get fetches path (relative to the dashboard) and returns the status and body.
func (e *env) get(path string) (int, string) {
	e.t.Helper()
	return e.do(http.MethodGet, path, nil, nil)
}

func (e *env) do(method, path string, form url.Values, header http.Header) (int, string) {
	e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.base+strings.TrimPrefix(path, "/"), body)
	if err != nil {
		e.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// token reads the CSRF token from a page's form, fetching the page first; it also
// sets the cookie the token belongs to.
func (e *env) token(page string) string {
	e.t.Helper()
	status, body := e.get(page)
	m := csrfInput.FindStringSubmatch(body)
	if status != http.StatusOK || m == nil {
		e.t.Fatalf("GET %s: %d, no CSRF token in the page:\n%s", page, status, body)
	}
	return m[1]
}

// post submits a form as the dashboard's own page would: with the token and the
// same-origin headers a browser sends.
func (e *env) post(path string, form url.Values, token string) (int, string) {
	e.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf", token)
	return e.do(http.MethodPost, path, form, http.Header{"Origin": {e.srv.URL}, "Sec-Fetch-Site": {"same-origin"}})
}

func (e *env) enqueue(payload any, opts ...runtime.EnqueueOption) int64 {
	e.t.Helper()
	j, err := runtime.Enqueue(e.t.Context(), e.pool, emailType, payload, opts...)
	if err != nil {
		e.t.Fatal(err)
	}
	return j.ID
}

// failed stores a job that failed for good, as the worker leaves one: in
// jobc_jobs_finished with its attempts' errors. It writes the row directly so that a
// test can give it any kind, error and payload, hostile ones included.
func (e *env) failed(kind, queue, class, msg string, payload string) int64 {
	e.t.Helper()
	errs, err := json.Marshal([]runtime.AttemptError{{Attempt: 1, At: time.Now().Add(-time.Minute), Class: class, Error: msg, Worker: "w1"}})
	if err != nil {
		e.t.Fatal(err)
	}
	var id int64
	err = e.pool.QueryRow(e.t.Context(), `
		INSERT INTO jobc_jobs_finished (id, kind, queue, state, priority, payload_version, payload, metadata,
		    available_at, attempt, max_attempts, errors, created_at, attempted_at, finished_at)
		VALUES (nextval(pg_get_serial_sequence('jobc_jobs', 'id')), $1, $2, 'failed', 1, 1, $3, '{}',
		    now() - interval '2 minutes', 1, 1, $4, now() - interval '2 minutes', now() - interval '1 minute', now())
		RETURNING id`, kind, queue, payload, errs).Scan(&id)
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

func (e *env) state(id int64) runtime.State {
	e.t.Helper()
	j, err := runtime.GetJob(e.t.Context(), e.pool, id)
	if err != nil {
		e.t.Fatalf("job %d: %v", id, err)
	}
	return j.State
}

func wantStatus(t *testing.T, what string, got, want int, body string) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: status %d, want %d; body:\n%s", what, got, want, body)
	}
}

func wantContains(t *testing.T, what, body string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(body, s) {
			t.Errorf("%s: the page does not contain %q:\n%s", what, s, body)
		}
	}
}

var (
	jobLink  = regexp.MustCompile(`href="/jobs/(\d+)"`)
	nextLink = regexp.MustCompile(`rel="next" href="([^"]+)"`)
)

var attrURL = regexp.MustCompile(`(href|action|src)="([^"]*)"`)

func newServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// group is the form of the Failed page's group actions for the failed jobs of kind
// whose last error is msg: one "group" field, the base64 of kind, NUL and msg.
func group(kind, msg string) url.Values {
	return url.Values{"group": {base64.RawURLEncoding.EncodeToString([]byte(kind + "\x00" + msg))}}
}
