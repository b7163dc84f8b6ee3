package relaytest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime/relay"
)

// Payload is the payload of the test's events: which business transaction wrote it
// (Tx), its place in it (I) and its ordering key.
type Payload struct {
	Tx  int    `json:"tx"`
	I   int    `json:"i"`
	Key string `json:"key"`
}

// ChaosEvent is the test events' name; their subject is Subject(prefix, key).
const ChaosEvent = "chaos_happened"

// Subject is a test event's subject: prefix + "." + key.
func Subject(prefix, key string) string { return prefix + "." + key }

// Insert writes one outbox row in tx as Publish does, with the ordering key's advisory
// lock taken first, and returns its id. (The sinks' tests write the rows themselves so
// that they depend on nothing but the outbox table, the relay's input.)
func Insert(ctx context.Context, tx pgx.Tx, event, subject, key string, payload []byte) (int64, error) {
	var k *string
	if key != "" {
		k = &key
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('jobc_events'), hashtext($1 || '/' || $2))`, event, key); err != nil {
			return 0, fmt.Errorf("lock ordering key %q: %w", key, err)
		}
	}
	var id int64
	err := tx.QueryRow(ctx, `INSERT INTO jobc_events (event, version, subject, ordering_key, payload)
		VALUES ($1, 1, $2, $3, $4) RETURNING id`, event, subject, k, payload).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("insert event %s: %w", event, err)
	}
	return id, nil
}

// InsertCommitted writes n unordered events of subject and size bytes of payload each in
// one transaction and returns their ids.
func InsertCommitted(t testing.TB, pool *pgxpool.Pool, subject string, keys []string, payload []byte) []int64 {
	t.Helper()
	ctx := t.Context()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit, a no-op
	ids := make([]int64, len(keys))
	for i, key := range keys {
		if ids[i], err = Insert(ctx, tx, ChaosEvent, subject, key, payload); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
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
