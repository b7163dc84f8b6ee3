package relay_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/testkit"
	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/relay"
)

// forge writes an outbox row with a plain INSERT, as any role that may insert into
// jobc_events can, bypassing Publish and its checks; key nil: unordered.
func forge(t *testing.T, pool *pgxpool.Pool, event string, version int, subject string, key *string, payload string) int64 {
	t.Helper()
	var id int64
	err := pool.QueryRow(t.Context(), `INSERT INTO jobc_events (event, version, subject, ordering_key, payload)
		VALUES ($1, $2, $3, $4, $5::jsonb) RETURNING id`, event, version, subject, key, payload).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// keptType is an event that is not relayed: only its subscribers see it.
func keptType(t *testing.T) *runtime.EventType {
	t.Helper()
	et, err := runtime.NewEventType(runtime.EventType{Name: "thing_kept", Subject: "things.kept",
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}}})
	if err != nil {
		t.Fatal(err)
	}
	return et
}

// drain runs batches until one claims nothing and returns their sum.
func drain(t *testing.T, r *relay.Relay) relay.BatchResult {
	t.Helper()
	var sum relay.BatchResult
	for range 20 {
		res := runOnce(t, r)
		if res.Claimed == 0 {
			return sum
		}
		sum.Claimed += res.Claimed
		sum.Published += res.Published
		sum.Retried += res.Retried
		sum.Failed += res.Failed
		sum.Lost += res.Lost
	}
	t.Fatalf("the outbox did not drain in 20 batches: %+v", sum)
	return sum
}

// sent returns the ids of every message the sink was given, in order.
func (s *recordSink) sent() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int64
	for _, b := range s.batches {
		for _, m := range b {
			out = append(out, m.ID)
		}
	}
	return out
}

// TestRefusesUndeclared: rows written around Publish (a plain INSERT) that name an
// undeclared event, an event that is not relayed, an undeclared version, another
// subject than their event's (a JetStream API subject) or a payload their version's
// schema rejects never reach the sink: each fails with the reason, ListFailed shows
// them, and the declared events around them are published, each key's in order. Sent
// again with RetryFailed, they fail again without reaching the sink, until the spec
// the relay runs with declares them.
func TestRefusesUndeclared(t *testing.T) {
	t.Parallel()
	pool := testkit.MigratedSchema(t)
	moved, noted := orderedType(t), unorderedType(t)
	events := []*runtime.EventType{moved, noted, keptType(t)}
	key := func(s string) *string { return &s }

	a1 := publish(t, pool, moved, thing{Key: "a", N: 1})[0]
	undeclared := forge(t, pool, "thing_deleted", 1, "things.deleted", nil, `{}`)
	kept := forge(t, pool, "thing_kept", 1, "things.kept", nil, `{}`)
	apiSubject := forge(t, pool, "thing_noted", 1, "$JS.API.STREAM.DELETE.THINGS", nil, `{}`)
	badPayload := forge(t, pool, "thing_moved", 1, "things.moved", key("a"), `{"key":"a","n":"one"}`)
	newer := forge(t, pool, "thing_moved", 2, "things.moved", key("b"), `{"key":"b","n":1}`)
	long := forge(t, pool, "x\n"+strings.Repeat("y", 1000), 1, "things.noted", nil, `{}`)
	unkeyed := forge(t, pool, "thing_moved", 1, "things.moved", nil, `{"key":"a","n":1}`)
	keyedNoted := forge(t, pool, "thing_noted", 1, "things.noted", key("z"), `{}`)
	n2 := publish(t, pool, noted, thing{N: 2})[0]
	a2 := publish(t, pool, moved, thing{Key: "a", N: 2})[0]
	empty, err := runtime.Publish(t.Context(), pool, moved, map[string]any{"key": "", "n": 3}) // a key, though ""
	if err != nil {
		t.Fatal(err)
	}

	sink := &recordSink{}
	r := newRelay(t, pool, relay.Config{Sink: sink, Events: events})
	if res := drain(t, r); res.Published != 4 || res.Failed != 8 || res.Retried != 0 {
		t.Errorf("batches %+v, want 4 published and 8 failed", res)
	}
	declared := []int64{a1, n2, empty.ID, a2}
	if got := sink.sent(); !slices.Equal(got, declared) {
		t.Errorf("the sink was given %v, want only the declared events %v", got, declared)
	}
	for _, id := range declared {
		if got := readRow(t, pool, id); got.State != "published" {
			t.Errorf("declared event %d: %+v, want published", id, got)
		}
	}
	reasons := map[int64]string{
		undeclared: `undeclared event "thing_deleted"`,
		kept:       "event thing_kept is not relayed",
		apiSubject: `subject "$JS.API.STREAM.DELETE.THINGS" is not the declared subject "things.noted" of event thing_noted`,
		badPayload: "payload invalid for thing_moved v1: /n: ",
		newer:      "version 2 of event thing_moved is not declared (the spec declares 1..1); if a newer spec declares it",
		long:       `undeclared event "x\nyyy`,
		unkeyed:    "no ordering key on event thing_moved, which declares one (key)",
		keyedNoted: `ordering key "z" on event thing_noted, which declares none`,
	}
	checkFailed := func(when string) {
		t.Helper()
		for id, want := range reasons {
			if got := readRow(t, pool, id); got.State != "failed" || got.Leased || !strings.Contains(got.LastError, want) {
				t.Errorf("%s: forged event %d: %+v; want failed with %q", when, id, got, want)
			}
		}
		failed, err := relay.ListFailed(t.Context(), pool, 10)
		if err != nil || len(failed) != len(reasons) {
			t.Fatalf("%s: ListFailed: %+v, %v; want the %d forged events", when, failed, err, len(reasons))
		}
		for _, f := range failed {
			if want, ok := reasons[f.ID]; !ok || !strings.Contains(f.Error, want) {
				t.Errorf("%s: ListFailed: %+v; want the error %q", when, f, want)
			}
		}
	}
	checkFailed("after the relay ran")
	if got := readRow(t, pool, long).LastError; !strings.Contains(got, "… (1002 bytes)") || len(got) > 300 {
		t.Errorf("the long name's error %q: want it cut, saying its length", got)
	}

	// Sent again, they are refused again: the sink sees none of them.
	if n, err := relay.RetryFailed(t.Context(), pool, nil); err != nil || n != int64(len(reasons)) {
		t.Fatalf("RetryFailed: %d, %v", n, err)
	}
	if res := drain(t, r); res.Failed != len(reasons) || res.Published != 0 {
		t.Errorf("after RetryFailed: %+v, want every forged event failed again", res)
	}
	if got := sink.sent(); len(got) != len(declared) {
		t.Errorf("after RetryFailed the sink was given %v, want nothing more", got)
	}
	checkFailed("after RetryFailed")

	// Once the spec declares thing_deleted, a retry publishes it, and it alone.
	deleted, err := runtime.NewEventType(runtime.EventType{Name: "thing_deleted", Subject: "things.deleted", Relay: true,
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}}})
	if err != nil {
		t.Fatal(err)
	}
	newer2 := newRelay(t, pool, relay.Config{Sink: sink, Events: append(events, deleted)})
	if n, err := relay.RetryFailed(t.Context(), pool, []int64{undeclared, apiSubject}); err != nil || n != 2 {
		t.Fatalf("RetryFailed: %d, %v", n, err)
	}
	if res := drain(t, newer2); res != (relay.BatchResult{Claimed: 2, Published: 1, Failed: 1}) {
		t.Errorf("retry under the newer spec: %+v, want thing_deleted published and the forged subject failed", res)
	}
	if got := sink.sent(); !slices.Equal(got, append(declared, undeclared)) {
		t.Errorf("the sink was given %v, want thing_deleted (%d) once it is declared", got, undeclared)
	}
	if got := readRow(t, pool, apiSubject); got.State != "failed" {
		t.Errorf("forged subject after the retry: %+v, want failed", got)
	}
}

// TestCheckPayloads: the payload check is the schema's, with every problem named by its
// JSON pointer (at most ten, then a count), for every declared version.
func TestCheckPayloads(t *testing.T) {
	t.Parallel()
	pool := testkit.MigratedSchema(t)
	strict, err := runtime.NewEventType(runtime.EventType{Name: "order_paid", Subject: "orders.paid", Relay: true, WriteVersion: 2,
		Versions: []runtime.Version{
			{Number: 1, Schema: `{"type":"object","additionalProperties":false,"required":["id"],"properties":{"id":{"type":"string"}}}`},
			{Number: 2, Schema: `{"type":"object","additionalProperties":false,"required":["id","cents"],"properties":{"id":{"type":"string"},"cents":{"type":"integer","minimum":0},"tags":{"type":"array","items":{"type":"string"}}}}`},
		}})
	if err != nil {
		t.Fatal(err)
	}
	var many strings.Builder // twelve problems
	many.WriteString(`{"id":"o","cents":1,"tags":[0`)
	for i := range 11 {
		fmt.Fprintf(&many, `,%d`, i+1)
	}
	many.WriteString(`]}`)
	cases := []struct {
		version int
		payload string
		want    string // "" for valid
	}{
		{1, `{"id":"o-1"}`, ""},
		{2, `{"id":"o-1","cents":5}`, ""},
		{1, `{"id":"o-1","cents":5}`, "payload invalid for order_paid v1: additional properties 'cents' not allowed"},
		{2, `{"id":"o-1"}`, "payload invalid for order_paid v2: "},
		{2, `{"id":"o-1","cents":-1}`, "payload invalid for order_paid v2: /cents: "},
		{2, `{"id":"o-1","cents":1.5}`, "payload invalid for order_paid v2: /cents: "},
		{2, `[]`, "payload invalid for order_paid v2: "},
		{2, many.String(), "payload invalid for order_paid v2: /tags/0: "},
		{2, many.String(), "/tags/7: got number, want string; and 2 more"},
	}
	ids := make([]int64, len(cases))
	for i, c := range cases {
		ids[i] = forge(t, pool, "order_paid", c.version, "orders.paid", nil, c.payload)
	}
	r := newRelay(t, pool, relay.Config{Sink: &recordSink{}, Events: []*runtime.EventType{strict}})
	drain(t, r)
	for i, c := range cases {
		got := readRow(t, pool, ids[i])
		switch {
		case c.want == "" && got.State != "published":
			t.Errorf("v%d %s: %+v, want published", c.version, c.payload, got)
		case c.want != "" && (got.State != "failed" || !strings.Contains(got.LastError, c.want)):
			t.Errorf("v%d %s: %+v, want failed with %q", c.version, c.payload, got, c.want)
		}
	}
}
