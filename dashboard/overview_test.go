package dashboard_test

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/jobc-dev/jobc/dashboard"
	"github.com/jobc-dev/jobc/runtime"
)

// failedTile is the Overview's tile of failed jobs: its figure and its label.
var failedTile = regexp.MustCompile(`<span class="n">(\d+)</span><span class="l"[^>]*>([^<]*)</span></a></div>`)

// TestFailedLastHourSaysWhatItCounts: the Overview's failed figure counts the jobs that
// failed in the last hour and are still failed, so a retry makes it shrink; its label
// says so, rather than "failed, last hour", which a shrinking figure contradicts.
func TestFailedLastHourSaysWhatItCounts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{})
	id := e.failed("send_email", "email", "invalid", "smtp: 550 mailbox unavailable", `{"to":"x@example.com"}`)
	e.failed("send_email", "email", "invalid", "smtp: 550 mailbox unavailable", `{"to":"y@example.com"}`)
	tile := func(what string) (string, string) {
		t.Helper()
		status, body := e.get("/")
		wantStatus(t, "GET / ("+what+")", status, http.StatusOK, body)
		m := failedTile.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("%s: no failed tile on the Overview:\n%s", what, body)
		}
		return m[1], m[2]
	}
	const label = "failed in the last hour, still failed"
	if n, l := tile("two failed"); n != "2" || l != label {
		t.Errorf("two jobs failed: the tile says %s %q, want 2 %q", n, l, label)
	}
	if _, err := runtime.RetryJob(t.Context(), e.pool, id); err != nil {
		t.Fatal(err)
	}
	if n, l := tile("one retried"); n != "1" || l != label {
		t.Errorf("one of two failed jobs retried: the tile says %s %q, want 1 %q", n, l, label)
	}
	status, body := e.get("/jobs")
	wantStatus(t, "GET /jobs", status, http.StatusOK, body)
	wantContains(t, "jobs", body, `title="failed in the last hour and still failed">1</span>`)
}
