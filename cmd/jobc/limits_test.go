package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
	"github.com/jobc-dev/jobc/runtime"
)

// seedFlow records limits as a starting worker does (kind send_email by "to",
// concurrency 1; queue email, 100 starts a minute), a live worker decoding send_email
// v1, and under them one running and one available job of key a@example.com and one
// available job of key b@example.com. It returns the three jobs' ids.
func seedFlow(t *testing.T, pool *pgxpool.Pool) (running, held, free int64) {
	t.Helper()
	ctx := t.Context()
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_limits (scope, name, by_fields, spec_concurrency, spec_rate_limit, spec_rate_per) VALUES
		('kind', 'send_email', '{to}', 1, NULL, NULL),
		('queue', 'email', '{}', NULL, 100, interval '1 minute')`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_workers (id, host, pid, queues, kinds, lease_secs, heartbeat_at)
		VALUES ('w1', 'h1', 11, '{email}', '{"send_email": [1, 1]}', 30, now())`); err != nil {
		t.Fatal(err)
	}
	insert := func(key, state string) int64 {
		var id int64
		if err := pool.QueryRow(ctx, `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts, flow_key,
			attempt, attempted_at, lease_owner, lease_expires_at)
			VALUES ('send_email', 'email', $2, 2, 1, jsonb_build_object('to', $1::text), 3, json_build_array($1::text)::text,
				CASE WHEN $3 THEN 1 ELSE 0 END, CASE WHEN $3 THEN now() END,
				CASE WHEN $3 THEN 'w1' END, CASE WHEN $3 THEN now() + interval '1 hour' END)
			RETURNING id`, key, state, state == "running").Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	return insert("a@example.com", "running"), insert("a@example.com", "available"), insert("b@example.com", "available")
}

// TestLimitsListSetReset: jobc limits lists the spec's limits with the jobs under them,
// in a table and in the documented JSON; set overrides what it is given and records
// who did; reset restores the spec's; a kind without flow control exits 1 saying so.
func TestLimitsListSetReset(t *testing.T) {
	pool, url := migratedDB(t)
	t.Setenv("USER", "alice")
	seedFlow(t, pool)

	out, errOut, code := jobc(t, "limits", "--database-url", url)
	kindRow := regexp.MustCompile(`(?m)^kind +send_email +to +- +1 running +- +1 running +1 +2 +2$`)
	queueRow := regexp.MustCompile(`(?m)^queue +email +- +- +100/1m +- +100/1m +1 +2 +2$`)
	if code != cli.ExitOK || !kindRow.MatchString(out) || !queueRow.MatchString(out) {
		t.Fatalf("limits: exit %d\n%s%s", code, out, errOut)
	}

	if out, errOut, code := jobc(t, "limits", "set", "kind", "send_email", "--concurrency", "3", "--database-url", url); code != cli.ExitOK ||
		out != "kind send_email: concurrency 3 set; workers apply it from their next claim, within one poll interval\n" {
		t.Fatalf("limits set --concurrency: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := jobc(t, "limits", "set", "queue", "email", "--rate", "5/30s", "--concurrency", "4", "--database-url", url); code != cli.ExitOK ||
		!strings.Contains(out, "queue email: concurrency 4, rate 5/30s set") {
		t.Fatalf("limits set --rate: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = jobc(t, "limits", "--json", "--database-url", url)
	var ls []limitJSON
	if code != cli.ExitOK || json.Unmarshal([]byte(out), &ls) != nil || len(ls) != 2 {
		t.Fatalf("limits --json: exit %d\n%s%s", code, out, errOut)
	}
	k, q := ls[0], ls[1]
	if k.Scope != "kind" || k.Name != "send_email" || fmt.Sprint(k.By) != "[to]" || *k.Spec.Concurrency != 1 || *k.Override.Concurrency != 3 ||
		*k.Effective.Concurrency != 3 || k.Effective.Rate != nil || k.ChangedBy != "cli:alice" || k.ChangedAt == nil ||
		k.Running != 1 || k.Waiting != 2 || k.Keys != 2 {
		t.Errorf("limits --json, the kind after set:\n%s", out)
	}
	if q.Scope != "queue" || q.Spec.Concurrency != nil || *q.Spec.Rate != (rateJSON{100, 60}) || *q.Override.Rate != (rateJSON{5, 30}) ||
		*q.Effective.Rate != (rateJSON{5, 30}) || *q.Effective.Concurrency != 4 || q.ChangedBy != "cli:alice" {
		t.Errorf("limits --json, the queue after set:\n%s", out)
	}
	for _, field := range []string{`"scope"`, `"name"`, `"by"`, `"fair"`, `"sequence"`, `"spec"`, `"override"`, `"effective"`, `"concurrency"`,
		`"rate"`, `"limit"`, `"per_seconds"`, `"registered_at"`, `"changed_at"`, `"changed_by"`, `"waiting"`, `"running"`, `"keys"`} {
		if !strings.Contains(out, field) {
			t.Errorf("limits --json lacks %s", field)
		}
	}
	// What claims apply is what the table shows as effective.
	out, _, _ = jobc(t, "limits", "--database-url", url)
	if !regexp.MustCompile(`(?m)^queue +email +- +- +100/1m +4 running, 5/30s +4 running, 5/30s `).MatchString(out) {
		t.Errorf("limits after set:\n%s", out)
	}

	if out, errOut, code := jobc(t, "limits", "reset", "kind", "send_email", "--database-url", url); code != cli.ExitOK ||
		out != "kind send_email: the spec's limits apply again from the next claim\n" {
		t.Fatalf("limits reset: exit %d\n%s%s", code, out, errOut)
	}
	all, err := runtime.ListLimits(t.Context(), pool)
	if err != nil {
		t.Fatal(err)
	}
	if l := all[0]; l.Override != (runtime.LimitValues{}) || l.Effective.Concurrency != 1 || l.ChangedBy != "cli:alice" {
		t.Errorf("after reset: %+v, want no override and the spec's concurrency 1 in force", l)
	}

	// No flow control: exit 1 with the runtime's reason and where to look.
	for _, args := range [][]string{{"set", "kind", "resize", "--concurrency", "2"}, {"reset", "queue", "images"}} {
		out, errOut, code := jobc(t, append(append([]string{"limits"}, args...), "--database-url", url)...)
		if code != cli.ExitFailure || out != "" || !strings.Contains(errOut, "no flow control declared") ||
			!strings.Contains(errOut, "`jobc limits` lists the kinds and queues that have limits") || strings.Contains(errOut, "Usage:") {
			t.Errorf("limits %s: exit %d, stdout %q, stderr:\n%s\nwant exit 1 saying there is no flow control", strings.Join(args, " "), code, out, errOut)
		}
	}
	if !errors.Is(runtime.ResetLimit(t.Context(), pool, runtime.LimitQueue, "images", "x"), runtime.ErrNoLimit) {
		t.Error("the runtime no longer returns ErrNoLimit for a queue without limits: the CLI's message is wrong")
	}
}

// TestLimitsEmpty: with no limits recorded, jobc limits says why in a sentence and
// --json prints an empty list.
func TestLimitsEmpty(t *testing.T) {
	_, url := migratedDB(t)
	if out, errOut, code := jobc(t, "limits", "--database-url", url); code != cli.ExitOK || !strings.HasPrefix(out, "no limits:") {
		t.Errorf("limits: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := jobc(t, "limits", "--json", "--database-url", url); code != cli.ExitOK || strings.TrimSpace(out) != "[]" {
		t.Errorf("limits --json: exit %d\n%s%s", code, out, errOut)
	}
}

// TestJobsShowWaiting: jobc jobs show says why a waiting job is not running, with the
// numbers of the limit that holds it, in the table and as the JSON's waiting object;
// a running job has no such line, and a paused queue is the reason before any limit.
func TestJobsShowWaiting(t *testing.T) {
	pool, url := migratedDB(t)
	running, held, free := seedFlow(t, pool)

	out, errOut, code := jobc(t, "jobs", "show", fmt.Sprint(held), "--database-url", url)
	if code != cli.ExitOK || !regexp.MustCompile(`(?m)^waiting +to a@example\.com is at its limit 1/1$`).MatchString(out) {
		t.Errorf("jobs show %d (held by its key's limit): exit %d\n%s%s", held, code, out, errOut)
	}
	out, errOut, code = jobc(t, "jobs", "show", fmt.Sprint(held), "--json", "--database-url", url)
	var j jobJSON
	if code != cli.ExitOK || json.Unmarshal([]byte(out), &j) != nil || j.Waiting == nil {
		t.Fatalf("jobs show --json: exit %d\n%s%s", code, out, errOut)
	}
	if w := *j.Waiting; w.Cause != "key_concurrency" || w.Limit != 1 || w.Current != 1 || w.Key != "to a@example.com" ||
		w.Reason != "to a@example.com is at its limit 1/1" || w.Until != nil || w.HeldBy != nil {
		t.Errorf("jobs show --json: waiting %+v", w)
	}
	for _, field := range []string{`"cause"`, `"reason"`, `"key"`, `"limit"`, `"current"`, `"until"`, `"held_by"`} {
		if !strings.Contains(out, field) {
			t.Errorf("jobs show --json: waiting lacks %s", field)
		}
	}
	// The other key is free: it waits for a slot only.
	out, _, _ = jobc(t, "jobs", "show", fmt.Sprint(free), "--database-url", url)
	if !regexp.MustCompile(`(?m)^waiting +no limit holds it`).MatchString(out) {
		t.Errorf("jobs show %d (free key):\n%s", free, out)
	}
	// A running job waits for nothing: no line, no object.
	out, _, _ = jobc(t, "jobs", "show", fmt.Sprint(running), "--database-url", url)
	if strings.Contains(out, "waiting") {
		t.Errorf("jobs show %d (running) says it waits:\n%s", running, out)
	}
	out, _, _ = jobc(t, "jobs", "show", fmt.Sprint(running), "--json", "--database-url", url)
	if strings.Contains(out, `"waiting"`) {
		t.Errorf("jobs show --json %d (running) has a waiting object:\n%s", running, out)
	}
	// jobs list --json carries no waiting object: it would cost a query per job.
	out, _, _ = jobc(t, "jobs", "list", "--json", "--database-url", url)
	if strings.Contains(out, `"waiting"`) {
		t.Errorf("jobs list --json has waiting objects:\n%s", out)
	}

	if err := runtime.PauseQueue(t.Context(), pool, "email"); err != nil {
		t.Fatal(err)
	}
	out, _, _ = jobc(t, "jobs", "show", fmt.Sprint(held), "--database-url", url)
	if !regexp.MustCompile(`(?m)^waiting +queue email is paused$`).MatchString(out) {
		t.Errorf("jobs show %d in a paused queue:\n%s", held, out)
	}
}
