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
	"github.com/jobc-dev/jobc/runtime/relay"
)

var invoiceType = runtime.MustEventType(runtime.EventType{Name: "invoice_issued", Subject: "billing.invoice_issued",
	OrderingKey: []string{"account"}, Relay: true, WriteVersion: 1,
	Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object","properties":{"account":{"type":"string"}}}`}}})

// flakySink is a broker as the on-call person meets it: it refuses one event for good,
// cannot take account acct-7's until it is fixed, and takes the rest.
type flakySink struct {
	refuse int64
	fixed  atomic.Bool
}

func (s *flakySink) Publish(_ context.Context, msgs []relay.Message) []error {
	errs := make([]error, len(msgs))
	for i, m := range msgs {
		switch {
		case m.ID == s.refuse && !s.fixed.Load():
			errs[i] = relay.Poison(errors.New("nats: maximum payload exceeded"))
		case m.OrderingKey == "acct-7" && !s.fixed.Load():
			errs[i] = errors.New("nats: no responders available for request")
		}
	}
	return errs
}

func (s *flakySink) Close() error { return nil }

// TestRelayStuckOnOneKey is the on-call story of the outbox, in Chromium: the relay
// lag grows; the Events page shows why (one account's event waits to be sent again,
// with the account's later events behind it, and one event was refused for good);
// the broker is fixed, the operator sends the refused event again (confirmed, through
// the form's CSRF token), and the page, refreshing itself, shows the outbox drain.
func TestRelayStuckOnOneKey(t *testing.T) {
	ctx := browser(t)
	shots := screenshots(t)
	pool := pgtest.NewSchema(t, migrated)
	const refresh = 200 * time.Millisecond
	cfg := relay.Config{Events: []*runtime.EventType{invoiceType}, Logger: slog.New(slog.DiscardHandler),
		PollInterval: 50 * time.Millisecond, RetryInitial: time.Second, RetryMax: time.Second, RetryJitter: 0.01}
	// Every wait below derives from the relay's intervals and the page's refresh.
	patience := 20*cfg.RetryMax + 50*cfg.PollInterval + 10*refresh

	var ids []int64
	for _, account := range []string{"acct-1", "acct-7", "acct-7", "acct-7", "acct-9"} {
		p, err := runtime.Publish(t.Context(), pool, invoiceType, map[string]string{"account": account})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	sink := &flakySink{refuse: ids[0]}
	cfg.Sink = sink
	r, err := relay.New(pool, cfg)
	if err != nil {
		t.Fatal(err)
	}
	background(t, "relay", r.Run)
	h, err := dashboard.New(pool, dashboard.Options{Refresh: refresh})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	b := newTab(t, ctx, patience, shots)
	run, shot := b.run, b.shot

	// From the nav: acct-7's first event waits to be sent again with its two later
	// events behind it; the refused one is failed, with the broker's words.
	var retrying, failed string
	run("open the events", chromedp.Navigate(srv.URL+"/"),
		chromedp.Click(`nav a[href="/events"]`, chromedp.ByQuery),
		chromedp.WaitVisible(fmt.Sprintf(`#retrying tr[data-id="%d"]`, ids[1]), chromedp.ByQuery),
		chromedp.WaitVisible(fmt.Sprintf(`#failed-events tr[data-id="%d"]`, ids[0]), chromedp.ByQuery),
		chromedp.Text(fmt.Sprintf(`#retrying tr[data-id="%d"]`, ids[1]), &retrying, chromedp.ByQuery),
		chromedp.Text(fmt.Sprintf(`#failed-events tr[data-id="%d"]`, ids[0]), &failed, chromedp.ByQuery))
	for _, want := range []string{"invoice_issued", "acct-7", "no responders"} {
		if !strings.Contains(retrying, want) {
			t.Errorf("the waiting event's row does not show %q: %q", want, retrying)
		}
	}
	var behind string
	run("read what waits behind it", chromedp.Text(fmt.Sprintf(`#retrying tr[data-id="%d"] td:nth-child(6)`, ids[1]), &behind, chromedp.ByQuery))
	if strings.TrimSpace(behind) != "2" {
		t.Errorf("behind acct-7's waiting event: %q, want its 2 later events", behind)
	}
	for _, want := range []string{"billing.invoice_issued", "acct-1", "maximum payload exceeded"} {
		if !strings.Contains(failed, want) {
			t.Errorf("the failed event's row does not show %q: %q", want, failed)
		}
	}
	shot("events-stuck")

	// The broker is fixed: acct-7's events go by themselves at their next attempt;
	// the refused one needs Send again, confirmed.
	sink.fixed.Store(true)
	run("send it again", press(fmt.Sprintf(`#failed-events tr[data-id="%d"] button`, ids[0])))
	b.wantDialog(fmt.Sprintf("Send event %d (invoice_issued) again?", ids[0]))
	var text string
	run("see the outbox drain", chromedp.WaitVisible(`.flash`, chromedp.ByQuery),
		chromedp.Poll(`/(^|\s)0 pending/.test(document.querySelector("#outbox").textContent.replace(/\s+/g, " ")) &&
			document.querySelectorAll("#retrying tr, #failed-events tr").length === 0`, nil, chromedp.WithPollingTimeout(patience)),
		chromedp.Text(`main`, &text, chromedp.ByQuery))
	if !strings.Contains(text, "No event is waiting to be sent again.") || !strings.Contains(text, "No failed events.") {
		t.Errorf("the drained outbox's page:\n%s", text)
	}
	shot("events-drained")
	if s, err := relay.ReadStats(t.Context(), pool); err != nil || s.Pending != 0 || s.Failed != 0 {
		t.Errorf("the outbox after the repair: %+v, %v; want everything published", s, err)
	}
}
