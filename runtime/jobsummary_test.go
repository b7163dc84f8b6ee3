package runtime_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/runtime"
)

// TestJobSummaryHasNoPayload: a summary has no field for what a list never shows, so
// no list built on it can load payloads, metadata or unique keys.
func TestJobSummaryHasNoPayload(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeFor[runtime.JobSummary]()
	for i := range typ.NumField() {
		switch n := typ.Field(i).Name; n {
		case "Payload", "Metadata", "UniqueKey", "Errors":
			t.Errorf("runtime.JobSummary has a field %s: lists would load it", n)
		}
	}
}

// TestListJobSummaries: the summaries list the jobs ListJobs lists, in its order and
// pages, with the last error; by error text as ListJobsByError; and a row whose
// errors column is not a list of attempts shows its raw record instead of failing.
func TestListJobSummaries(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	jt := emailType(t, nil)
	var ids []int64
	for i := range 5 {
		e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: i, Email: "ada@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	if _, err := pool.Exec(ctx, `UPDATE jobc_jobs SET errors = jsonb_build_array(
		jsonb_build_object('attempt', 1, 'at', now(), 'error', 'first', 'worker', 'w1'),
		jsonb_build_object('attempt', 2, 'at', now(), 'class', 'transient', 'error', 'dial tcp: timeout', 'worker', 'w1'))
		WHERE id = $1`, ids[1]); err != nil {
		t.Fatal(err)
	}
	f := runtime.JobFilter{JobSelection: runtime.JobSelection{Limit: 2}}
	var got []int64
	for {
		page, err := runtime.ListJobSummaries(ctx, pool, f)
		if err != nil {
			t.Fatal(err)
		}
		full, err := runtime.ListJobs(ctx, pool, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Jobs) != len(full.Jobs) || page.More != full.More {
			t.Fatalf("ListJobSummaries %+v and ListJobs %+v disagree", page, full)
		}
		for i, s := range page.Jobs {
			j := full.Jobs[i]
			if s.ID != j.ID || s.Kind != j.Kind || s.State != j.State || s.Attempt != j.Attempt || !s.CreatedAt.Equal(j.CreatedAt) {
				t.Errorf("summary %+v is not job %+v", s, j)
			}
			got = append(got, s.ID)
		}
		if !page.More {
			break
		}
		f.After = page.Jobs[len(page.Jobs)-1].ID
	}
	want := slices.Clone(ids)
	slices.Reverse(want)
	if !slices.Equal(got, want) {
		t.Errorf("summaries listed %v, want %v", got, want)
	}

	byErr, err := runtime.ListJobSummariesByError(ctx, pool, "DIAL TCP", runtime.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(byErr.Jobs) != 1 || byErr.Jobs[0].ID != ids[1] || byErr.Jobs[0].LastError == nil ||
		byErr.Jobs[0].LastError.Error != "dial tcp: timeout" || byErr.Jobs[0].LastError.Class != "transient" || byErr.Jobs[0].LastError.Attempt != 2 {
		t.Errorf("by error text: %+v, want job %d with its last error", byErr, ids[1])
	}

	// A malformed errors value (the errors column of a row written by hand).
	if _, err := pool.Exec(ctx, `UPDATE jobc_jobs SET errors = '[42]' WHERE id = $1`, ids[2]); err != nil {
		t.Fatal(err)
	}
	page, err := runtime.ListJobSummaries(ctx, pool, runtime.JobFilter{})
	if err != nil {
		t.Fatalf("a malformed error record fails the list: %v", err)
	}
	for _, s := range page.Jobs {
		switch s.ID {
		case ids[2]:
			if s.LastError == nil || !strings.Contains(s.LastError.Error, "unreadable error record: 42") {
				t.Errorf("job %d with errors [42]: last error %+v, want it shown as unreadable", s.ID, s.LastError)
			}
		case ids[1]:
		default:
			if s.LastError != nil {
				t.Errorf("job %d failed no attempt, its last error is %+v", s.ID, s.LastError)
			}
		}
	}
}
