package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/internal/testkit"
	"github.com/jobc-dev/jobc/schema"
)

// TestStatusReportsUndecodableJobs: status lists unfinished jobs by version and, with
// --fail-undecodable, fails while some have no live worker able to decode them.
func TestStatusReportsUndecodableJobs(t *testing.T) {
	pool := pgtest.NewSchema(t, nil)
	url := pgtest.SchemaConnString(t, pgtest.SchemaOf(pool))
	if _, _, code := jobc(t, "migrate", "up", "--database-url", url); code != 0 {
		t.Fatal("migrate up failed")
	}
	out, errOut, code := jobc(t, "status", "--database-url", url, "--fail-undecodable")
	applied := fmt.Sprintf("migrations: %d of %d applied", schema.Latest(), schema.Latest())
	if code != 0 || !strings.Contains(out, applied) || !strings.Contains(out, "workers (0 live") {
		t.Fatalf("status of an empty database: exit %d, want 0 with %q\n%s%s", code, applied, out, errOut)
	}
	if _, err := pool.Exec(context.Background(), `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts)
		VALUES ('send_email', 'email', 'available', 5, 2, '{}', 5)`); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = jobc(t, "status", "--database-url", url, "--fail-undecodable")
	if code != 1 || !strings.Contains(out, "send_email") || !strings.Contains(out, "NONE: no live worker serves queue email") || !strings.Contains(errOut, "1 unfinished job(s)") {
		t.Fatalf("status with an undecodable job: exit %d\n%s%s", code, out, errOut)
	}
}

// TestStatusSaysWhyNobodyTakesJobs: for each count of unfinished jobs no live worker
// takes, status names the reason — nobody serves the queue, the queue's workers do
// not handle the kind, or none of them decodes the version — and jobs some live worker
// takes are not flagged.
func TestStatusSaysWhyNobodyTakesJobs(t *testing.T) {
	pool := pgtest.NewSchema(t, nil)
	url := pgtest.SchemaConnString(t, pgtest.SchemaOf(pool))
	if _, _, code := jobc(t, "migrate", "up", "--database-url", url); code != 0 {
		t.Fatal("migrate up failed")
	}
	ctx := context.Background()
	// One live worker serves queue email and decodes send_email v1; a dead one (no
	// heartbeat for an hour) once handled send_fax and served reports.
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_workers (id, host, pid, queues, kinds, lease_secs, heartbeat_at) VALUES
		('live', 'h', 1, '{email}', '{"send_email": [1, 1]}', 30, now()),
		('dead', 'h', 2, '{email,reports}', '{"send_fax": [1, 1], "report": [1, 1]}', 30, now() - interval '1 hour')`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts) VALUES
		('send_email', 'email', 'available', 5, 1, '{}', 5),
		('send_email', 'email', 'available', 5, 2, '{}', 5),
		('send_fax', 'email', 'available', 5, 1, '{}', 5),
		('send_fax', 'email', 'available', 5, 1, '{}', 5),
		('report', 'reports', 'scheduled', 5, 1, '{}', 5)`); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := jobc(t, "status", "--database-url", url, "--fail-undecodable")
	if code != 1 || !strings.Contains(errOut, "jobc: 4 unfinished job(s) that no live worker takes") {
		t.Errorf("exit %d, stderr %q; want 1 and 4 jobs nobody takes", code, errOut)
	}
	space := regexp.MustCompile(` +`)
	lines := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		lines[space.ReplaceAllString(strings.TrimSpace(l), " ")] = true
	}
	for _, want := range []string{
		"send_email email 1 available 1 1 worker(s)",
		"send_email email 2 available 1 NONE: no live worker decodes version 2 of kind send_email",
		"send_fax email 1 available 2 NONE: workers of queue email do not handle kind send_fax",
		"report reports 1 scheduled 1 NONE: no live worker serves queue reports",
	} {
		if !lines[want] {
			t.Errorf("status output lacks the line %q:\n%s", want, out)
		}
	}
}

// TestStatusQueuesAndFailOldest: status shows each queue's counts and the age of its
// oldest available job; --fail-oldest exits 1 naming the queue whose oldest job waited
// longer, and --json carries the documented fields.
func TestStatusQueuesAndFailOldest(t *testing.T) {
	pool, url := migratedDB(t)
	if _, err := pool.Exec(t.Context(), `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts, available_at) VALUES
		('k', 'slow', 'available', 1, 1, '{}', 3, now() - interval '10 minutes'),
		('k', 'slow', 'available', 1, 1, '{}', 3, now()),
		('k', 'slow', 'scheduled', 1, 1, '{}', 3, now() + interval '1 hour'),
		('k', 'fast', 'available', 1, 1, '{}', 3, now())`); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := jobc(t, "status", "--fail-oldest", "5m", "--database-url", url)
	if code != 1 || !strings.Contains(errOut, "queue slow: the oldest available job has waited 10m") || strings.Contains(errOut, "queue fast") {
		t.Errorf("--fail-oldest 5m: exit %d, stderr %q; want 1 naming queue slow only", code, errOut)
	}
	space := regexp.MustCompile(` +`)
	if !strings.Contains(space.ReplaceAllString(out, " "), " slow 2 1 0 10m") {
		t.Errorf("status lacks the queue slow with 2 available, 1 scheduled, 0 running, oldest 10m:\n%s", out)
	}
	if _, errOut, code := jobc(t, "status", "--fail-oldest", "1h", "--database-url", url); code != 0 {
		t.Errorf("--fail-oldest 1h: exit %d: %s", code, errOut)
	}
	out, errOut, code = jobc(t, "status", "--json", "--database-url", url)
	var s struct {
		Queues []map[string]any `json:"queues"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &s) != nil || len(s.Queues) != 2 {
		t.Fatalf("status --json: exit %d\n%s%s", code, out, errOut)
	}
	for _, field := range []string{"queue", "available", "scheduled", "running", "oldest_available_age_seconds", "failed_last_hour", "completed_last_hour", "paused", "workers"} {
		if _, ok := s.Queues[0][field]; !ok {
			t.Errorf("status --json: queue lacks %q: %v", field, s.Queues[0])
		}
	}
	slow := s.Queues[1] // ordered by name: fast, slow
	if age, _ := slow["oldest_available_age_seconds"].(float64); slow["queue"] != "slow" || age < 600 || age > 660 || slow["available"] != 2.0 {
		t.Errorf("status --json: queue slow is %v; want 2 available, the oldest 600s old", slow)
	}
}

// status shows how each finished state's history is kept, and says when finished jobs
// go to the DEFAULT partition because no partition covers now.
func TestStatusShowsHistory(t *testing.T) {
	pool, url := migratedDB(t)
	out, errOut, code := jobc(t, "status", "--database-url", url)
	if code != 0 || !strings.Contains(out, "no partition covers now for completed, failed, cancelled") {
		t.Fatalf("status before any pruner ran: exit %d, want the three states flagged:\n%s%s", code, out, errOut)
	}
	// What a worker's pruner does: partitions of 15 minutes, to 30 minutes ahead.
	for _, state := range []string{"completed", "failed", "cancelled"} {
		if _, err := pool.Exec(t.Context(), `SELECT jobc_history_prepare($1, interval '15 minutes', interval '30 minutes')`, state); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, code = jobc(t, "status", "--database-url", url)
	space := regexp.MustCompile(` +`)
	if code != 0 || strings.Contains(out, "no partition covers now") || !regexp.MustCompile(`(?m)^ completed [3-4] \d{4}-`).MatchString(space.ReplaceAllString(out, " ")) {
		t.Errorf("status with partitions: exit %d, want 3 or 4 completed partitions with their bounds and no flag:\n%s%s", code, out, errOut)
	}
	out, errOut, code = jobc(t, "status", "--json", "--database-url", url)
	var s struct {
		History []struct {
			State       string     `json:"state"`
			Partitions  int        `json:"partitions"`
			From        *time.Time `json:"from"`
			Until       *time.Time `json:"until"`
			CoversNow   bool       `json:"covers_now"`
			DefaultRows *int64     `json:"default_rows"`
		} `json:"history"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &s) != nil || len(s.History) != 3 {
		t.Fatalf("status --json: exit %d, want three history entries\n%s%s", code, out, errOut)
	}
	for _, h := range s.History {
		if h.Partitions < 3 || !h.CoversNow || h.From == nil || h.Until == nil || !h.Until.After(time.Now().Add(29*time.Minute)) || h.DefaultRows == nil {
			t.Errorf("status --json: history %+v; want partitions covering now to 30 minutes ahead", h)
		}
	}
}

// status shows what jobc_jobs weighs, its dead row versions, and when a VACUUM and
// autovacuum last ended on it ("never" and null before any did).
func TestStatusShowsTheJobsTable(t *testing.T) {
	pool, url := migratedDB(t)
	ctx := t.Context()
	out, errOut, code := jobc(t, "status", "--database-url", url)
	if code != 0 || !strings.Contains(out, "last VACUUM (the workers' vacuumer or an operator) never") {
		t.Fatalf("status before any VACUUM: exit %d, want the jobs table never vacuumed:\n%s%s", code, out, errOut)
	}
	const dead = 300
	testkit.DeadJobs(t, pool, dead)
	var s struct {
		JobsTable struct {
			Bytes          int64      `json:"bytes"`
			LiveRows       int64      `json:"live_rows"`
			DeadRows       int64      `json:"dead_rows"`
			LastVacuum     *time.Time `json:"last_vacuum"`
			LastAutovacuum *time.Time `json:"last_autovacuum"`
		} `json:"jobs_table"`
	}
	read := func() {
		t.Helper()
		out, errOut, code := jobc(t, "status", "--json", "--database-url", url)
		if code != 0 || json.Unmarshal([]byte(out), &s) != nil {
			t.Fatalf("status --json: exit %d\n%s%s", code, out, errOut)
		}
	}
	read()
	// (Unless autovacuum came by in between: then it says so.)
	if jt := s.JobsTable; jt.Bytes <= 0 || jt.LiveRows != 0 || jt.LastVacuum != nil || (jt.DeadRows < dead && jt.LastAutovacuum == nil) {
		t.Fatalf("status --json before a VACUUM: jobs_table %+v; want its size, %d dead rows or more, none live, never vacuumed", jt, dead)
	}
	if _, err := pool.Exec(ctx, `VACUUM jobc_jobs`); err != nil {
		t.Fatal(err)
	}
	read()
	if jt := s.JobsTable; jt.LastVacuum == nil || time.Since(*jt.LastVacuum) > time.Minute {
		t.Fatalf("status --json after a VACUUM: jobs_table %+v; want it vacuumed just now", jt)
	}
}
