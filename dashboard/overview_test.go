package dashboard_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

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

// unservedFlag is a warning of the Overview about a queue nobody serves.
var unservedFlag = regexp.MustCompile(`<div class="flash bad unserved" role="alert">(.*?)</div>`)

// TestOverviewFlagsUnservedQueue: a queue whose available jobs no live worker serves is
// a warning on the Overview, counted in agreeing words; a dead worker's row, a live
// worker of another queue and scheduled jobs change nothing, and a live worker of
// the queue ends the warning.
func TestOverviewFlagsUnservedQueue(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{})
	ctx := t.Context()
	flags := func(what string) []string {
		t.Helper()
		status, body := e.get("/")
		wantStatus(t, "GET / ("+what+")", status, http.StatusOK, body)
		var out []string
		for _, m := range unservedFlag.FindAllStringSubmatch(body, -1) {
			out = append(out, tags.ReplaceAllString(m[1], ""))
		}
		return out
	}
	want := func(what string, flags []string, want ...string) {
		t.Helper()
		if strings.Join(flags, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: the Overview warns %q, want %q", what, flags, want)
		}
	}
	e.enqueue(map[string]string{"to": "later@example.com"}, runtime.RunAfter(time.Hour))
	want("a scheduled job alone", flags("scheduled"))
	e.enqueue(map[string]string{"to": "a@example.com"})
	want("one available job", flags("one"), "1 job waits in queue email and no live worker serves it.")
	e.enqueue(map[string]string{"to": "b@example.com"})
	// A worker whose last heartbeat is older than three of its lease durations is dead;
	// a live one that serves another queue does not serve this one.
	if _, err := e.pool.Exec(ctx, `INSERT INTO jobc_workers (id, host, pid, queues, kinds, lease_secs, heartbeat_at) VALUES
		('dead', 'h', 1, '{email}', '{"send_email": [1, 1]}', 30, now() - interval '1 day'),
		('other', 'h', 2, '{reports}', '{}', 3600, now())`); err != nil {
		t.Fatal(err)
	}
	want("two available jobs", flags("two"), "2 jobs wait in queue email and no live worker serves it.")
	if err := runtime.PauseQueue(ctx, e.pool, "email"); err != nil {
		t.Fatal(err)
	}
	want("paused", flags("paused"), "2 jobs wait in queue email and no live worker serves it (the queue is paused, too).")
	if _, err := e.pool.Exec(ctx, `INSERT INTO jobc_workers (id, host, pid, queues, kinds, lease_secs)
		VALUES ('live', 'h', 3, '{email}', '{"send_email": [1, 1]}', 3600)`); err != nil {
		t.Fatal(err)
	}
	want("a live worker serves it", flags("served"))
}

// tags matches the markup of a fragment, to compare its text.
var tags = regexp.MustCompile(`<[^>]*>`)
