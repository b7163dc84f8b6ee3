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

// uncoveredFlag is a warning of the Overview about history no partition covers.
var uncoveredFlag = regexp.MustCompile(`<div class="flash bad uncovered" role="alert">(.*?)</div>`)

// historyRow is a row of the Overview's History card: state, partitions, from, until.
var historyRow = regexp.MustCompile(`<tr>\s*<td>(\w+)</td>\s*<td class="num">(\d+)</td>\s*<td>([^<]*)</td>\s*<td>([^<]*)</td>`)

// TestOverviewShowsHistory: the Overview lists each finished state's history
// partitions, and warns about a state none of whose partitions takes the jobs that
// finish now (they go to the DEFAULT partition, emptied row by row): on a database no
// worker's pruner has prepared, and once a state's newest partition has ended.
func TestOverviewShowsHistory(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{})
	ctx := t.Context()
	type state struct{ partitions, from, until string }
	overview := func(what string) (flags []string, states map[string]state) {
		t.Helper()
		status, body := e.get("/")
		wantStatus(t, "GET / ("+what+")", status, http.StatusOK, body)
		for _, m := range uncoveredFlag.FindAllStringSubmatch(body, -1) {
			flags = append(flags, tags.ReplaceAllString(m[1], ""))
		}
		states = map[string]state{}
		for _, m := range historyRow.FindAllStringSubmatch(body, -1) {
			states[m[1]] = state{m[2], m[3], m[4]}
		}
		if len(states) != 3 {
			t.Fatalf("%s: the History card lists %v, want completed, failed and cancelled:\n%s", what, states, body)
		}
		return flags, states
	}
	// replacePartitions drops a state's partitions and makes one from..to (SQL
	// expressions), as time or a hand would leave them.
	replacePartitions := func(st, from, to string) {
		t.Helper()
		if _, err := e.pool.Exec(ctx, `DO $$
			DECLARE r record;
			BEGIN
				FOR r IN SELECT name FROM jobc_history_partitions('`+st+`') LOOP
					EXECUTE format('DROP TABLE %I', r.name);
				END LOOP;
				EXECUTE format('CREATE TABLE jobc_jobs_finished_`+st+`_replaced PARTITION OF jobc_jobs_finished_`+st+`
					FOR VALUES FROM (%L) TO (%L)', `+from+`, `+to+`);
			END $$`); err != nil {
			t.Fatal(err)
		}
	}

	flags, states := overview("no partitions")
	if len(flags) != 3 || !strings.HasPrefix(flags[0], "No partition of completed history covers now: completed jobs finish into its DEFAULT partition") {
		t.Errorf("no partitions: the Overview warns %q, want one warning per finished state", flags)
	}
	if states["completed"] != (state{"0", "—", "—"}) {
		t.Errorf("no partitions: completed history shows %+v", states["completed"])
	}

	if _, err := e.pool.Exec(ctx, `SELECT jobc_history_prepare(s, interval '1 hour', interval '2 hours')
		FROM unnest('{completed,failed,cancelled}'::jobc_state[]) AS s`); err != nil {
		t.Fatal(err)
	}
	flags, states = overview("prepared")
	if len(flags) != 0 {
		t.Errorf("every state prepared: the Overview warns %q", flags)
	}
	for name, s := range states {
		until, err := time.Parse("2006-01-02 15:04:05 UTC", s.until)
		if s.partitions == "0" || err != nil || !until.After(time.Now()) {
			t.Errorf("prepared: %s history shows %+v, want partitions until later than now", name, s)
		}
	}

	// The failed jobs' partitions all ended in the past.
	replacePartitions("failed", "'2026-01-01 00:00:00+00'", "'2026-01-01 01:00:00+00'")
	flags, states = overview("failed ended")
	if len(flags) != 1 || !strings.HasPrefix(flags[0], "No partition of failed history covers now") || !strings.Contains(flags[0], "(the newest partition ended ") {
		t.Errorf("failed history's partitions ended: the Overview warns %q, want one warning about failed history", flags)
	}
	if states["failed"] != (state{"1", "2026-01-01 00:00:00 UTC", "2026-01-01 01:00:00 UTC"}) {
		t.Errorf("failed history's partitions ended: it shows %+v", states["failed"])
	}

	// The cancelled jobs' only partition begins later (a DEFAULT row finished ahead of
	// the clock, written by hand, holds the partitions back): no pruner stopped.
	replacePartitions("cancelled", "now() + interval '1 hour'", "now() + interval '2 hours'")
	flags, _ = overview("cancelled ahead")
	if len(flags) != 2 || !strings.HasPrefix(flags[1], "No partition of cancelled history covers now") ||
		!strings.Contains(flags[1], "Its first partition begins in 59m") || strings.Contains(flags[1], "No worker's pruner") {
		t.Errorf("cancelled history's partition begins later: the Overview warns %q, want the second warning to say when it begins", flags)
	}
}
