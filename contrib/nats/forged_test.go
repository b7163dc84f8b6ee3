package jobcnats_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	jobcnats "github.com/jobc-dev/jobc/contrib/nats"
	"github.com/jobc-dev/jobc/internal/brokertest"
	"github.com/jobc-dev/jobc/internal/relaytest"
	"github.com/jobc-dev/jobc/internal/testkit"
	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/relay"
)

// TestNATSForgedSubject is the regression test of a relay that published what an
// outbox row said: rows written around Publish with a plain INSERT (as the producer
// role can), naming the JetStream API subject $JS.API.STREAM.DELETE.<stream>, once
// under a declared event and once under an undeclared one, made the relay delete that
// stream. Now the stream survives, the forged rows fail with the reason, and the
// declared events around them are in their stream, in order. A subject the spec itself
// declares is refused too when it is the server's API, a reply inbox or a wildcard.
func TestNATSForgedSubject(t *testing.T) {
	t.Parallel()
	srv := brokertest.StartNATS(t)
	nc, events := newStream(t, srv.URL, "shop")
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "LEDGER", Subjects: []string{"ledger.>"}}); err != nil {
		t.Fatal(err)
	}
	paid := runtime.MustEventType(runtime.EventType{Name: "order_paid", Subject: "shop.order_paid", OrderingKey: []string{"order"},
		Relay: true, WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object","required":["order"],"properties":{"order":{"type":"string"}}}`}}})
	// Declared, yet no subject to publish to: a spec author's mistake, or a hostile one.
	declared := func(name, subject string) *runtime.EventType {
		return runtime.MustEventType(runtime.EventType{Name: name, Subject: subject, Relay: true, WriteVersion: 1,
			Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}}})
	}
	api := declared("stream_dropped", "$JS.API.STREAM.DELETE.LEDGER")
	inbox := declared("reply_forged", "_INBOX.someone.else")
	wildcard := declared("everything", "ledger.>")
	catalogue := []*runtime.EventType{paid, api, inbox, wildcard}

	pool := testkit.MigratedSchema(t)
	pub := func(et *runtime.EventType, payload any) int64 {
		p, err := runtime.Publish(t.Context(), pool, et, payload)
		if err != nil {
			t.Fatal(err)
		}
		return p.ID
	}
	orderKey := "o-1"
	o1 := pub(paid, map[string]string{"order": "o-1"})
	forgedDeclared := relaytest.Forge(t, pool, "order_paid", 1, "$JS.API.STREAM.DELETE.LEDGER", &orderKey, `{"order":"o-1"}`)
	forgedUndeclared := relaytest.Forge(t, pool, "stream_deleted", 1, "$JS.API.STREAM.DELETE.LEDGER", nil, `{}`)
	o2 := pub(paid, map[string]string{"order": "o-1"})
	viaAPI := pub(api, map[string]string{})
	viaInbox := pub(inbox, map[string]string{})
	viaWildcard := pub(wildcard, map[string]string{})
	o3 := pub(paid, map[string]string{"order": "o-1"})

	sink, err := jobcnats.Connect(srv.URL, jobcnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	r, err := relay.New(pool, relay.Config{Sink: sink, Events: catalogue, Logger: testkit.Config().Logger})
	if err != nil {
		t.Fatal(err)
	}
	if res := relaytest.Drain(t, pool, r, 10); res.Published != 3 || res.Failed != 5 {
		t.Errorf("batches %+v, want 3 published and 5 failed", res)
	}

	if _, err := js.Stream(t.Context(), "LEDGER"); err != nil {
		t.Fatalf("the LEDGER stream after the relay ran: %v", err)
	}
	relaytest.CheckFailed(t, pool, map[int64]string{
		forgedDeclared:   `subject "$JS.API.STREAM.DELETE.LEDGER" is not the declared subject "shop.order_paid" of event order_paid`,
		forgedUndeclared: `undeclared event "stream_deleted"`,
		viaAPI:           `refused subject "$JS.API.STREAM.DELETE.LEDGER": subjects starting with $ are the server's API`,
		viaInbox:         `refused subject "_INBOX.someone.else": _INBOX subjects carry the replies`,
		viaWildcard:      `refused subject "ledger.>": a wildcard`,
	})
	got, err := readStream(t.Context(), events)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, d := range got {
		ids = append(ids, d.ID)
	}
	if want := []int64{o1, o2, o3}; !slices.Equal(ids, want) {
		t.Errorf("the SHOP stream holds %v, want the declared events %v in order", ids, want)
	}
	if info, err := js.Stream(t.Context(), "LEDGER"); err != nil {
		t.Error(err)
	} else if n := info.CachedInfo().State.Msgs; n != 0 {
		t.Errorf("the LEDGER stream holds %d messages, want none", n)
	}
}

// TestCheckSubject: the subjects the sink refuses whatever the spec says, and some it
// publishes to.
func TestCheckSubject(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"shop.order_paid", "a", "orders.v2.paid-late", "Ünïcode.ok", "a$b", "x._INBOX"} {
		if err := jobcnats.CheckSubject(ok); err != nil {
			t.Errorf("CheckSubject(%q) = %v, want nil", ok, err)
		}
	}
	for subject, want := range map[string]string{
		"":                             "empty",
		"$JS.API.STREAM.DELETE.ORDERS": "server's API",
		"$SYS.REQ.SERVER.PING":         "server's API",
		"$KV.bucket.key":               "server's API",
		"_INBOX.abc":                   "_INBOX",
		"_INBOX":                       "_INBOX",
		"orders.*":                     "wildcard",
		"orders.>":                     "wildcard",
		"a*b":                          "wildcard",
		"orders paid":                  "whitespace",
		"orders.paid\n":                "whitespace",
		"orders.\tpaid":                "whitespace",
		"orders.\u00a0paid":            "whitespace",
		"orders.\x00":                  "control",
		"orders.\xff":                  "UTF-8",
		".orders":                      "empty token",
		"orders.":                      "empty token",
		"orders..paid":                 "empty token",
		strings.Repeat("$", 1000):      "(1000 bytes)",
	} {
		err := jobcnats.CheckSubject(subject)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckSubject(%q) = %v, want an error with %q", subject, err, want)
		}
	}
}
