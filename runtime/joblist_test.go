package runtime_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

// TestListJobsPages: keyset pages walk every matching job once, newest first, and say
// when more remain.
func TestListJobsPages(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	jt := emailType(t, nil)
	var want []int64
	for i := range 5 {
		e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: i, Email: "ada@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		want = append([]int64{e.ID}, want...)
	}
	cancelledJobs(t, pool, jt, 1) // another state, filtered out below
	var got []int64
	var mores []bool
	f := runtime.JobFilter{JobSelection: runtime.JobSelection{States: []runtime.State{runtime.StateAvailable}, Limit: 2}}
	for range 4 {
		page, err := runtime.ListJobs(ctx, pool, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range page.Jobs {
			got = append(got, j.ID)
		}
		mores = append(mores, page.More)
		if !page.More {
			break
		}
		f.After = page.Jobs[len(page.Jobs)-1].ID
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(mores) != "[true true false]" {
		t.Errorf("pages: ids %v, more %v; want %v in pages of 2 with more [true true false]", got, mores, want)
	}
	page, err := runtime.ListJobs(ctx, pool, runtime.JobFilter{JobSelection: runtime.JobSelection{States: []runtime.State{runtime.StateCancelled}, Since: time.Now().Add(-time.Minute)}})
	if err != nil || len(page.Jobs) != 1 || page.More {
		t.Errorf("cancelled jobs of the last minute: %+v, %v; want one", page, err)
	}
	if _, err := runtime.ListJobs(ctx, pool, runtime.JobFilter{JobSelection: runtime.JobSelection{Limit: 10001}}); err == nil || !strings.Contains(err.Error(), "limit 10001") {
		t.Errorf("ListJobs with limit 10001: %v; want an error naming the limit", err)
	}
}

// TestParseState: every state parses; anything else is an error listing them all.
func TestParseState(t *testing.T) {
	for _, s := range []string{"available", "scheduled", "running", "completed", "failed", "cancelled"} {
		if st, err := runtime.ParseState(s); err != nil || string(st) != s {
			t.Errorf("ParseState(%q) = %q, %v", s, st, err)
		}
	}
	_, err := runtime.ParseState("done")
	if err == nil || !strings.Contains(err.Error(), `"done"`) || !strings.Contains(err.Error(), "available, scheduled, running, completed, failed, cancelled") {
		t.Errorf("ParseState(done): %v; want an error naming it and listing the valid states", err)
	}
}

// TestJobInfoDeclaredPriority: starvation aging moves a job to priority 0 for the
// claim, but JobInfo shows the priority it was enqueued with, and says it was aged,
// also once it finished.
func TestJobInfoDeclaredPriority(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	jt := emailType(t, func(jt *runtime.JobType) { jt.Priority = 7 })
	e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE jobc_jobs SET available_at = now() - interval '2 minutes' WHERE id = $1`, e.ID); err != nil {
		t.Fatal(err)
	}
	if res, err := runtime.NewStarvationAgerForTest(pool, []string{jt.Queue}, time.Minute).RunOnce(ctx); err != nil || res.Aged != 1 {
		t.Fatalf("ager: %+v, %v; want the job aged", res, err)
	}
	if n := countRows(t, pool, `SELECT priority FROM jobc_jobs WHERE id = $1`, e.ID); n != 0 {
		t.Fatalf("stored claim priority %d after aging; want 0", n)
	}
	info, err := runtime.GetJob(ctx, pool, e.ID)
	if err != nil || info.Priority != 7 || !info.Aged {
		t.Errorf("aged job: priority %d, aged %t, %v; want the declared 7, aged", info.Priority, info.Aged, err)
	}
	if _, err := runtime.CancelJob(ctx, pool, e.ID); err != nil {
		t.Fatal(err)
	}
	if info, err := runtime.GetJob(ctx, pool, e.ID); err != nil || info.Priority != 7 {
		t.Errorf("aged job once cancelled: priority %d, %v; want the declared 7", info.Priority, err)
	}
}
