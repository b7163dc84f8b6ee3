package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
	"github.com/jobc-dev/jobc/runtime"
)

// relayedType is a relayed event of the CLI's tests, ordered by "key".
func relayedType(subject string) *runtime.EventType {
	return runtime.MustEventType(runtime.EventType{Name: "cli_event", Subject: subject, OrderingKey: []string{"key"}, Relay: true,
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object","properties":{"key":{"type":"string"}}}`}}})
}

// TestStatusShowsOutbox: status shows the relay lag and the failed events with their
// errors, and --fail-relay-lag fails on the lag. (`jobc relay failed` and `jobc relay
// retry` are jobc-relay's, tested there.)
func TestStatusShowsOutbox(t *testing.T) {
	pool, dbURL := migratedDB(t)
	et := relayedType("status.happened")
	var ids []int64
	for _, key := range []string{"a", "b", "c"} {
		p, err := runtime.Publish(t.Context(), pool, et, map[string]string{"key": key})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	if _, err := pool.Exec(t.Context(), `UPDATE jobc_events SET created_at = now() - interval '10 minutes' WHERE id = $1`, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(t.Context(), `UPDATE jobc_events SET state = 'failed', attempts = 1, last_error = 'returned: 312 NO_ROUTE' WHERE id = $1`, ids[2]); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := jobc(t, "status", "--database-url", dbURL, "--fail-relay-lag", "5m")
	if code != cli.ExitFailure || !strings.Contains(out, "events: 2 pending, relay lag 10m") || !strings.Contains(out, "1 failed") ||
		!strings.Contains(out, "NO_ROUTE") || !strings.Contains(errOut, "the relay lag is 10m") {
		t.Errorf("status: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = jobc(t, "status", "--database-url", dbURL, "--json")
	var s statusJSON
	if err := json.Unmarshal([]byte(out), &s); code != cli.ExitOK || err != nil {
		t.Fatalf("status --json: exit %d, %v\n%s", code, err, out)
	}
	if e := s.Events; e.Pending != 2 || e.Failed != 1 || e.RelayLagSeconds < 600 || len(e.FailedEvents) != 1 || e.FailedEvents[0].ID != ids[2] || e.FailedEvents[0].OrderingKey != "c" {
		t.Errorf("status --json events: %+v", e)
	}
}

// TestStatusShowsRetryingEvents: an event whose publication failed and that waits for
// its next attempt is shown with its error, when it goes again and how many events of
// its key wait behind it, the answer to "why is the relay lag growing?".
func TestStatusShowsRetryingEvents(t *testing.T) {
	pool, dbURL := migratedDB(t)
	et := relayedType("retrying.happened")
	var ids []int64
	for _, key := range []string{"a", "b", "b", "b"} {
		p, err := runtime.Publish(t.Context(), pool, et, map[string]string{"key": key})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	// What a relay's RetryEvents leaves: the attempt counted, the error, the next
	// attempt after a backoff, no lease.
	if _, err := pool.Exec(t.Context(), `UPDATE jobc_events SET attempts = 3, available_at = now() + interval '10 minutes',
		last_error = 'nats: no responders available for request' WHERE id = $1`, ids[1]); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := jobc(t, "status", "--database-url", dbURL)
	line := ""
	for l := range strings.Lines(out) {
		if strings.Contains(l, "no responders") {
			line = l
		}
	}
	f := strings.Fields(line)
	if code != cli.ExitOK || !strings.Contains(out, "waiting to be sent again") || len(f) < 7 || f[0] != strconv.FormatInt(ids[1], 10) ||
		!strings.HasPrefix(f[4], "9m") && !strings.HasPrefix(f[4], "10m") || f[5] != "2" {
		t.Errorf("status: exit %d, want event %d retrying with 2 behind it in 10m\n%s%s", code, ids[1], out, errOut)
	}
	out, _, code = jobc(t, "status", "--database-url", dbURL, "--json")
	var s statusJSON
	if err := json.Unmarshal([]byte(out), &s); code != cli.ExitOK || err != nil {
		t.Fatalf("status --json: exit %d, %v\n%s", code, err, out)
	}
	if r := s.Events.RetryingEvents; len(r) != 1 || r[0].ID != ids[1] || r[0].OrderingKey != "b" || r[0].Attempts != 3 ||
		r[0].Behind != 2 || r[0].BehindAtLeast || !strings.Contains(r[0].Error, "no responders") || time.Until(r[0].NextAttemptAt) < 9*time.Minute {
		t.Errorf("status --json retrying_events: %+v", r)
	}
}
