package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
)

// headingsOnly matches a line of column headings and nothing else.
var headingsOnly = regexp.MustCompile(`(?m)^ *[A-Z][A-Z0-9]*( +[A-Z][A-Z0-9]*)* *$`)

// TestEmptyTablesSaySo: a command with nothing to list prints a sentence, never a
// table of headings without a row; and a table leaves no cell empty: a job without
// an error, or an attempt without a class or a worker, shows "-".
func TestEmptyTablesSaySo(t *testing.T) {
	pool, url := migratedDB(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"jobs", "list"}, "no jobs\n"},
		{[]string{"jobs", "list", "--kind", "nope"}, "no jobs match\n"},
		{[]string{"jobs", "list", "--after", "1"}, "no jobs match\n"},
		{[]string{"queues"}, "no queues: no queue has unfinished jobs, jobs finished in the last hour, a pause or a live worker\n"},
		{[]string{"workers"}, "no live workers: none sent a heartbeat within 1m0s\n"},
		{[]string{"status"}, "\nqueues:\n  no queues: "},
		{[]string{"status"}, "\nunfinished jobs:\n  none\n"},
	} {
		out, errOut, code := jobc(t, append(c.args, "--database-url", url)...)
		if code != cli.ExitOK || !strings.Contains(out, c.want) || headingsOnly.MatchString(out) {
			t.Errorf("jobc %s: exit %d, stdout:\n%s%s\nwant %q and no line of headings only", strings.Join(c.args, " "), code, out, errOut, c.want)
		}
	}

	errs := `[{"attempt": 1, "at": "2026-01-01T00:00:00Z", "error": "boom"}]`
	var failed, fresh int64
	if err := pool.QueryRow(t.Context(), `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts, attempt, errors)
		VALUES ('k', 'q', 'available', 0, 1, '{}', 3, 1, $1) RETURNING id`, errs).Scan(&failed); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(t.Context(), `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts)
		VALUES ('k', 'q', 'available', 0, 1, '{}', 3) RETURNING id`).Scan(&fresh); err != nil {
		t.Fatal(err)
	}
	space := regexp.MustCompile(` +`)
	out, errOut, code := jobc(t, "jobs", "list", "--database-url", url)
	if lines := space.ReplaceAllString(out, " "); code != cli.ExitOK || !regexp.MustCompile(`(?m)^`+strconv.FormatInt(fresh, 10)+` k q available 0 0/3 v1 \S+ \S+ -$`).MatchString(lines) {
		t.Errorf("jobs list: exit %d; want \"-\" as the last error of job %d\n%s%s", code, fresh, out, errOut)
	}
	out, errOut, code = jobc(t, "jobs", "show", strconv.FormatInt(failed, 10), "--database-url", url)
	if lines := space.ReplaceAllString(out, " "); code != cli.ExitOK || !strings.Contains(lines, "\n 1 2026-01-01T00:00:00Z - - boom\n") {
		t.Errorf("jobs show: exit %d; want \"-\" for the attempt's class and worker\n%s%s", code, out, errOut)
	}
}
