package browsertest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/dashboard"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func migrated(ctx context.Context, pool *pgxpool.Pool) error {
	_, err := runtime.Migrate(ctx, pool)
	return err
}

// chromium finds the browser: $JOBC_CHROMIUM, or a Chromium or Chrome on PATH. There
// is no skipping: a machine without one fails and is told how to get one.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("JOBC_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium found: install it (Debian: apt-get install -y chromium; .ci/run does) or set JOBC_CHROMIUM to its path")
	return ""
}

// screenshots is where the pages' screenshots go.
func screenshots(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("JOBC_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

// browser starts a headless Chromium with a fresh profile, isolated from the network
// but for the test server, and returns a tab's context.
func browser(t *testing.T) context.Context {
	t.Helper()
	// Not t.TempDir: Chromium's helper processes may still write to the profile for a
	// moment after the browser exits, which would fail the test at cleanup.
	profile, err := os.MkdirTemp("", "jobc-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profile),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc() // waits for the browser process to exit
		var err error
		for range 50 {
			if err = os.RemoveAll(profile); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("left Chromium's profile %s behind: %v", profile, err)
	})
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// tab drives a test's browser tab. Each step (run) has patience to finish and, when
// it fails, fails the test with the page's main element; confirmation dialogs are
// accepted and their messages kept for wantDialog; shot saves a full screenshot in
// the shots directory.
type tab struct {
	t        *testing.T
	ctx      context.Context
	patience time.Duration
	shots    string
	dialogs  chan string
}

func newTab(t *testing.T, ctx context.Context, patience time.Duration, shots string) *tab {
	b := &tab{t: t, ctx: ctx, patience: patience, shots: shots, dialogs: make(chan string, 10)}
	chromedp.ListenTarget(ctx, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			b.dialogs <- d.Message
			go func() { _ = chromedp.Run(ctx, page.HandleJavaScriptDialog(true)) }()
		}
	})
	return b
}

func (b *tab) run(what string, actions ...chromedp.Action) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, b.patience)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		var body string
		_ = chromedp.Run(b.ctx, chromedp.OuterHTML("main", &body, chromedp.ByQuery))
		b.t.Fatalf("%s: %v\npage main:\n%s", what, err, body)
	}
}

func (b *tab) shot(name string) {
	b.t.Helper()
	var png []byte
	if err := chromedp.Run(b.ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// wantDialog waits for the next confirmation dialog and checks that it mentions
// substr.
func (b *tab) wantDialog(substr string) {
	b.t.Helper()
	select {
	case m := <-b.dialogs:
		if !strings.Contains(m, substr) {
			b.t.Errorf("confirmation said %q, want it to mention %q", m, substr)
		}
	case <-time.After(b.patience):
		b.t.Fatalf("no confirmation dialog asking %q", substr)
	}
}

// press clicks the element that CSS selector sel matches when it is there, as the page
// holds it at that moment: a page that refreshes itself swaps <main> every few hundred
// milliseconds here, and chromedp.Click, which finds a node and then clicks where it
// is, failed when the swap came in between ("Could not find node with given id").
func press(sel string) chromedp.Action {
	return pressFound(fmt.Sprintf(`document.querySelector(%q)`, sel))
}

// pressXPath is press for an XPath expression.
func pressXPath(xpath string) chromedp.Action {
	return pressFound(fmt.Sprintf(`document.evaluate(%q, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue`, xpath))
}

// pressFound clicks the element the JavaScript expression find returns, once it
// returns one.
func pressFound(find string) chromedp.Action {
	return chromedp.Poll(`(() => { const el = `+find+`; if (!el) { return false; } el.click(); return true; })()`, nil)
}

// background runs run (a worker's or a relay's Run) until the test ends, then stops
// it and fails the test with what's error if it returned one.
func background(t *testing.T, what string, run func(ctx context.Context) error) {
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("%s: %v", what, err)
		}
	})
}

// emailType is the job the worker runs; it fails until the test "deploys the fix".
var emailType = runtime.MustJobType(runtime.JobType{
	Kind: "send_email", Queue: "email", Priority: 1, MaxAttempts: 1, WriteVersion: 1,
	Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object","properties":{"to":{"type":"string"}}}`}},
})

var reportType = runtime.MustJobType(runtime.JobType{
	Kind: "nightly_report", Queue: "reports", Priority: 5, MaxAttempts: 3, WriteVersion: 1,
	Schedule: &runtime.Schedule{Cron: "0 3 * * *", Timezone: "Europe/Paris"},
	Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}},
})

// TestOperatorRepairsAndPauses is the on-call story: a job failed; the operator opens
// the overview, filters the jobs to the failed ones, opens it, retries it (confirming
// the dialog) and sees a running worker complete it; then pauses the queue from the
// Queues page and sees the worker stop claiming from it, and resumes it.
func TestOperatorRepairsAndPauses(t *testing.T) {
	ctx := browser(t)
	shots := screenshots(t)
	pool := pgtest.NewSchema(t, migrated)

	cfg := runtime.Config{
		Queues:            map[string]runtime.QueueConfig{"email": {MaxWorkers: 4}, "reports": {MaxWorkers: 1}},
		Logger:            slog.New(slog.DiscardHandler),
		PollInterval:      100 * time.Millisecond,
		SchedulerInterval: 50 * time.Millisecond,
		LeaseDuration:     3 * time.Second,
		ShutdownGrace:     2 * time.Second,
	}
	// Every wait below derives from the worker's intervals.
	patience := 10*cfg.LeaseDuration + 50*cfg.PollInterval
	var fixed atomic.Bool
	w := runtime.NewWorker(pool, cfg)
	if err := runtime.Handle(w, emailType, func(ctx context.Context, job *runtime.Job, p map[string]any) error {
		if !fixed.Load() {
			return errors.New(`smtp: 550 mailbox unavailable for <ada@example.com>`)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := runtime.Handle(w, reportType, func(ctx context.Context, job *runtime.Job, p map[string]any) error { return nil }); err != nil {
		t.Fatal(err)
	}
	background(t, "worker", w.Run)

	h, err := dashboard.New(pool, dashboard.Options{Prefix: "/jobs/", JobTypes: []*runtime.JobType{emailType, reportType}, Refresh: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	base := srv.URL + "/jobs/"

	state := func(id int64) runtime.State {
		t.Helper()
		j, err := runtime.GetJob(t.Context(), pool, id)
		if err != nil {
			t.Fatalf("job %d: %v", id, err)
		}
		return j.State
	}
	waitState := func(what string, id int64, want runtime.State) {
		t.Helper()
		deadline := time.Now().Add(patience)
		for {
			got := state(id)
			if got == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: job %d is %s after %s, want %s", what, id, got, patience, want)
			}
			time.Sleep(cfg.PollInterval / 2)
		}
	}

	// Some history for the pages to show: completed reports, and the failing email.
	for range 5 {
		if _, err := runtime.Enqueue(t.Context(), pool, reportType, map[string]any{}); err != nil {
			t.Fatal(err)
		}
	}
	failing, err := runtime.Enqueue(t.Context(), pool, emailType, map[string]string{"to": "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	waitState("the failing email", failing.ID, runtime.StateFailed)

	// Confirmation dialogs are accepted, and their messages recorded.
	b := newTab(t, ctx, patience, shots)
	wantDialog, shot, run := b.wantDialog, b.shot, b.run

	// The overview shows both queues, the worker, and a failure in the last hour.
	var text string
	run("open the overview", chromedp.Navigate(base), chromedp.WaitVisible(`table.queues`, chromedp.ByQuery),
		chromedp.Text(`main`, &text, chromedp.ByQuery))
	for _, want := range []string{"email", "reports", w.ID(), "failed in the last hour, still failed"} {
		if !strings.Contains(text, want) {
			t.Errorf("overview does not show %q:\n%s", want, text)
		}
	}
	shot("overview")
	if os.Getenv("JOBC_UPDATE_DOCS") == "1" {
		src, err := os.ReadFile(filepath.Join(shots, "overview.png"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "dashboard-overview.png"), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// It refreshes itself: the data-refreshed stamp changes without a navigation.
	var stamp string
	run("live refresh", chromedp.Poll(`document.body.dataset.refreshed || ""`, &stamp, chromedp.WithPollingTimeout(patience)))

	// Jobs: filter to failed jobs with the form.
	run("filter to failed jobs",
		chromedp.Click(`nav[aria-label="Pages"] a[href="/jobs/jobs"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`form.filters`, chromedp.ByQuery),
		chromedp.SetValue(`select[name="state"]`, "failed", chromedp.ByQuery),
		chromedp.Submit(`form.filters`, chromedp.ByQuery),
		chromedp.WaitVisible(fmt.Sprintf(`a[href="/jobs/jobs/%d"]`, failing.ID), chromedp.ByQuery),
		chromedp.Text(`table.jobs tbody`, &text, chromedp.ByQuery))
	if strings.Contains(text, "nightly_report") || !strings.Contains(text, "smtp: 550") {
		t.Errorf("the failed filter shows:\n%s", text)
	}
	shot("jobs-failed")

	// Open it: the error with its class, the payload, the timeline.
	run("open the failed job",
		press(fmt.Sprintf(`table.jobs a[href="/jobs/jobs/%d"]`, failing.ID)),
		chromedp.WaitVisible(`#retry`, chromedp.ByQuery),
		chromedp.Text(`main`, &text, chromedp.ByQuery))
	for _, want := range []string{"smtp: 550 mailbox unavailable for <ada@example.com>", `"to": "ada@example.com"`, "attempt 1 failed"} {
		if !strings.Contains(text, want) {
			t.Errorf("the job page does not show %q:\n%s", want, text)
		}
	}
	shot("job-failed")

	// The fix is deployed; Retry, confirm, and the worker completes the job.
	fixed.Store(true)
	run("retry", press(`#retry`))
	wantDialog(fmt.Sprintf("Retry job %d", failing.ID))
	run("retried", chromedp.WaitVisible(`.flash`, chromedp.ByQuery))
	waitState("the retried job", failing.ID, runtime.StateCompleted)
	run("see it completed", chromedp.Reload(), chromedp.WaitVisible(`h1 .badge.state-completed`, chromedp.ByQuery),
		chromedp.Text(`main`, &text, chromedp.ByQuery))
	if !strings.Contains(text, "smtp: 550") {
		t.Errorf("the completed job lost its error history:\n%s", text)
	}
	shot("job-completed")

	// A failed group for the Failed page's screenshot.
	fixed.Store(false)
	var group []int64
	for i := range 3 {
		j, err := runtime.Enqueue(t.Context(), pool, emailType, map[string]string{"to": fmt.Sprintf("u%d@example.com", i)})
		if err != nil {
			t.Fatal(err)
		}
		group = append(group, j.ID)
	}
	for _, id := range group {
		waitState("a job of the group", id, runtime.StateFailed)
	}
	run("failed groups", chromedp.Navigate(base+"failed"), chromedp.WaitVisible(`table.groups`, chromedp.ByQuery),
		chromedp.Text(`table.groups`, &text, chromedp.ByQuery))
	if !strings.Contains(text, "smtp: 550") || !strings.Contains(text, "3") {
		t.Errorf("the Failed page shows:\n%s", text)
	}
	shot("failed")
	fixed.Store(true)
	run("retry the group", press(`table.groups button.primary`))
	wantDialog("Retry all 3 failed jobs of kind send_email")
	// The form's POST and its redirect must land before the next navigation, or
	// Chromium aborts one of the two.
	run("the group retried", chromedp.WaitVisible(`.flash`, chromedp.ByQuery))
	for _, id := range group {
		waitState("a retried job of the group", id, runtime.StateCompleted)
	}

	// Pause the email queue from the Queues page: the worker stops claiming from it.
	run("pause", chromedp.Navigate(base+"queues"), chromedp.WaitVisible(`form[action="/jobs/queues/email/pause"] button`, chromedp.ByQuery),
		press(`form[action="/jobs/queues/email/pause"] button`))
	wantDialog("Pause queue email?")
	run("paused", chromedp.WaitVisible(`form[action="/jobs/queues/email/resume"]`, chromedp.ByQuery))
	shot("queues-paused")
	held, err := runtime.Enqueue(t.Context(), pool, emailType, map[string]string{"to": "held@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	// A paused queue is seen within one poll interval; ten of them without a claim
	// show the worker stopped.
	for end := time.Now().Add(10 * cfg.PollInterval); time.Now().Before(end); time.Sleep(cfg.PollInterval / 2) {
		if got := state(held.ID); got != runtime.StateAvailable {
			t.Fatalf("job %d in the paused queue is %s: the worker claimed it", held.ID, got)
		}
	}
	run("resume", press(`form[action="/jobs/queues/email/resume"] button`))
	wantDialog("Resume queue email?")
	run("resumed", chromedp.WaitVisible(`form[action="/jobs/queues/email/pause"]`, chromedp.ByQuery))
	waitState("the held job after resume", held.ID, runtime.StateCompleted)

	// The remaining pages, for the record, and the overview on a phone in dark mode.
	for _, p := range []string{"versions", "periodic", "jobs"} {
		run("open "+p, chromedp.Navigate(base+p), chromedp.WaitVisible(`main h1`, chromedp.ByQuery))
		shot(p)
	}
	run("periodic next run", chromedp.Navigate(base+"periodic"), chromedp.Text(`main`, &text, chromedp.ByQuery))
	if !strings.Contains(text, "0 3 * * *") || !strings.Contains(text, "Europe/Paris") {
		t.Errorf("the Periodic page shows:\n%s", text)
	}
	run("phone, dark",
		emulation.SetDeviceMetricsOverride(390, 844, 3, true),
		emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}),
		chromedp.Navigate(base), chromedp.WaitVisible(`table.queues`, chromedp.ByQuery))
	var bg string
	run("dark background", chromedp.Evaluate(`getComputedStyle(document.body).backgroundColor`, &bg))
	if bg != "rgb(15, 18, 24)" {
		t.Errorf("in dark mode the background is %s, want the dark palette's rgb(15, 18, 24)", bg)
	}
	shot("overview-phone-dark")
}
