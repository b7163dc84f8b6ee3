package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

// TestWorkflowsListAndShow: jobc workflows list shows the newest workflows with their
// states and filters them; show prints one with its input, each step's state and job,
// what a waiting step waits on, and the results, in text and JSON.
func TestWorkflowsListAndShow(t *testing.T) {
	pool, url := migratedDB(t)
	ctx := t.Context()
	schema := `{"type":"object","required":["n"],"properties":{"n":{"type":"integer"}}}`
	step := runtime.MustJobType(runtime.JobType{Kind: "cli_step", Queue: "cli_wf", Priority: 5, MaxAttempts: 1,
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: schema}},
		ResultWriteVersion: 1, ResultVersions: []runtime.Version{{Number: 1, Schema: schema}}})
	wt := runtime.MustWorkflowType(runtime.WorkflowType{Name: "cli_flow", InputWriteVersion: 1,
		InputVersions: []runtime.Version{{Number: 1, Schema: schema}},
		Steps:         []runtime.Step{{Name: "a", Job: step}, {Name: "b", Job: step, After: []string{"a"}, Map: map[string]string{"n": "a.result.n"}}}})
	type in struct {
		N int64 `json:"n"`
	}
	done, err := runtime.StartWorkflow(ctx, pool, wt, in{N: 41})
	if err != nil {
		t.Fatal(err)
	}
	w := runtime.NewWorker(pool, runtime.Config{Queues: map[string]runtime.QueueConfig{"cli_wf": {MaxWorkers: 2}},
		Logger: slog.New(slog.DiscardHandler), PollInterval: 50 * time.Millisecond})
	if err := runtime.HandleResult(w, step, func(_ context.Context, _ *runtime.Job, p in) (in, error) { return in{N: p.N + 1}, nil }); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- w.Run(runCtx) }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		info, err := runtime.GetWorkflow(ctx, pool, done)
		if err == nil && info.State == runtime.WorkflowCompleted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("workflow %d: %+v, %v; want completed", done, info, err)
		}
	}
	stop()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	waiting, err := runtime.StartWorkflow(ctx, pool, wt, in{N: 7})
	if err != nil {
		t.Fatal(err)
	}
	space := regexp.MustCompile(` +`)
	d, r := strconv.FormatInt(int64(done), 10), strconv.FormatInt(int64(waiting), 10)

	out, errOut, code := jobc(t, "workflows", "list", "--database-url", url)
	flat := space.ReplaceAllString(out, " ")
	if code != 0 || !strings.Contains(flat, "\n"+r+" cli_flow running 2/2 0 ") || !strings.Contains(flat, "\n"+d+" cli_flow completed 0/2 0 ") {
		t.Errorf("workflows list: exit %d; want both workflows, newest first\n%s%s", code, out, errOut)
	}
	out, _, _ = jobc(t, "workflows", "list", "--state", "running", "--json", "--database-url", url)
	var page struct {
		Workflows []workflowJSON `json:"workflows"`
		More      bool           `json:"more"`
	}
	if err := json.Unmarshal([]byte(out), &page); err != nil || len(page.Workflows) != 1 || page.Workflows[0].ID != int64(waiting) || page.More {
		t.Errorf("workflows list --state running --json: %+v (%v); want the running workflow alone\n%s", page, err, out)
	}

	out, errOut, code = jobc(t, "workflows", "show", d, "--database-url", url)
	flat = space.ReplaceAllString(out, " ")
	for _, want := range []string{"\nstate completed\n", "input (version 1):\n{\n  \"n\": 41\n}", " a job completed - ", " b job completed a ", "result of a (version 1):\n{\n  \"n\": 42\n}", "result of b (version 1):\n{\n  \"n\": 43\n}"} {
		if code != 0 || !strings.Contains(flat, space.ReplaceAllString(want, " ")) {
			t.Errorf("workflows show %s: exit %d; want %q\n%s%s", d, code, want, out, errOut)
		}
	}
	out, _, _ = jobc(t, "workflows", "show", r, "--database-url", url)
	if flat = space.ReplaceAllString(out, " "); !strings.Contains(flat, " b job waiting a - steps a -\n") || !strings.Contains(flat, " a job running - ") {
		t.Errorf("workflows show %s: want b waiting on a, a running\n%s", r, out)
	}
	out, _, _ = jobc(t, "workflows", "show", d, "--json", "--database-url", url)
	var got workflowJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.State != "completed" || len(got.StepStates) != 2 ||
		got.StepStates[1].Name != "b" || got.StepStates[1].JobID == nil || !strings.Contains(string(got.StepStates[1].Result), "43") {
		t.Errorf("workflows show --json: %+v (%v)\n%s", got, err, out)
	}

	out, errOut, code = jobc(t, "workflows", "cancel", r, "--database-url", url)
	if code != 0 || out != "workflow "+r+" cancelled\n" {
		t.Errorf("workflows cancel %s: exit %d %q%s", r, code, out, errOut)
	}
	if out, _, _ = jobc(t, "workflows", "show", r, "--database-url", url); !strings.Contains(space.ReplaceAllString(out, " "), "\nstate cancelled\n") {
		t.Errorf("workflows show %s after the cancel: want it cancelled\n%s", r, out)
	}
	if _, errOut, code = jobc(t, "workflows", "cancel", d, "--database-url", url); code != 1 || !strings.Contains(errOut, "completed") {
		t.Errorf("workflows cancel of a completed workflow: exit %d %s; want 1 naming its state", code, errOut)
	}
	// The cancelled workflow resumes: its cancelled steps wait and run again.
	out, errOut, code = jobc(t, "workflows", "retry", r, "--database-url", url)
	if code != 0 || out != "workflow "+r+" runs again from the steps that did not complete\n" {
		t.Errorf("workflows retry %s: exit %d %q%s", r, code, out, errOut)
	}
	if out, _, _ = jobc(t, "workflows", "show", r, "--database-url", url); !strings.Contains(space.ReplaceAllString(out, " "), "\nstate running\n") {
		t.Errorf("workflows show %s after the retry: want it running\n%s", r, out)
	}
	if _, errOut, code = jobc(t, "workflows", "retry", d, "--database-url", url); code != 1 || !strings.Contains(errOut, "it is completed") {
		t.Errorf("workflows retry of a completed workflow: exit %d %s; want 1 naming its state", code, errOut)
	}
	for _, args := range [][]string{{"workflows", "show", "abc"}, {"workflows", "cancel", "-3"}, {"workflows", "retry", "x"}, {"workflows", "list", "--state", "nope"}, {"workflows", "list", "--limit", "0"}} {
		if _, errOut, code := jobc(t, append(args, "--database-url", url)...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (a usage error)\n%s", args, code, errOut)
		}
	}
	if _, errOut, code := jobc(t, "workflows", "show", "999999", "--database-url", url); code != 1 || !strings.Contains(errOut, "workflow not found") {
		t.Errorf("workflows show of an unknown id: exit %d, %s; want 1 and not found", code, errOut)
	}
}
