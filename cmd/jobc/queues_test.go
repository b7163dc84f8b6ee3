package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
)

// TestQueuesPauseWarnsUnusedQueue: pausing a queue that no job type of jobc.yaml (-C)
// and no live worker uses still pauses it and exits 0, but warns on stderr, naming the
// closest queue in use and every queue in use; a queue that a job type or a live
// worker uses pauses without a word on stderr.
func TestQueuesPauseWarnsUnusedQueue(t *testing.T) {
	pool, url := migratedDB(t)
	if _, err := pool.Exec(t.Context(), `INSERT INTO jobc_workers (id, host, pid, queues, kinds, lease_secs, heartbeat_at) VALUES
		('live', 'h1', 11, '{reports}', '{}', 30, now()),
		('dead', 'h2', 12, '{pdf}', '{}', 30, now() - interval '1 hour')`); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "jobc.yaml"), "version: 1\npackage: jobs\nout: jobs\njobs:\n  send_email:\n    queue: email\n"+
		"    payload:\n      versions:\n        1: {schema: {type: object}}\n")
	noSpec := t.TempDir()
	spec := filepath.Join(dir, "jobc.yaml")
	for _, c := range []struct {
		dir, queue string
		warning    string // "" for none
	}{
		{dir, "emial", `jobc: warning: no job type of ` + spec + ` and no live worker uses queue "emial": did you mean "email"? (queues in use: email, reports)`},
		{dir, "pdf", `jobc: warning: no job type of ` + spec + ` and no live worker uses queue "pdf" (queues in use: email, reports)`},
		{noSpec, "reprots", `jobc: warning: no live worker uses queue "reprots": did you mean "reports"? (queues in use: reports)`},
		{noSpec, "email", `jobc: warning: no live worker uses queue "email" (queues in use: reports)`},
		{dir, "email", ""},
		{dir, "reports", ""},
		{noSpec, "reports", ""},
	} {
		out, errOut, code := jobc(t, "queues", "pause", c.queue, "-C", c.dir, "--database-url", url)
		if code != cli.ExitOK || !strings.HasPrefix(out, "queue "+c.queue+" paused") {
			t.Errorf("queues pause %s -C %s: exit %d\n%s%s", c.queue, c.dir, code, out, errOut)
		}
		if c.warning == "" && errOut != "" || c.warning != "" && !strings.HasPrefix(errOut, c.warning) {
			t.Errorf("queues pause %s -C %s: stderr\n%s\nwant %q", c.queue, c.dir, errOut, c.warning)
		}
		var paused bool
		if err := pool.QueryRow(t.Context(), `SELECT paused_at IS NOT NULL FROM jobc_queues WHERE name = $1`, c.queue).Scan(&paused); err != nil || !paused {
			t.Errorf("queue %s after jobc queues pause: paused %v, %v", c.queue, paused, err)
		}
	}
}
