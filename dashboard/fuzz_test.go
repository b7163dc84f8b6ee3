package dashboard_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/dashboard"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// fuzzRoutes are the dashboard's GET routes; "{id}" takes the fuzzed id.
var fuzzRoutes = []string{"/", "/jobs", "/jobs/{id}", "/failed", "/queues", "/versions", "/periodic", "/static/style.css"}

// FuzzQueryParams sends every GET route fuzzed query strings (and the job page fuzzed
// ids) against a real database with jobs in it, hostile ones included: the dashboard
// never panics and never answers 500; bad input is a 4xx.
func FuzzQueryParams(f *testing.F) {
	pool := pgtest.NewSchema(f, migrated)
	ctx := f.Context()
	var ids []int64
	for i, msg := range []string{"boom", "panic: x\n\tstack.go:1", `</pre><script>alert(1)</script>`, "100% _done_ \\"} {
		j, err := runtime.Enqueue(ctx, pool, emailType, map[string]string{"to": fmt.Sprintf("u%d@example.com", i)})
		if err != nil {
			f.Fatal(err)
		}
		ids = append(ids, j.ID)
		if _, err := pool.Exec(ctx, `UPDATE jobc_jobs SET errors = jsonb_build_array(jsonb_build_object(
			'attempt', 1, 'at', now(), 'class', 'transient', 'error', $2::text, 'worker', 'w1')) WHERE id = $1`, j.ID, msg); err != nil {
			f.Fatal(err)
		}
	}
	h, err := dashboard.New(pool, dashboard.Options{JobTypes: []*runtime.JobType{emailType},
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []struct {
		route     uint8
		id, query string
	}{
		{1, "", "state=failed&kind=send_email&queue=email&class=transient&error=boom"},
		{1, "", "error=%25&after=9223372036854775807"},
		{1, "", "error=%00"},
		{1, "", "kind=%FF%FE&state=available"},
		{1, "", "after=-1&state=nope"},
		{1, "", "error=_&error=x&kind="},
		{2, fmt.Sprint(ids[0]), "flash=hello&fs=AAAA"},
		{2, "9223372036854775808", ""},
		{2, "0x10", ""},
		{0, "", "flash=%3Cscript%3E"},
		{3, "", "a=b;c"},
		{7, "", "v=1"},
	} {
		f.Add(s.route, s.id, s.query)
	}
	f.Fuzz(func(t *testing.T, route uint8, id, query string) {
		path := fuzzRoutes[int(route)%len(fuzzRoutes)]
		path = strings.Replace(path, "{id}", url.PathEscape(id), 1)
		uri := path
		if query != "" {
			uri += "?" + query
		}
		// What net/http would not deliver to a handler is not the handler's input.
		u, err := url.ParseRequestURI(uri)
		if err != nil || strings.ContainsAny(uri, " \t\r\n\x00\x7f") {
			return
		}
		req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, u.String(), nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("GET %s: %d:\n%s", u, rec.Code, rec.Body.String())
		}
	})
}
