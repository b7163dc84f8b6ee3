package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/dashboard"
	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/relay"
)

// orderType is the relayed event of these tests, ordered by its "customer" field.
var orderType = runtime.MustEventType(runtime.EventType{Name: "order_placed", Subject: "orders.placed", OrderingKey: []string{"customer"},
	Relay: true, WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object","properties":{"customer":{"type":"string"}}}`}}})

// brokerSink answers as a broker would: it refuses events of customer "cust-refused"
// for good, cannot reach the broker for those of "cust-down", and takes the rest.
type brokerSink struct{}

func (brokerSink) Publish(_ context.Context, msgs []relay.Message) []error {
	errs := make([]error, len(msgs))
	for i, m := range msgs {
		switch m.OrderingKey {
		case "cust-refused":
			errs[i] = relay.Poison(errors.New("nats: maximum payload exceeded"))
		case "cust-down":
			errs[i] = errors.New("nats: no responders available for request")
		}
	}
	return errs
}

func (brokerSink) Close() error { return nil }

// outbox publishes, through a real relay with brokerSink, one event refused for good,
// one whose broker is down with two more of its key behind it, and one that goes; it
// returns the refused event's id and the one waiting to be sent again.
func (e *env) outbox() (refused, retrying int64) {
	e.t.Helper()
	var ids []int64
	for _, c := range []string{"cust-refused", "cust-down", "cust-down", "cust-down", "cust-ok"} {
		p, err := runtime.Publish(e.t.Context(), e.pool, orderType, map[string]string{"customer": c})
		if err != nil {
			e.t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	r, err := relay.New(e.pool, relay.Config{Sink: brokerSink{}, Events: []*runtime.EventType{orderType},
		Logger: slog.New(slog.DiscardHandler), RetryInitial: time.Hour, RetryMax: time.Hour})
	if err != nil {
		e.t.Fatal(err)
	}
	if res, err := r.RunOnce(e.t.Context()); err != nil || res != (relay.BatchResult{Claimed: 3, Published: 1, Retried: 1, Failed: 1}) {
		e.t.Fatalf("relay: %+v, %v; want one event of each customer claimed, one published, retried and failed", res, err)
	}
	return ids[0], ids[1]
}

// row returns the table row of event id in the table with the given id, as text.
func row(t *testing.T, body, table string, id int64) string {
	t.Helper()
	at := strings.Index(body, `id="`+table+`"`)
	if at < 0 {
		return ""
	}
	m := regexp.MustCompile(`(?s)<tr data-id="` + fmt.Sprint(id) + `">(.*?)</tr>`).FindStringSubmatch(body[at:])
	if m == nil {
		return ""
	}
	return strings.Join(strings.Fields(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(m[1], " ")), " ")
}

// TestEventsPage: the Events page shows the outbox's counts, the event waiting to be
// sent again with its error, its next attempt and the events of its key behind it,
// and the event failed for good with its error; with HidePayloads no ordering key
// (payload values) shows.
func TestEventsPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{})
	refused, retrying := e.outbox()
	status, body := e.get("/events")
	wantStatus(t, "events", status, http.StatusOK, body)
	wantContains(t, "events", body, `aria-current="page">Events`, "3</strong> pending", "1</strong> failed")
	// Its next attempt is a jittered hour away (relay.Config.RetryJitter).
	if r := row(t, body, "retrying", retrying); !regexp.MustCompile(`^#\d+ order_placed v1 cust-down 1 in (4[89]m|5\dm|1h)\S* 2 nats: no responders`).MatchString(r) {
		t.Errorf("the retrying event's row: %q, want its key, 1 attempt, next in about an hour, 2 behind it and the error", r)
	}
	if r := row(t, body, "failed-events", refused); !strings.Contains(r, "order_placed v1 orders.placed cust-refused 1") || !strings.Contains(r, "maximum payload exceeded") ||
		!strings.Contains(r, "Send again") {
		t.Errorf("the failed event's row: %q, want its subject, key, attempts, error and Send again", r)
	}

	hidden := newEnv(t, dashboard.Options{HidePayloads: true})
	hidden.outbox()
	status, body = hidden.get("/events")
	wantStatus(t, "events with hidden payloads", status, http.StatusOK, body)
	wantContains(t, "events with hidden payloads", body, "no responders", "maximum payload exceeded")
	if strings.Contains(body, "cust-") {
		t.Errorf("a dashboard that hides payloads shows an ordering key:\n%s", body)
	}
}

// TestEventsSendAgain: Send again makes a failed event pending, by id or all at once,
// through a form with the CSRF token; a bad form is refused with 400, a read-only
// dashboard offers no form and refuses the POST.
func TestEventsSendAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{})
	refused, _ := e.outbox()
	tok := e.token("/events")
	status, body := e.do(http.MethodPost, "/events/retry", url.Values{"id": {fmt.Sprint(refused)}}, nil)
	wantStatus(t, "send again without a token", status, http.StatusForbidden, body)
	for what, form := range map[string]url.Values{
		"no id":     {},
		"a bad id":  {"id": {"abc"}},
		"id 0":      {"id": {"0"}},
		"id is all": {"id": {fmt.Sprint(refused)}, "all": {"yes"}},
	} {
		status, body := e.post("/events/retry", form, tok)
		wantStatus(t, "send again with "+what, status, http.StatusBadRequest, body)
	}
	if s, err := relay.ReadStats(t.Context(), e.pool); err != nil || s.Failed != 1 {
		t.Fatalf("after the refused forms: %+v, %v; want the failed event still failed", s, err)
	}
	status, body = e.post("/events/retry", url.Values{"id": {fmt.Sprint(refused)}}, tok)
	wantStatus(t, "send again", status, http.StatusSeeOther, body)
	if s, err := relay.ReadStats(t.Context(), e.pool); err != nil || s.Failed != 0 || s.Pending != 4 {
		t.Fatalf("after Send again: %+v, %v; want nothing failed and the event pending with the 3 others", s, err)
	}

	all := newEnv(t, dashboard.Options{})
	all.outbox()
	status, body = all.post("/events/retry", url.Values{"all": {"yes"}}, all.token("/events"))
	wantStatus(t, "send all again", status, http.StatusSeeOther, body)
	if s, err := relay.ReadStats(t.Context(), all.pool); err != nil || s.Failed != 0 {
		t.Fatalf("after Send all again: %+v, %v; want nothing failed", s, err)
	}

	ro := newEnv(t, dashboard.Options{ReadOnly: true})
	rid, _ := ro.outbox()
	status, body = ro.get("/events")
	wantStatus(t, "events on a read-only dashboard", status, http.StatusOK, body)
	if strings.Contains(body, "events/retry") {
		t.Errorf("a read-only dashboard offers Send again:\n%s", body)
	}
	status, body = ro.do(http.MethodPost, "/events/retry", url.Values{"id": {fmt.Sprint(rid)}}, nil)
	wantStatus(t, "send again on a read-only dashboard", status, http.StatusForbidden, body)
}
