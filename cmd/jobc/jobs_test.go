package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime"
)

// insertJobs inserts n available jobs of kind in queue and returns their ids, oldest
// first.
func insertJobs(t *testing.T, pool *pgxpool.Pool, kind, queue string, n int) []int64 {
	t.Helper()
	var ids []int64
	for i := 0; i < n; i++ {
		var id int64
		if err := pool.QueryRow(context.Background(), `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts)
			VALUES ($1, $2, 'available', 2, 1, '{}', 3) RETURNING id`, kind, queue).Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// TestJobsListPages: --limit shows the newest page and says which --after gives the
// next; following it visits every matching job once, and --json carries the same.
func TestJobsListPages(t *testing.T) {
	pool, url := migratedDB(t)
	ids := insertJobs(t, pool, "page", "q", 5)
	insertJobs(t, pool, "other", "q", 2)
	var seen []int64
	after := ""
	for page := 0; page < 3; page++ {
		args := []string{"jobs", "list", "--kind", "page", "--limit", "2", "--database-url", url}
		if after != "" {
			args = append(args, "--after", after)
		}
		out, errOut, code := jobc(t, args...)
		if code != 0 {
			t.Fatalf("page %d: exit %d: %s", page, code, errOut)
		}
		rows := strings.Split(strings.TrimSpace(out), "\n")[1:]
		for _, r := range rows {
			id, err := strconv.ParseInt(strings.Fields(r)[0], 10, 64)
			if err != nil || !strings.Contains(r, "page") {
				t.Fatalf("page %d: row %q", page, r)
			}
			seen = append(seen, id)
		}
		last := seen[len(seen)-1]
		wantMore := page < 2
		if got := strings.Contains(errOut, fmt.Sprintf("pass --after %d for the next page", last)); got != wantMore {
			t.Fatalf("page %d: stderr %q; want the next --after %d: %v", page, errOut, last, wantMore)
		}
		after = strconv.FormatInt(last, 10)
	}
	want := []int64{ids[4], ids[3], ids[2], ids[1], ids[0]}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("pages visited %v, want %v (newest first)", seen, want)
	}

	out, errOut, code := jobc(t, "jobs", "list", "--kind", "page", "--limit", "3", "--json", "--database-url", url)
	var p jobPageJSON
	if code != 0 || json.Unmarshal([]byte(out), &p) != nil {
		t.Fatalf("list --json: exit %d: %s%s", code, out, errOut)
	}
	if len(p.Jobs) != 3 || !p.More || p.NextAfter == nil || *p.NextAfter != ids[2] || p.Jobs[0].Priority != 2 || p.Jobs[0].Kind != "page" {
		t.Errorf("list --json: %s", out)
	}
	// Unknown states are refused with the valid ones listed, before anything runs.
	if _, errOut, code := jobc(t, "jobs", "list", "--state", "done", "--database-url", url); code != 2 || !strings.Contains(errOut, "completed") {
		t.Errorf("--state done: exit %d: %s", code, errOut)
	}
}

// TestJobsRetryDeleteByID: retry and delete by id report each job, fail (exit 1) for
// the ones that cannot be changed, and change nothing else.
func TestJobsRetryDeleteByID(t *testing.T) {
	pool, url := migratedDB(t)
	ids := insertJobs(t, pool, "k", "q", 2)
	var running int64
	if err := pool.QueryRow(t.Context(), `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts, attempt, attempted_at, lease_expires_at, lease_owner)
		VALUES ('k', 'q', 'running', 2, 1, '{}', 3, 1, now(), now() + interval '1 hour', 'w') RETURNING id`).Scan(&running); err != nil {
		t.Fatal(err)
	}
	s := func(id int64) string { return strconv.FormatInt(id, 10) }
	out, errOut, code := jobc(t, "jobs", "delete", s(ids[0]), s(running), "--database-url", url)
	if code != 1 || !strings.Contains(out, fmt.Sprintf("job %d deleted", ids[0])) || !strings.Contains(errOut, "cancel it first") || !strings.Contains(errOut, "1 of 2 job(s) not deleted") {
		t.Errorf("delete: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := runtime.GetJob(t.Context(), pool, ids[0]); err == nil {
		t.Errorf("job %d still exists after delete", ids[0])
	}
	if !allInState(t, pool, []int64{ids[1]}, runtime.StateAvailable) || !allInState(t, pool, []int64{running}, runtime.StateRunning) {
		t.Errorf("delete changed other jobs:%s", jobStates(t, pool, []int64{ids[1], running}))
	}
	_, errOut, code = jobc(t, "jobs", "retry", s(running), s(ids[1]), "999999", "--database-url", url)
	if code != 1 || !strings.Contains(errOut, "3 of 3 job(s) not retried") {
		t.Errorf("retry of a running, an available and a missing job: exit %d\n%s", code, errOut)
	}
	if !allInState(t, pool, []int64{running}, runtime.StateRunning) || !allInState(t, pool, []int64{ids[1]}, runtime.StateAvailable) {
		t.Errorf("a refused retry changed jobs:%s", jobStates(t, pool, []int64{ids[1], running}))
	}
	// Bulk delete by queue skips the running job and says why.
	out, errOut, code = jobc(t, "jobs", "delete", "--queue", "q", "--database-url", url)
	if code != 0 || !strings.Contains(out, "deleted 1 job(s)") {
		t.Errorf("delete --queue q: exit %d\n%s%s", code, out, errOut)
	}
	if !allInState(t, pool, []int64{running}, runtime.StateRunning) {
		t.Errorf("bulk delete touched the running job:%s", jobStates(t, pool, []int64{running}))
	}
}

// TestHostileNamesAreEscaped: a kind, queue and error with newlines, tabs and terminal
// escape sequences, stored in the database, stay on their row in every table.
func TestHostileNamesAreEscaped(t *testing.T) {
	pool, url := migratedDB(t)
	const kind, queue = "evil\nkind\t\x1b[31m", "q\r\nx"
	errs := `[{"attempt": 1, "at": "2026-01-01T00:00:00Z", "class": "bad\nclass", "error": "line1\nline2\u001b[2J", "worker": "w\tx"}]`
	var id int64
	if err := pool.QueryRow(t.Context(), `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts, attempt, errors)
		VALUES ($1, $2, 'available', 0, 1, '{}', 3, 1, $3) RETURNING id`, kind, queue, errs).Scan(&id); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"jobs", "list"}, {"jobs", "show", strconv.FormatInt(id, 10)}, {"queues"}, {"status"},
	} {
		out, errOut, code := jobc(t, append(args, "--database-url", url)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		if strings.ContainsAny(out, "\r\x1b") {
			t.Errorf("%v: output has a raw control character:\n%q", args, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "kind") && strings.Contains(line, "evil") && !strings.Contains(line, `evil\nkind\t\x1b[31m`) {
				t.Errorf("%v: kind not escaped on its line: %q", args, line)
			}
		}
		if strings.Contains(out, "\nkind\t") || strings.Contains(out, "\nline2") || strings.Contains(out, "\nx") || strings.Contains(out, "\nclass") {
			t.Errorf("%v: a stored value split a row:\n%s", args, out)
		}
	}
	out, _, _ := jobc(t, "queues", "--database-url", url)
	if !strings.Contains(out, `q\r\nx`) {
		t.Errorf("queues: the queue is not shown escaped:\n%s", out)
	}
	out, _, _ = jobc(t, "jobs", "show", strconv.FormatInt(id, 10), "--database-url", url)
	if !strings.Contains(out, `line1\nline2\x1b[2J`) || !strings.Contains(out, `bad\nclass`) {
		t.Errorf("jobs show: the error is not shown escaped:\n%s", out)
	}
	// JSON needs no escaping of ours: it round-trips the exact values.
	out, _, _ = jobc(t, "jobs", "show", strconv.FormatInt(id, 10), "--json", "--database-url", url)
	var j jobJSON
	if err := json.Unmarshal([]byte(out), &j); err != nil || j.Kind != kind || j.Queue != queue || j.Errors[0].Error != "line1\nline2\x1b[2J" {
		t.Errorf("jobs show --json does not round-trip the values (%v):\n%s", err, out)
	}
}

// TestJobsShowStoredPriority: a job the starvation ager moved to priority 0 shows the
// priority it was enqueued with, in the text and the JSON, as jobs list does.
func TestJobsShowStoredPriority(t *testing.T) {
	pool, url := migratedDB(t)
	var id int64
	if err := pool.QueryRow(t.Context(), `INSERT INTO jobc_jobs (kind, queue, state, priority, declared_priority, payload_version, payload, max_attempts)
		VALUES ('aged', 'q', 'available', 0, 4, 1, '{}', 3) RETURNING id`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	sid := strconv.FormatInt(id, 10)
	space := regexp.MustCompile(` +`)
	out, errOut, code := jobc(t, "jobs", "show", sid, "--database-url", url)
	if code != 0 || !strings.Contains(space.ReplaceAllString(out, " "), "\npriority 4\n") {
		t.Errorf("jobs show: exit %d; want priority 4\n%s%s", code, out, errOut)
	}
	out, _, _ = jobc(t, "jobs", "show", sid, "--json", "--database-url", url)
	var j jobJSON
	if err := json.Unmarshal([]byte(out), &j); err != nil || j.Priority != 4 {
		t.Errorf("jobs show --json: priority %d (%v), want 4\n%s", j.Priority, err, out)
	}
	out, _, _ = jobc(t, "jobs", "list", "--database-url", url)
	if !strings.Contains(space.ReplaceAllString(out, " "), sid+" aged q available 4 ") {
		t.Errorf("jobs list: want priority 4\n%s", out)
	}
}

// TestJobsBulkFilters: --since, --error-class and --state narrow a bulk delete, the dry
// run counts what the real one then deletes, and jobs outside the filters stay.
func TestJobsBulkFilters(t *testing.T) {
	pool, url := migratedDB(t)
	ctx := t.Context()
	// Failed an hour ago (old), and just now with two different error classes.
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_jobs_finished (id, kind, queue, state, priority, payload_version, payload,
		metadata, available_at, attempt, max_attempts, errors, created_at, finished_at) VALUES
		(101, 'k', 'q', 'failed', 1, 1, '{}', '{}', now(), 1, 1, '[{"attempt": 1, "class": "timeout", "error": "e"}]', now(), now() - interval '2 hours'),
		(102, 'k', 'q', 'failed', 1, 1, '{}', '{}', now(), 1, 1, '[{"attempt": 1, "class": "timeout", "error": "e"}]', now(), now()),
		(103, 'k', 'q', 'failed', 1, 1, '{}', '{}', now(), 1, 1, '[{"attempt": 1, "class": "invalid", "error": "e"}]', now(), now()),
		(104, 'k', 'q', 'completed', 1, 1, '{}', '{}', now(), 1, 1, '[]', now(), now())`); err != nil {
		t.Fatal(err)
	}
	args := []string{"jobs", "delete", "--state", "failed", "--since", "1h", "--error-class", "timeout", "--database-url", url}
	out, errOut, code := jobc(t, append(args, "--dry-run")...)
	if code != 0 || !strings.Contains(out, "would delete 1 job(s)") {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = jobc(t, args...)
	if code != 0 || !strings.Contains(out, "deleted 1 job(s)") || !strings.Contains(out, "ids: 102") {
		t.Fatalf("delete: exit %d\n%s%s", code, out, errOut)
	}
	for _, id := range []int64{101, 103, 104} {
		if _, err := runtime.GetJob(ctx, pool, id); err != nil {
			t.Errorf("job %d outside the filters is gone: %v", id, err)
		}
	}
	if _, err := runtime.GetJob(ctx, pool, 102); err == nil {
		t.Error("job 102 survived the delete")
	}
}

// TestJobsRetryUniqueConflict: a cancelled job whose unique key another job took in the
// meantime is not retried: by id, the error names the holder; in bulk, it is skipped
// and counted.
func TestJobsRetryUniqueConflict(t *testing.T) {
	pool, url := migratedDB(t)
	ctx := t.Context()
	jt, err := runtime.NewJobType(runtime.JobType{Kind: "report", Queue: "q", Priority: 1, MaxAttempts: 3, WriteVersion: 1,
		Unique:   &runtime.Unique{Fields: []string{"day"}},
		Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object","properties":{"day":{"type":"string"}}}`}}})
	if err != nil {
		t.Fatal(err)
	}
	first, err := runtime.Enqueue(ctx, pool, jt, map[string]string{"day": "mon"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runtime.CancelJob(ctx, pool, first.ID); err != nil {
		t.Fatal(err)
	}
	holder, err := runtime.Enqueue(ctx, pool, jt, map[string]string{"day": "mon"})
	if err != nil || holder.ID == first.ID {
		t.Fatalf("second enqueue of the key after the cancel: %+v, %v", holder, err)
	}
	_, errOut, code := jobc(t, "jobs", "retry", strconv.FormatInt(first.ID, 10), "--database-url", url)
	if code != 1 || !strings.Contains(errOut, strconv.FormatInt(holder.ID, 10)) {
		t.Errorf("retry of job %d: exit %d, stderr %q; want 1 naming the holder %d", first.ID, code, errOut, holder.ID)
	}
	out, errOut, code := jobc(t, "jobs", "retry", "--kind", "report", "--state", "cancelled", "--database-url", url)
	if code != 0 || !strings.Contains(out, "retried 0 job(s); skipped 1: their unique key is held by another job") {
		t.Errorf("bulk retry: exit %d\n%s%s", code, out, errOut)
	}
	if !allInState(t, pool, []int64{first.ID}, runtime.StateCancelled) {
		t.Errorf("the refused retry changed the job:%s", jobStates(t, pool, []int64{first.ID}))
	}
}

// TestJobsShowResult: a completed job's result is shown with its version, in the text
// and the JSON, and a job without one shows neither.
func TestJobsShowResult(t *testing.T) {
	pool, url := migratedDB(t)
	var id, plain int64
	if err := pool.QueryRow(t.Context(), `INSERT INTO jobc_jobs_finished (id, kind, queue, state, priority, payload_version, payload,
		metadata, available_at, attempt, max_attempts, errors, created_at, result_version, result)
		VALUES (101, 'charge', 'q', 'completed', 5, 1, '{}', '{}', now(), 1, 3, '[]', now(), 2, '{"charge_id": "ch_42"}') RETURNING id`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(t.Context(), `INSERT INTO jobc_jobs_finished (id, kind, queue, state, priority, payload_version, payload,
		metadata, available_at, attempt, max_attempts, errors, created_at)
		VALUES (102, 'notify', 'q', 'completed', 5, 1, '{}', '{}', now(), 1, 3, '[]', now()) RETURNING id`).Scan(&plain); err != nil {
		t.Fatal(err)
	}
	space := regexp.MustCompile(` +`)
	out, errOut, code := jobc(t, "jobs", "show", strconv.FormatInt(id, 10), "--database-url", url)
	if code != 0 || !strings.Contains(space.ReplaceAllString(out, " "), "\nresult version 2\n") || !strings.Contains(out, "result:\n") || !strings.Contains(out, `"charge_id": "ch_42"`) {
		t.Errorf("jobs show: exit %d; want the result and its version 2\n%s%s", code, out, errOut)
	}
	out, _, _ = jobc(t, "jobs", "show", strconv.FormatInt(id, 10), "--json", "--database-url", url)
	var j struct {
		ResultVersion int `json:"result_version"`
		Result        struct {
			ChargeID string `json:"charge_id"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil || j.ResultVersion != 2 || j.Result.ChargeID != "ch_42" {
		t.Errorf("jobs show --json: result %+v version %d (%v); want charge_id ch_42, version 2\n%s", j.Result, j.ResultVersion, err, out)
	}
	out, _, _ = jobc(t, "jobs", "show", strconv.FormatInt(plain, 10), "--database-url", url)
	if strings.Contains(out, "result") {
		t.Errorf("jobs show of a job without a result mentions one:\n%s", out)
	}
	out, _, _ = jobc(t, "jobs", "show", strconv.FormatInt(plain, 10), "--json", "--database-url", url)
	if strings.Contains(out, `"result`) {
		t.Errorf("jobs show --json of a job without a result has result fields:\n%s", out)
	}
}
