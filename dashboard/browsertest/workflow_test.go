package browsertest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/jobc-dev/jobc/dashboard"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// TestWorkflowGraph is the on-call story of a workflow, in Chromium: the Workflows
// page lists it; its page draws the steps as a graph, each node in its state with
// what it waits on (a signal, the steps before it), the edges out of completed steps
// marked; a signal lets it go on, which the page's live refresh shows; a workflow
// whose step failed is retried from its page (Retry, confirmed, through the form's
// CSRF token) and completes.
func TestWorkflowGraph(t *testing.T) {
	ctx := browser(t)
	shots := screenshots(t)
	pool := pgtest.NewSchema(t, migrated)
	cfg := runtime.Config{
		Queues:            map[string]runtime.QueueConfig{"wf": {MaxWorkers: 4}},
		Logger:            slog.New(slog.DiscardHandler),
		PollInterval:      100 * time.Millisecond,
		SchedulerInterval: 50 * time.Millisecond,
		LeaseDuration:     3 * time.Second,
		ShutdownGrace:     2 * time.Second,
	}
	const refresh = 200 * time.Millisecond
	// Every wait below derives from the worker's intervals and the page's refresh.
	patience := 10*cfg.LeaseDuration + 50*cfg.PollInterval + 10*refresh

	object := `{"type":"object"}`
	newType := func(kind string) *runtime.JobType {
		return runtime.MustJobType(runtime.JobType{Kind: kind, Queue: "wf", Priority: 5, MaxAttempts: 1, WriteVersion: 1,
			Versions:           []runtime.Version{{Number: 1, Schema: object}},
			ResultWriteVersion: 1, ResultVersions: []runtime.Version{{Number: 1, Schema: object}}})
	}
	reserve, pack, ship := newType("reserve"), newType("pack"), newType("ship")
	wt := runtime.MustWorkflowType(runtime.WorkflowType{
		Name: "fulfil_order", InputWriteVersion: 1, InputVersions: []runtime.Version{{Number: 1, Schema: object}},
		Signals: []runtime.Signal{{Name: "paid", WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: object}}}},
		Steps: []runtime.Step{
			{Name: "reserve", Job: reserve, Map: map[string]string{"order": "input.order"}},
			{Name: "pay", After: []string{"reserve"}, Wait: &runtime.Wait{Signal: "paid"}},
			{Name: "pack", Job: pack, After: []string{"reserve"}, ForEach: "input.items"},
			{Name: "ship", Job: ship, After: []string{"pay", "pack"}, Map: map[string]string{"boxes": "pack.result"}},
		},
	})
	var fixed atomic.Bool
	w := runtime.NewWorker(pool, cfg)
	for _, jt := range []*runtime.JobType{reserve, pack} {
		if err := runtime.HandleResult(w, jt, func(context.Context, *runtime.Job, map[string]any) (map[string]any, error) {
			return map[string]any{"ok": true}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := runtime.HandleResult(w, ship, func(context.Context, *runtime.Job, map[string]any) (map[string]any, error) {
		if !fixed.Load() {
			return nil, errors.New("carrier: 503 service unavailable")
		}
		return map[string]any{"tracking": "T-1"}, nil
	}); err != nil {
		t.Fatal(err)
	}
	background(t, "worker", w.Run)
	h, err := dashboard.New(pool, dashboard.Options{Refresh: refresh})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	id, err := runtime.StartWorkflow(t.Context(), pool, wt, map[string]any{"order": "o-1", "items": []any{map[string]any{"sku": "a"}, map[string]any{"sku": "b"}}})
	if err != nil {
		t.Fatal(err)
	}

	b := newTab(t, ctx, patience, shots)
	run, shot := b.run, b.shot
	node := func(step, state string) string {
		return fmt.Sprintf(`svg#dag g.node[data-step=%q][data-state=%q]`, step, state)
	}

	// The list links to it; its page draws four steps, pay waiting for its signal
	// and ship for pay, the edges out of reserve marked done once it completed.
	var text string
	run("open the workflows", chromedp.Navigate(srv.URL+"/workflows"),
		press(fmt.Sprintf(`#workflows a[href="/workflows/%d"]`, id)),
		chromedp.WaitVisible(node("pay", "running"), chromedp.ByQuery),
		chromedp.WaitVisible(node("pack", "completed"), chromedp.ByQuery),
		chromedp.TextContent(`svg#dag`, &text, chromedp.ByQuery))
	for _, want := range []string{"reserve", "job · completed", "pay", "wait · running", "signal paid", "pack", "for_each · completed", "ship", "steps pay"} {
		if !strings.Contains(text, want) {
			t.Errorf("the graph does not show %q:\n%s", want, text)
		}
	}
	var nodes, edges, done int
	run("count the graph", chromedp.Evaluate(`document.querySelectorAll("svg#dag g.node").length`, &nodes),
		chromedp.Evaluate(`document.querySelectorAll("svg#dag path.edge").length`, &edges),
		chromedp.Evaluate(`document.querySelectorAll("svg#dag path.edge.done[data-from=reserve]").length`, &done))
	if nodes != 4 || edges != 4 || done != 2 {
		t.Errorf("the graph has %d nodes, %d edges, %d done out of reserve; want 4, 4, 2", nodes, edges, done)
	}
	// A node is placed to the right of every step it comes after.
	var leftOfShip bool
	run("layout", chromedp.Evaluate(`(() => {
		const x = s => document.querySelector('svg#dag g.node[data-step="' + s + '"]').getBoundingClientRect().left;
		return x("reserve") < x("pay") && x("pay") < x("ship") && x("pack") < x("ship");
	})()`, &leftOfShip))
	if !leftOfShip {
		t.Error("the graph does not place each step right of the steps it comes after")
	}
	shot("workflow-waiting")

	// The signal comes; the page refreshes itself until ship, out of attempts,
	// fails the workflow.
	if err := runtime.SignalWorkflow(t.Context(), pool, wt, id, "paid", map[string]any{"ref": "p-1"}); err != nil {
		t.Fatal(err)
	}
	run("see it fail", chromedp.WaitVisible(node("ship", "failed"), chromedp.ByQuery),
		chromedp.WaitVisible(`h1 .badge.state-failed`, chromedp.ByQuery),
		chromedp.WaitVisible(`#retry`, chromedp.ByQuery))
	shot("workflow-failed")

	// The fix is deployed: Retry, confirm, and the workflow completes.
	fixed.Store(true)
	run("retry", press(`#retry`))
	b.wantDialog(fmt.Sprintf("Retry workflow %d", id))
	run("see it complete", chromedp.WaitVisible(`.flash`, chromedp.ByQuery),
		chromedp.WaitVisible(node("ship", "completed"), chromedp.ByQuery),
		chromedp.WaitVisible(`h1 .badge.state-completed`, chromedp.ByQuery),
		chromedp.Text(`main`, &text, chromedp.ByQuery))
	if !strings.Contains(text, `"tracking": "T-1"`) || !strings.Contains(text, `"ref": "p-1"`) {
		t.Errorf("the completed workflow does not show ship's result and the signal:\n%s", text)
	}
	shot("workflow-completed")
}
