package browsertest

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/jobc-dev/jobc/dashboard"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// TestOverviewFlagsUnservedQueue: in Chromium, the Overview warns that jobs wait in a
// queue no live worker serves, and that no history partition covers now for each
// finished state (no worker's pruner has prepared them on this new database); once a
// worker of the queue starts, the page's live refresh takes the warnings away, the
// second once its pruner has added the partitions. The queue is paused first, so its
// jobs stay available throughout: the warning goes because of the worker, not because
// the jobs were done.
func TestOverviewFlagsUnservedQueue(t *testing.T) {
	ctx := browser(t)
	pool := pgtest.NewSchema(t, migrated)
	cfg := runtime.Config{
		Queues:        map[string]runtime.QueueConfig{"email": {MaxWorkers: 1}},
		Logger:        slog.New(slog.DiscardHandler),
		PollInterval:  100 * time.Millisecond,
		LeaseDuration: 3 * time.Second,
		ShutdownGrace: 2 * time.Second,
	}
	const refresh = 200 * time.Millisecond
	// Every wait below derives from the worker's intervals and the page's refresh.
	patience := 10*cfg.LeaseDuration + 50*cfg.PollInterval + 10*refresh
	var ids []int64
	for _, to := range []string{"a@example.com", "b@example.com", "c@example.com"} {
		j, err := runtime.Enqueue(t.Context(), pool, emailType, map[string]string{"to": to})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	h, err := dashboard.New(pool, dashboard.Options{Refresh: refresh})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	run := newTab(t, ctx, patience, "").run

	var text string
	run("open the overview", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(`.flash.unserved`, chromedp.ByQuery),
		chromedp.Text(`.flash.unserved`, &text, chromedp.ByQuery))
	if want := "3 jobs wait in queue email and no live worker serves it."; text != want {
		t.Errorf("the Overview warns %q, want %q", text, want)
	}
	var uncovered int
	run("count the history warnings", chromedp.Evaluate(`document.querySelectorAll(".flash.uncovered").length`, &uncovered))
	if uncovered != 3 {
		t.Errorf("the Overview of a database without history partitions has %d warnings about them, want one per finished state", uncovered)
	}

	if err := runtime.PauseQueue(t.Context(), pool, "email"); err != nil {
		t.Fatal(err)
	}
	w := runtime.NewWorker(pool, cfg)
	if err := runtime.Handle(w, emailType, func(ctx context.Context, job *runtime.Job, p map[string]any) error { return nil }); err != nil {
		t.Fatal(err)
	}
	background(t, "worker", w.Run)
	var gone bool
	run("the warnings go with a live worker",
		chromedp.Poll(`document.querySelector(".flash.unserved") === null && document.querySelector(".flash.uncovered") === null && document.querySelector("table.queues") !== null`,
			&gone, chromedp.WithPollingTimeout(patience)))
	for _, id := range ids {
		j, err := runtime.GetJob(t.Context(), pool, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State != runtime.StateAvailable {
			t.Errorf("job %d in the paused queue is %s, want available", id, j.State)
		}
	}
}
