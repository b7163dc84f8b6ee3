package relay

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jobc-dev/jobc/runtime"
)

// fuzzCatalogue declares one relayed event of two versions and one event that is not
// relayed.
func fuzzCatalogue(t testing.TB) catalogue {
	t.Helper()
	const v1 = `{"type":"object","additionalProperties":false,"required":["order"],"properties":{"order":{"type":"string","maxLength":8}}}`
	paid, err := runtime.NewEventType(runtime.EventType{Name: "order_paid", Subject: "shop.order_paid", Relay: true, WriteVersion: 2,
		Versions: []runtime.Version{{Number: 1, Schema: v1}, {Number: 2, Schema: v1}}})
	if err != nil {
		t.Fatal(err)
	}
	kept, err := runtime.NewEventType(runtime.EventType{Name: "order_kept", Subject: "shop.order_kept", WriteVersion: 1,
		Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := newCatalogue([]*runtime.EventType{paid, kept})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// validOrder is the oracle for fuzzCatalogue's order_paid schema, written against
// encoding/json rather than the runtime's validator: an object whose only key is
// order, a string of at most 8 code points.
func validOrder(payload []byte) bool {
	var doc map[string]any
	if err := json.Unmarshal(payload, &doc); err != nil || doc == nil {
		return false
	}
	order, ok := doc["order"].(string)
	return ok && len(doc) == 1 && utf8.RuneCountInString(order) <= 8
}

// FuzzCheck: whatever a row holds, the check never panics, accepts exactly the rows
// of the relayed event, at a declared version, on its declared subject, without the
// ordering key the event does not declare, whose payload
// the schema accepts (the oracle is encoding/json with the schema's rules written out),
// and names in its error what it quotes from the row within a bounded length.
func FuzzCheck(f *testing.F) {
	f.Add("order_paid", 2, "shop.order_paid", []byte(`{"order":"o-1"}`), false)
	f.Add("order_paid", 1, "shop.order_paid", []byte(`{"order": "o-1" }`), false)
	f.Add("order_paid", 2, "$JS.API.STREAM.DELETE.ORDERS", []byte(`{"order":"o-1"}`), false)
	f.Add("order_paid", 3, "shop.order_paid", []byte(`{"order":"o-1"}`), false)
	f.Add("order_paid", 0, "shop.order_paid", []byte(`{"order":"o-1"}`), false)
	f.Add("order_paid", 2, "shop.order_paid", []byte(`{"order":"o-123456789"}`), false)
	f.Add("order_paid", 2, "shop.order_paid", []byte(`{"order":"ééééééééé"}`), false)
	f.Add("order_paid", 2, "shop.order_paid", []byte(`{"order":1}`), false)
	f.Add("order_paid", 2, "shop.order_paid", []byte(`{"order":"a","order":"b"}`), false)
	f.Add("order_paid", 2, "shop.order_paid", []byte(`{"order":"a","x":[[[]]]}`), false)
	f.Add("order_paid", 2, "shop.order_paid", []byte(`[]`), false)
	f.Add("order_kept", 1, "shop.order_kept", []byte(`{}`), false)
	f.Add("salary_paid\n", 1, "payroll", []byte(`{}`), false)
	f.Add("order_paid", 2, "shop.order_paid", []byte(`{"order":"o","a\nb":1}`), false)
	c := fuzzCatalogue(f)
	f.Add("order_paid", 2, "shop.order_paid", []byte(`{"order":"o-1"}`), true)
	f.Fuzz(func(t *testing.T, event string, version int, subject string, payload []byte, keyed bool) {
		// Rows come from jsonb: valid UTF-8, and no escape PostgreSQL would not keep
		// (it rejects \u0000 and turns the others into the characters they stand for).
		if !utf8.Valid(payload) || bytes.Contains(payload, []byte(`\u`)) {
			return
		}
		m := &Message{ID: 1, Event: event, Version: version, Subject: subject, Payload: payload}
		err := c.check(m, keyed)
		want := event == "order_paid" && (version == 1 || version == 2) && subject == "shop.order_paid" && !keyed && validOrder(payload)
		if (err == nil) != want {
			t.Fatalf("check(%q v%d %q keyed %v %q) = %v, want accepted: %v", event, version, subject, keyed, payload, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("check(%q v%d %q %q): error %q holds a raw newline", event, version, subject, payload, err)
		}
		if err != nil && (strings.HasPrefix(err.Error(), "undeclared") || strings.HasPrefix(err.Error(), "subject")) && len(err.Error()) > 4*maxQuoted+200 {
			t.Fatalf("check: error of %d bytes: %.300s", len(err.Error()), err)
		}
	})
}

// TestCheckOneLine: a schema problem at a key holding control characters is reported
// with them escaped, so that the event's last error stays one line.
func TestCheckOneLine(t *testing.T) {
	t.Parallel()
	counts, err := runtime.NewEventType(runtime.EventType{Name: "counted", Subject: "counts", Relay: true, WriteVersion: 1,
		Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object","additionalProperties":{"type":"integer"}}`}}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := newCatalogue([]*runtime.EventType{counts})
	if err != nil {
		t.Fatal(err)
	}
	err = c.check(&Message{Event: "counted", Version: 1, Subject: "counts", Payload: []byte(`{"a\nb\u0007":"x"}`)}, false)
	if err == nil || strings.ContainsFunc(err.Error(), func(r rune) bool { return r < 0x20 }) || !strings.Contains(err.Error(), `/a\nb\a: `) {
		t.Errorf("check: %q, want the problem at /a\\nb\\a, escaped", err)
	}
}

// BenchmarkCheck: what the relay's check costs per row, for a payload of the relay
// benchmark's size and for a large one, against validating by decoding the payload
// first (JobType.Validate, what EventType.Validate did before it read valid payloads
// in place).
func BenchmarkCheck(b *testing.B) {
	const schemaText = `{"type":"object","required":["key","n"],"properties":{"key":{"type":"string"},"n":{"type":"integer"},` +
		`"note":{"type":"string"},"total_cents":{"type":"integer","minimum":0},"lines":{"type":"array","items":{"type":"object",` +
		`"properties":{"sku":{"type":"string"},"qty":{"type":"integer"}}}}}}`
	et, err := runtime.NewEventType(runtime.EventType{Name: "bench_event", Subject: "bench.happened", Relay: true, WriteVersion: 1,
		Versions: []runtime.Version{{Number: 1, Schema: schemaText}}})
	if err != nil {
		b.Fatal(err)
	}
	jt, err := runtime.NewJobType(runtime.JobType{Kind: "bench_event", Queue: "-", MaxAttempts: 1, WriteVersion: 1,
		Versions: []runtime.Version{{Number: 1, Schema: schemaText}}})
	if err != nil {
		b.Fatal(err)
	}
	c, err := newCatalogue([]*runtime.EventType{et})
	if err != nil {
		b.Fatal(err)
	}
	small := []byte(`{"key": "customer-42", "n": 42, "note": "a payload of a realistic size, for a fair count", "total_cents": 294}`)
	var large bytes.Buffer
	large.WriteString(`{"key": "customer-42", "n": 42, "lines": [`)
	for i := range 20_000 {
		if i > 0 {
			large.WriteString(", ")
		}
		large.WriteString(`{"sku": "sku-000000000000", "qty": 3}`)
	}
	large.WriteString(`]}`)
	for _, p := range []struct {
		name    string
		payload []byte
	}{{"small", small}, {"large", large.Bytes()}} {
		m := &Message{Event: "bench_event", Version: 1, Subject: "bench.happened", Payload: p.payload}
		b.Run(p.name+"/check", func(b *testing.B) {
			b.SetBytes(int64(len(p.payload)))
			b.ReportAllocs()
			for b.Loop() {
				if err := c.check(m, false); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(p.name+"/decode", func(b *testing.B) {
			b.SetBytes(int64(len(p.payload)))
			b.ReportAllocs()
			for b.Loop() {
				if err := jt.Validate(1, p.payload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
