package dashboard_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/dashboard"
	"github.com/jobc-dev/jobc/runtime"
)

// TestVersionsBanner: the Versions page's warning counts jobs and rows in words that
// agree with the numbers, for one and for several, and goes once a live worker
// decodes every job.
func TestVersionsBanner(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{})
	banner := func(what string) string {
		t.Helper()
		status, body := e.get("/versions")
		wantStatus(t, "GET /versions ("+what+")", status, http.StatusOK, body)
		_, rest, ok := strings.Cut(body, `<div class="flash bad" role="alert" id="undecodable">`)
		if !ok {
			return ""
		}
		text, _, _ := strings.Cut(rest, "</div>")
		return text
	}
	if got := banner("no jobs"); got != "" {
		t.Errorf("no jobs: the banner says %q, want none", got)
	}
	for _, c := range []struct {
		what   string
		add    func()
		banner string
	}{
		{"one job", func() { e.enqueue(map[string]string{"to": "a@example.com"}) },
			"No live worker can take 1 unfinished job: the row marked below says why."},
		{"two jobs in one row", func() { e.enqueue(map[string]string{"to": "b@example.com"}) },
			"No live worker can take 2 unfinished jobs: the row marked below says why."},
		{"three jobs in two rows", func() { e.enqueue(map[string]string{"to": "c@example.com"}, runtime.RunAfter(time.Hour)) },
			"No live worker can take 3 unfinished jobs: the 2 rows marked below say why."},
	} {
		c.add()
		if got := banner(c.what); got != c.banner {
			t.Errorf("%s: the banner says %q, want %q", c.what, got, c.banner)
		}
	}
	// A live worker (its heartbeat is within three of its lease durations) that serves
	// the queue and decodes version 1: nothing is left to warn about.
	if _, err := e.pool.Exec(t.Context(), `INSERT INTO jobc_workers (id, host, pid, queues, kinds, lease_secs)
		VALUES ('w1', 'h', 1, '{email}', '{"send_email": [1, 1]}', 3600)`); err != nil {
		t.Fatal(err)
	}
	if got := banner("a live worker decodes them"); got != "" {
		t.Errorf("a live worker decodes every job: the banner says %q, want none", got)
	}
}
