package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestWorkersTableAndJSON: jobc workers lists the live workers only, with their queues
// and versions, in a table and in the documented JSON.
func TestWorkersTableAndJSON(t *testing.T) {
	pool, url := migratedDB(t)
	if _, err := pool.Exec(t.Context(), `INSERT INTO jobc_workers (id, host, pid, queues, kinds, lease_secs, heartbeat_at) VALUES
		('live', 'h1', 11, '{email,reports}', '{"send_email": [1, 2]}', 30, now() - interval '5 seconds'),
		('dead', 'h2', 12, '{email}', '{"send_email": [1, 1]}', 30, now() - interval '1 hour')`); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := jobc(t, "workers", "--database-url", url)
	line := regexp.MustCompile(`(?m)^live +h1 +11 +email,reports +send_email v1\.\.2 +\S+ \S+ +[56]s ago$`)
	if code != 0 || !line.MatchString(out) || strings.Contains(out, "dead") {
		t.Errorf("workers: exit %d; want the live worker only\n%s%s", code, out, errOut)
	}
	out, errOut, code = jobc(t, "workers", "--json", "--database-url", url)
	var ws []workerJSON
	if code != 0 || json.Unmarshal([]byte(out), &ws) != nil || len(ws) != 1 {
		t.Fatalf("workers --json: exit %d\n%s%s", code, out, errOut)
	}
	w := ws[0]
	if w.ID != "live" || w.PID != 11 || len(w.Queues) != 2 || w.Kinds["send_email"] != (versionRange{1, 2}) || w.HeartbeatAge < 4 || w.HeartbeatAge > 60 {
		t.Errorf("workers --json: %s", out)
	}
	for _, field := range []string{`"id"`, `"host"`, `"pid"`, `"queues"`, `"kinds"`, `"started_at"`, `"heartbeat_at"`, `"heartbeat_age_seconds"`, `"min"`, `"max"`} {
		if !strings.Contains(out, field) {
			t.Errorf("workers --json lacks %s", field)
		}
	}
}
