package browsertest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/dashboard"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// rebindHost is the attacker's host name; Chromium resolves it to 127.0.0.1.
const rebindHost = "evil.test"

// rebinder plays both parts of a DNS rebinding on one port: the attacker's server,
// which serves /attack.html (closing the connection, so that nothing else travels on
// it), and, once the name "points at 127.0.0.1", the victim: every other connection is
// passed byte for byte to the dashboard. The browser sees one origin,
// http://evil.test:<port>, throughout, as it does in a real attack; the dashboard
// receives the requests as they were sent, Host header included.
func rebinder(t *testing.T, dashboardAddr, attackPage string) (port string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns = map[net.Conn]bool{}
	)
	track := func(c net.Conn) {
		mu.Lock()
		defer mu.Unlock()
		conns[c] = true
	}
	// Chromium keeps idle connections open: close them, or the copies never end.
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			track(c)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				br := bufio.NewReader(c)
				line, err := br.Peek(len("GET /attack.html "))
				if err != nil {
					return
				}
				if string(line) == "GET /attack.html " {
					if _, err := http.ReadRequest(br); err != nil {
						return
					}
					fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(attackPage), attackPage)
					return
				}
				d, err := net.Dial("tcp", dashboardAddr)
				if err != nil {
					return
				}
				track(d)
				defer d.Close()
				go func() {
					_, _ = io.Copy(d, br)
					if tc, ok := d.(*net.TCPConn); ok {
						_ = tc.CloseWrite()
					}
				}()
				_, _ = io.Copy(c, d)
			}()
		}
	}()
	_, port, err = net.SplitHostPort(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// attackScript is what the attacker's page runs once its name points at the
// dashboard: read a job (its payload), then take a CSRF token from a page and pause a
// queue. It leaves what it saw in window.attack.
const attackScript = `
(async () => {
  const out = {};
  try {
    const r = await fetch("/jobs/%d");
    out.readStatus = r.status; out.read = await r.text();
  } catch (e) { out.read = "error: " + e; }
  try {
    const page = await (await fetch("/queues")).text();
    const m = page.match(/name="csrf" value="([^"]+)"/);
    const r = await fetch("/queues/email/pause", {method: "POST", body: new URLSearchParams({csrf: m ? m[1] : ""})});
    out.pauseStatus = r.status; out.pause = await r.text();
  } catch (e) { out.pause = "error: " + e; }
  window.attack = JSON.stringify(out);
})();`

// browserWithFlags is browser with extra Chromium switches.
func browserWithFlags(t *testing.T, flags map[string]any) context.Context {
	t.Helper()
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
	}
	for k, v := range flags {
		opts = append(opts, chromedp.Flag(k, v))
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
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

type attackResult struct {
	ReadStatus  int    `json:"readStatus"`
	Read        string `json:"read"`
	PauseStatus int    `json:"pauseStatus"`
	Pause       string `json:"pause"`
}

// TestDNSRebinding: a page of another site whose name was pointed at 127.0.0.1 tries,
// in headless Chromium, to read a job's payload from the loopback dashboard (which
// has no authentication, like `jobc ui` by default) and to pause a queue. Both fail
// with 421 and the queue runs on. The same attack against a dashboard told to answer
// for that name succeeds, so it is the Host check that stops it, not the setup.
func TestDNSRebinding(t *testing.T) {
	ctx := browserWithFlags(t, map[string]any{"host-resolver-rules": "MAP " + rebindHost + " 127.0.0.1"})
	const patience = 30 * time.Second // no worker here: this bounds Chromium's page loads
	for _, c := range []struct {
		name    string
		allowed []string
		works   bool
	}{
		{"loopback dashboard", nil, false},
		{"dashboard that allows the name", []string{rebindHost}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			pool := pgtest.NewSchema(t, migrated)
			job, err := runtime.Enqueue(t.Context(), pool, emailType, map[string]string{"to": "secret-recipient@example.com"})
			if err != nil {
				t.Fatal(err)
			}
			h, err := dashboard.New(pool, dashboard.Options{AllowedHosts: c.allowed})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			attack := fmt.Sprintf(`<!doctype html><title>cute cats</title><script>%s</script>`, fmt.Sprintf(attackScript, job.ID))
			port := rebinder(t, srv.Listener.Addr().String(), attack)

			tctx, cancel := context.WithTimeout(ctx, patience)
			defer cancel()
			tab, closeTab := chromedp.NewContext(tctx)
			defer closeTab()
			var raw string
			if err := chromedp.Run(tab, chromedp.Navigate("http://"+rebindHost+":"+port+"/attack.html"),
				chromedp.Poll(`window.attack`, &raw, chromedp.WithPollingTimeout(patience))); err != nil {
				t.Fatalf("run the attacker's page: %v", err)
			}
			var res attackResult
			if err := json.Unmarshal([]byte(raw), &res); err != nil {
				t.Fatalf("the attack's result %q: %v", raw, err)
			}
			paused := queuePaused(t, pool, "email")
			read := strings.Contains(res.Read, "secret-recipient@example.com")
			if c.works {
				if !read || !paused {
					t.Fatalf("with the name allowed the attack should work (else this test proves nothing): read the payload %v, paused %v; saw %+v", read, paused, res)
				}
				return
			}
			if read || res.ReadStatus != http.StatusMisdirectedRequest {
				t.Errorf("the rebound page read the job: status %d, read the payload %v:\n%s", res.ReadStatus, read, res.Read)
			}
			if paused || res.PauseStatus != http.StatusMisdirectedRequest {
				t.Errorf("the rebound page's pause: status %d, queue paused %v:\n%s", res.PauseStatus, paused, res.Pause)
			}
		})
	}
}

func queuePaused(t *testing.T, pool *pgxpool.Pool, queue string) bool {
	t.Helper()
	qs, err := runtime.ListQueueStats(t.Context(), pool)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if q.Queue == queue {
			return q.Paused
		}
	}
	return false
}

// TestGroupActionsOnPanics: jobs that panicked (their error is the panic and its
// stack, many lines) form a group on the Failed page; Retry group and Delete group,
// clicked in Chromium, retry and delete every job of it. A browser posts a form
// value's line breaks as CRLF, which once made them act on no job ("Retried 0 jobs").
func TestGroupActionsOnPanics(t *testing.T) {
	ctx := browser(t)
	pool := pgtest.NewSchema(t, migrated)
	cfg := runtime.Config{
		Queues:        map[string]runtime.QueueConfig{"email": {MaxWorkers: 2}, "reports": {MaxWorkers: 1}},
		Logger:        slog.New(slog.DiscardHandler),
		PollInterval:  100 * time.Millisecond,
		LeaseDuration: 3 * time.Second,
		ShutdownGrace: 2 * time.Second,
	}
	patience := 10*cfg.LeaseDuration + 50*cfg.PollInterval
	panicky := runtime.MustJobType(runtime.JobType{
		Kind: "render_invoice", Queue: "reports", Priority: 1, MaxAttempts: 1, WriteVersion: 1,
		Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}},
	})
	w := runtime.NewWorker(pool, cfg)
	for _, jt := range []*runtime.JobType{emailType, panicky} {
		if err := runtime.Handle(w, jt, func(ctx context.Context, job *runtime.Job, p map[string]any) error {
			var xs []int
			_ = xs[len(p)+3] // index out of range: a real panic, with a real stack
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	var retry, del []int64
	for i := range 3 {
		j, err := runtime.Enqueue(t.Context(), pool, emailType, map[string]string{"to": fmt.Sprintf("u%d@example.com", i)})
		if err != nil {
			t.Fatal(err)
		}
		retry = append(retry, j.ID)
		j, err = runtime.Enqueue(t.Context(), pool, panicky, map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		del = append(del, j.ID)
	}
	wctx, stopWorker := context.WithCancel(context.Background())
	workerDone := make(chan error, 1)
	go func() { workerDone <- w.Run(wctx) }()
	waitFailed := func(ids []int64) {
		t.Helper()
		for _, id := range ids {
			for deadline := time.Now().Add(patience); ; time.Sleep(cfg.PollInterval / 2) {
				j, err := runtime.GetJob(t.Context(), pool, id)
				if err != nil {
					t.Fatal(err)
				}
				if j.State == runtime.StateFailed {
					if len(j.Errors) == 0 || !strings.Contains(j.Errors[0].Error, "\n") {
						t.Fatalf("job %d failed with %+v, want a panic's stack (several lines)", id, j.Errors)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("job %d is %s after %s, want failed", id, j.State, patience)
				}
			}
		}
	}
	waitFailed(retry)
	waitFailed(del)
	// The worker stops, so that a retried job stays available for the test to see.
	stopWorker()
	if err := <-workerDone; err != nil {
		t.Fatalf("worker: %v", err)
	}
	// Each stack names its goroutine, so each panic is a group of its own; a group of
	// three is three jobs with the first one's errors, as a panic in a loop of one
	// goroutine leaves them.
	for _, ids := range [][]int64{retry, del} {
		if _, err := pool.Exec(t.Context(), `UPDATE jobc_jobs_finished SET errors = (SELECT errors FROM jobc_jobs_finished WHERE id = $1)
			WHERE id = ANY($2)`, ids[0], ids[1:]); err != nil {
			t.Fatal(err)
		}
	}

	h, err := dashboard.New(pool, dashboard.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	b := newTab(t, ctx, patience, "")
	run, wantDialog := b.run, b.wantDialog
	// The group's row: its kind's link is the first cell.
	row := func(kind string) string {
		return fmt.Sprintf(`//table[contains(@class,"groups")]//tr[td[1]/a[text()=%q]]`, kind)
	}
	var flash string
	run("retry the send_email panics", chromedp.Navigate(srv.URL+"/failed"),
		chromedp.WaitVisible(row("send_email"), chromedp.BySearch),
		pressXPath(row("send_email")+`//button[contains(@class,"primary")]`))
	wantDialog("Retry all 3 failed jobs of kind send_email")
	run("retried", chromedp.WaitVisible(`.flash`, chromedp.ByQuery), chromedp.Text(`.flash`, &flash, chromedp.ByQuery))
	if !strings.Contains(flash, "Retried 3 jobs of kind send_email") {
		t.Errorf("after Retry group the banner says %q, want 3 jobs retried", flash)
	}
	for _, id := range retry {
		j, err := runtime.GetJob(t.Context(), pool, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State != runtime.StateAvailable {
			t.Errorf("after Retry group, job %d is %s, want available", id, j.State)
		}
	}

	run("delete the render_invoice panics", chromedp.Navigate(srv.URL+"/failed"),
		chromedp.WaitVisible(row("render_invoice"), chromedp.BySearch),
		pressXPath(row("render_invoice")+`//button[contains(@class,"danger")]`))
	wantDialog("Delete all 3 failed jobs of kind render_invoice")
	run("deleted", chromedp.WaitVisible(`.flash`, chromedp.ByQuery), chromedp.Text(`.flash`, &flash, chromedp.ByQuery))
	if !strings.Contains(flash, "Deleted 3 jobs of kind render_invoice") {
		t.Errorf("after Delete group the banner says %q, want 3 jobs deleted", flash)
	}
	for _, id := range del {
		if _, err := runtime.GetJob(t.Context(), pool, id); err == nil {
			t.Errorf("after Delete group, job %d is still there", id)
		}
	}
}
