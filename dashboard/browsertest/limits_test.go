package browsertest

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/jobc-dev/jobc/dashboard"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// mailType sends at most one email per address at a time, fleet-wide.
var mailType = runtime.MustJobType(runtime.JobType{
	Kind: "send_mail", Queue: "mail", Priority: 1, MaxAttempts: 1, WriteVersion: 1,
	Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object","required":["to"],"properties":{"to":{"type":"string"}}}`}},
	Flow:     &runtime.Flow{By: []string{"to"}, Concurrency: 1},
})

// TestOperatorRaisesALimit is the throttling story: a job waits while another of its
// address runs; the operator opens its page and reads why (the address is at its
// limit 1/1), raises the limit to 2 on the Limits page's form, and sees the worker
// start the job within a poll interval.
func TestOperatorRaisesALimit(t *testing.T) {
	ctx := browser(t)
	shots := screenshots(t)
	pool := pgtest.NewSchema(t, migrated)
	cfg := runtime.Config{
		Queues:            map[string]runtime.QueueConfig{"mail": {MaxWorkers: 4}},
		Logger:            slog.New(slog.DiscardHandler),
		PollInterval:      100 * time.Millisecond,
		SchedulerInterval: 50 * time.Millisecond,
		LeaseDuration:     3 * time.Second,
		ShutdownGrace:     2 * time.Second,
	}
	patience := 10*cfg.LeaseDuration + 50*cfg.PollInterval

	release := make(chan struct{})
	w := runtime.NewWorker(pool, cfg)
	if err := runtime.Handle(w, mailType, func(ctx context.Context, job *runtime.Job, p map[string]any) error {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	background(t, "worker", w.Run)
	t.Cleanup(func() { close(release) }) // first: the handlers return, the worker stops

	h, err := dashboard.New(pool, dashboard.Options{Prefix: "/jobs/", JobTypes: []*runtime.JobType{mailType}, Refresh: -1})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	base := srv.URL + "/jobs/"

	waitState := func(what string, id int64, want runtime.State) {
		t.Helper()
		deadline := time.Now().Add(patience)
		for {
			j, err := runtime.GetJob(t.Context(), pool, id)
			if err != nil {
				t.Fatalf("job %d: %v", id, err)
			}
			if j.State == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: job %d is %s after %s, want %s", what, id, j.State, patience, want)
			}
			time.Sleep(cfg.PollInterval / 2)
		}
	}
	b := newTab(t, ctx, patience, shots)
	run, shot := b.run, b.shot

	first, err := runtime.Enqueue(t.Context(), pool, mailType, map[string]string{"to": "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	waitState("the first email", first.ID, runtime.StateRunning)
	second, err := runtime.Enqueue(t.Context(), pool, mailType, map[string]string{"to": "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	// Several poll intervals: a worker ignoring the limit would have claimed it.
	time.Sleep(5 * cfg.PollInterval)
	waitState("the second email, held by the limit", second.ID, runtime.StateAvailable)

	var why string
	run("open the waiting job", chromedp.Navigate(fmt.Sprintf("%sjobs/%d", base, second.ID)),
		chromedp.WaitVisible(`#waiting`, chromedp.ByQuery), chromedp.Text(`#waiting`, &why, chromedp.ByQuery))
	if !strings.Contains(why, "to ada@example.com is at its limit 1/1") {
		t.Errorf("the waiting job's page says %q, want the address at its limit 1/1", why)
	}
	shot("job-waiting")

	var text string
	run("the overview counts it throttled", chromedp.Navigate(base), chromedp.WaitVisible(`table.queues`, chromedp.ByQuery),
		chromedp.Text(`.tile.throttled`, &text, chromedp.ByQuery))
	if !strings.Contains(text, "1") || !strings.Contains(text, "throttled") {
		t.Errorf("the Overview's throttled tile says %q", text)
	}

	form := `tr[id="limit-kind-send_mail"] form[action="/jobs/limits/kind/send_mail/set"]`
	run("raise the limit on the Limits page",
		chromedp.Click(`nav[aria-label="Pages"] a[href="/jobs/limits"]`, chromedp.ByQuery),
		chromedp.WaitVisible(form, chromedp.ByQuery),
		chromedp.SendKeys(form+` input[name="concurrency"]`, "2", chromedp.ByQuery),
		chromedp.Click(form+` button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`.flash`, chromedp.ByQuery),
		chromedp.Text(`.flash`, &text, chromedp.ByQuery))
	if !strings.Contains(text, "Limits of kind send_mail: concurrency 2 set") {
		t.Errorf("after Set the banner says %q", text)
	}
	run("the override shown", chromedp.Text(`tr[id="limit-kind-send_mail"] td.effective`, &text, chromedp.ByQuery))
	if strings.TrimSpace(text) != "2 running" {
		t.Errorf("after Set the limit in force shows %q, want 2 running", text)
	}
	shot("limits")
	ls, err := runtime.ListLimits(t.Context(), pool)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 1 || ls[0].Override.Concurrency != 2 || ls[0].ChangedBy != "dashboard" {
		t.Errorf("after Set: %+v", ls)
	}
	waitState("the second email, after the limit went up", second.ID, runtime.StateRunning)
}
