package relaytest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/internal/testkit"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/relay"
)

// Payload is the payload of the chaos events: which business transaction wrote it
// (Tx), its place in it (I) and its ordering key.
type Payload struct {
	Tx  int    `json:"tx"`
	I   int    `json:"i"`
	Key string `json:"key"`
}

// ChaosEventType is the test events' type: relayed, ordered by Payload.Key, published
// to prefix.happened.
func ChaosEventType(prefix string) *runtime.EventType {
	return runtime.MustEventType(runtime.EventType{
		Name: "chaos_happened", Subject: prefix + ".happened", OrderingKey: []string{"key"}, Relay: true, WriteVersion: 1,
		Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object","required":["tx","i","key"],
			"properties":{"tx":{"type":"integer"},"i":{"type":"integer"},"key":{"type":"string"}}}`}},
	})
}

// ProbeType is the unordered event of subject that PublishCommitted publishes: any
// object is its payload, and its name is the subject's, dots made underscores.
func ProbeType(subject string) *runtime.EventType {
	return runtime.MustEventType(runtime.EventType{Name: "probe_" + strings.ReplaceAll(subject, ".", "_"), Subject: subject,
		Relay: true, WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}}})
}

// PublishCommitted publishes one ProbeType(subject) event per payload, in one
// transaction, and returns their ids.
func PublishCommitted(t testing.TB, pool *pgxpool.Pool, subject string, payloads ...string) []int64 {
	t.Helper()
	et := ProbeType(subject)
	raws := make([]json.RawMessage, len(payloads))
	for i, p := range payloads {
		raws[i] = json.RawMessage(p)
	}
	published, err := runtime.PublishMany(t.Context(), pool, et, raws)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, len(published))
	for i, p := range published {
		ids[i] = p.ID
	}
	return ids
}

// EventState returns the outbox row of id: its state, attempts and last error.
func EventState(t testing.TB, pool *pgxpool.Pool, id int64) (state string, attempts int, lastError string) {
	t.Helper()
	var le *string
	if err := pool.QueryRow(t.Context(), `SELECT state, attempts, last_error FROM jobc_events WHERE id = $1`, id).Scan(&state, &attempts, &le); err != nil {
		t.Fatalf("event %d: %v", id, err)
	}
	if le != nil {
		lastError = *le
	}
	return state, attempts, lastError
}

// OutboxCounts describes the outbox by state, for failure messages.
func OutboxCounts(ctx context.Context, pool *pgxpool.Pool) string {
	rows, err := pool.Query(ctx, `SELECT state, count(*), count(*) FILTER (WHERE lease_token IS NOT NULL), max(attempts) FROM jobc_events GROUP BY state ORDER BY state`)
	if err != nil {
		return "outbox: " + err.Error()
	}
	defer rows.Close()
	out := "outbox:"
	for rows.Next() {
		var state string
		var n, leased, attempts int
		if err := rows.Scan(&state, &n, &leased, &attempts); err != nil {
			return out + " " + err.Error()
		}
		out += fmt.Sprintf(" %s=%d (leased %d, max attempts %d)", state, n, leased, attempts)
	}
	if s, err := relay.ReadStats(ctx, pool); err == nil {
		out += fmt.Sprintf("; lag %s", s.Lag)
	}
	return out
}

// Delivery is one message a broker delivered: its Jobc-Event-Id header and body.
type Delivery struct {
	ID   int64
	Body []byte
}

// decode parses a delivery's body.
func (d Delivery) decode() (Payload, error) {
	var p Payload
	if err := json.Unmarshal(d.Body, &p); err != nil {
		return p, fmt.Errorf("event %d: body %q: %w", d.ID, d.Body, err)
	}
	return p, nil
}

// CheckPoison runs one relay batch, declaring events, through sink over the pending
// events of pool (the ids in ok and the one poisoned id) and checks what a poisoned
// event comes to: the others are published, it fails for good after one attempt with
// an error containing wantErr, and relay.ListFailed shows it.
func CheckPoison(t testing.TB, pool *pgxpool.Pool, sink relay.Sink, events []*runtime.EventType, ok []int64, poisoned int64, wantErr string) {
	t.Helper()
	r, err := relay.New(pool, relay.Config{Sink: sink, Events: events, Logger: testkit.Config().Logger})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.RunOnce(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := (relay.BatchResult{Claimed: len(ok) + 1, Published: len(ok), Failed: 1}); res != want {
		t.Errorf("batch %+v, want %+v", res, want)
	}
	state, attempts, lastErr := EventState(t, pool, poisoned)
	if state != "failed" || attempts != 1 || !strings.Contains(lastErr, wantErr) {
		t.Errorf("poisoned event %d: state %s, attempts %d, error %q; want failed after 1 attempt with %q", poisoned, state, attempts, lastErr, wantErr)
	}
	for _, id := range ok {
		if state, _, _ := EventState(t, pool, id); state != "published" {
			t.Errorf("event %d: state %s, want published", id, state)
		}
	}
	failed, err := relay.ListFailed(t.Context(), pool, 10)
	if err != nil || len(failed) != 1 || failed[0].ID != poisoned {
		t.Errorf("ListFailed: %+v, %v; want the poisoned event %d", failed, err, poisoned)
	}
}

// Forge writes an outbox row with a plain INSERT, as any role that may insert into
// jobc_events can, around Publish and its checks; key nil writes an unordered row.
func Forge(t testing.TB, pool *pgxpool.Pool, event string, version int, subject string, key *string, payload string) int64 {
	t.Helper()
	var id int64
	err := pool.QueryRow(t.Context(), `INSERT INTO jobc_events (event, version, subject, ordering_key, payload)
		VALUES ($1, $2, $3, $4, $5::jsonb) RETURNING id`, event, version, subject, key, payload).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// Drain runs r's batches until one claims nothing, failing the test on an error or
// when maxBatches do not drain the outbox, and returns their sum.
func Drain(t testing.TB, pool *pgxpool.Pool, r *relay.Relay, maxBatches int) relay.BatchResult {
	t.Helper()
	var sum relay.BatchResult
	for range maxBatches {
		res, err := r.RunOnce(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if res.Claimed == 0 {
			return sum
		}
		sum.Claimed += res.Claimed
		sum.Published += res.Published
		sum.Retried += res.Retried
		sum.Failed += res.Failed
		sum.Lost += res.Lost
	}
	t.Fatalf("%d batches did not drain the outbox: %+v; %s", maxBatches, sum, OutboxCounts(t.Context(), pool))
	return sum
}

// CheckFailed checks that each event of reasons failed with an error containing its
// reason, and that relay.ListFailed lists exactly them.
func CheckFailed(t testing.TB, pool *pgxpool.Pool, reasons map[int64]string) {
	t.Helper()
	for id, want := range reasons {
		if state, _, lastErr := EventState(t, pool, id); state != "failed" || !strings.Contains(lastErr, want) {
			t.Errorf("event %d: %s with error %q; want failed with %q", id, state, lastErr, want)
		}
	}
	failed, err := relay.ListFailed(t.Context(), pool, len(reasons)+10)
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) != len(reasons) {
		t.Errorf("ListFailed: %+v; want the %d events %v", failed, len(reasons), reasons)
	}
}
