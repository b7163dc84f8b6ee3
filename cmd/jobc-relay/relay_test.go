package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
	"github.com/jobc-dev/jobc/cmd/internal/clitest"
	"github.com/jobc-dev/jobc/internal/brokertest"
	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/relay"
)

// relayedType is a relayed event of the CLI's tests, ordered by "key".
func relayedType(subject string) *runtime.EventType {
	return runtime.MustEventType(runtime.EventType{Name: "cli_event", Subject: subject, OrderingKey: []string{"key"}, Relay: true,
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object","properties":{"key":{"type":"string"}}}`}}})
}

// relaySpec writes a project whose jobc.yaml declares relayedType(subject) and returns
// its directory, for jobc relay's -C.
func relaySpec(t *testing.T, subject string) string {
	t.Helper()
	dir := t.TempDir()
	yaml := `version: 1
package: jobs
out: jobs
events:
  cli_event:
    subject: ` + subject + `
    key: [key]
    relay: true
    payload:
      versions:
        1:
          schema:
            type: object
            required: [key]
            properties:
              key: {type: string}
`
	clitest.WriteFile(t, filepath.Join(dir, "jobc.yaml"), yaml)
	return dir
}

// TestRelayUsage: a relay without --to, or with a broker jobc does not know, is a
// usage error (exit 2) that names the problem.
func TestRelayUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"relay"}, "--to is required"},
		{[]string{"relay", "--to", "redis://127.0.0.1:6379"}, `unknown scheme "redis"`},
		{[]string{"relay", "--to", "kafka://host:9092/topic"}, "want kafka://host:port"},
		{[]string{"relay", "--to", "nats://127.0.0.1:4222", "--batch", "0"}, "must be positive"},
		{[]string{"relay", "retry"}, "name event ids or pass --all"},
		{[]string{"relay", "retry", "x1"}, `"x1" is not an event id`},
	} {
		_, errOut, code := jobc(t, c.args...)
		if code != cli.ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("jobc %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(c.args, " "), code, errOut, c.want)
		}
	}
}

// closedPort returns a loopback port on which nothing listens: one the kernel gave a
// listener that is closed again.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}

// TestRelayFailsAtStart: a relay whose broker does not answer, or whose JetStream
// has no stream for a relayed subject, exits 1 before it starts publishing, saying
// so (and hiding the URL's password), instead of retrying every batch forever.
func TestRelayFailsAtStart(t *testing.T) {
	_, dbURL := clitest.MigratedDB(t)
	dir := relaySpec(t, "cli.nostream")
	srv := brokertest.StartNATS(t) // JetStream without any stream
	port := closedPort(t)
	for _, c := range []struct{ to, want string }{
		{fmt.Sprintf("nats://127.0.0.1:%d", port), fmt.Sprintf("jobc relay: jobcnats: cannot connect to nats://127.0.0.1:%d: ", port)},
		{fmt.Sprintf("nats://relay:s3cret@127.0.0.1:%d", port), fmt.Sprintf("cannot connect to nats://relay:xxxxx@127.0.0.1:%d: ", port)},
		{fmt.Sprintf("amqp://relay:s3cret@127.0.0.1:%d/", port), fmt.Sprintf("jobc relay: jobcamqp: cannot connect to amqp://relay:xxxxx@127.0.0.1:%d/: ", port)},
		{srv.URL, `jobc relay: jobcnats: no stream binds subject "cli.nostream"`},
	} {
		_, errOut, code := jobc(t, "relay", "-C", dir, "--to", c.to, "--database-url", dbURL)
		if code != cli.ExitFailure || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "publishing") || strings.Contains(errOut, "s3cret") {
			t.Errorf("jobc relay --to %s: exit %d, stderr:\n%s\nwant exit 1 with %q before publishing, no password", c.to, code, errOut, c.want)
		}
	}
}

// TestRelayToNATS: `jobc relay --to nats://…` publishes the outbox to JetStream and,
// when its context ends (SIGINT, SIGTERM), stops and exits 0; status then shows no
// pending event and no lag.
func TestRelayToNATS(t *testing.T) {
	pool, dbURL := clitest.MigratedDB(t)
	srv := brokertest.StartNATS(t)
	nc, err := nats.Connect(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "CLI", Subjects: []string{"cli.>"}})
	if err != nil {
		t.Fatal(err)
	}
	et := relayedType("cli.happened")
	const events = 50
	for i := range events {
		if _, err := runtime.Publish(t.Context(), pool, et, map[string]string{"key": fmt.Sprintf("k%d", i%5)}); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := relay.ReadStats(t.Context(), pool); err != nil || st.Pending != events {
		t.Errorf("before the relay runs: %+v, %v; want %d pending", st, err, events)
	}

	ctx, cancel := context.WithCancel(t.Context())
	var stdout, stderr bytes.Buffer
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"relay", "-C", relaySpec(t, "cli.happened"), "--to", srv.URL, "--database-url", dbURL, "--batch", "10"}, &stdout, &stderr)
	}()
	const poll = 100 * time.Millisecond // relay.Config's default PollInterval
	clitest.WaitFor(t, "the stream to hold every event", clitest.Slowdown*(poll+time.Second), func() (bool, string) {
		info, err := stream.Info(t.Context())
		if err != nil {
			return false, err.Error()
		}
		return info.State.Msgs == events, fmt.Sprintf("%d messages", info.State.Msgs)
	})
	clitest.WaitFor(t, "the outbox to have nothing pending", clitest.Slowdown*poll, func() (bool, string) {
		s, err := relay.ReadStats(t.Context(), pool)
		return err == nil && s.Pending == 0, fmt.Sprintf("%+v %v", s, err)
	})
	cancel()
	if code := <-done; code != cli.ExitOK {
		t.Fatalf("jobc relay exited %d after its context ended\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "jobc relay: stopped") {
		t.Errorf("jobc relay's log has no stop record:\n%s", stderr.String())
	}
	if st, err := relay.ReadStats(t.Context(), pool); err != nil || st.Pending != 0 || st.Failed != 0 || st.Lag != 0 {
		t.Errorf("after the relay: %+v, %v; want nothing pending or failed", st, err)
	}
}

// TestRelayFailedRetry: `jobc relay failed` lists the failed events with their errors
// and `jobc relay retry` makes them pending again, saying which ids named none.
func TestRelayFailedRetry(t *testing.T) {
	pool, dbURL := clitest.MigratedDB(t)
	if out, _, code := jobc(t, "relay", "failed", "--database-url", dbURL); code != cli.ExitOK || out != "no failed events\n" {
		t.Errorf("relay failed with none: exit %d, stdout %q", code, out)
	}
	et := relayedType("status.happened")
	var ids []int64
	for _, key := range []string{"a", "b", "c"} {
		p, err := runtime.Publish(t.Context(), pool, et, map[string]string{"key": key})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	if _, err := pool.Exec(t.Context(), `UPDATE jobc_events SET state = 'failed', attempts = 1, last_error = 'returned: 312 NO_ROUTE' WHERE id = $1`, ids[2]); err != nil {
		t.Fatal(err)
	}
	out, _, code := jobc(t, "relay", "failed", "--database-url", dbURL)
	if code != cli.ExitOK || !strings.Contains(out, "cli_event") || !strings.Contains(out, "status.happened") || !strings.Contains(out, "NO_ROUTE") {
		t.Errorf("relay failed: exit %d\n%s", code, out)
	}
	out, errOut, code := jobc(t, "relay", "retry", "--database-url", dbURL, fmt.Sprint(ids[2]), fmt.Sprint(ids[0]))
	if code != cli.ExitFailure || !strings.Contains(out, "1 failed event(s) pending again") || !strings.Contains(errOut, "1 of the 2 ids name no failed event") {
		t.Errorf("relay retry: exit %d\n%s%s", code, out, errOut)
	}
	if st, err := relay.ReadStats(t.Context(), pool); err != nil || st.Pending != 3 || st.Failed != 0 {
		t.Errorf("after relay retry: %+v, %v; want 3 pending", st, err)
	}
}

// TestRelayRefusesForged: `jobc relay` learns the declared events from jobc.yaml (-C):
// a row written around Publish with a JetStream API subject, as the producer role can
// with a plain INSERT, is never sent (the stream it names survives); it is failed with
// the reason, which `jobc relay failed` and `jobc status` show, while the declared
// events around it are published. Without a spec, or with one that relays no event,
// the relay does not start.
func TestRelayRefusesForged(t *testing.T) {
	pool, dbURL := clitest.MigratedDB(t)
	srv := brokertest.StartNATS(t)
	nc, err := nats.Connect(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "FORGED", Subjects: []string{"forged.>"}})
	if err != nil {
		t.Fatal(err)
	}
	et := relayedType("forged.happened")
	before, err := runtime.Publish(t.Context(), pool, et, map[string]string{"key": "k"})
	if err != nil {
		t.Fatal(err)
	}
	var forged int64
	err = pool.QueryRow(t.Context(), `INSERT INTO jobc_events (event, version, subject, payload)
		VALUES ('cli_event', 1, '$JS.API.STREAM.DELETE.FORGED', '{}') RETURNING id`).Scan(&forged)
	if err != nil {
		t.Fatal(err)
	}
	after, err := runtime.Publish(t.Context(), pool, et, map[string]string{"key": "k"})
	if err != nil {
		t.Fatal(err)
	}

	empty := t.TempDir()
	if _, errOut, code := jobc(t, "relay", "-C", empty, "--to", srv.URL, "--database-url", dbURL); code != cli.ExitFailure || !strings.Contains(errOut, "no jobc.yaml") {
		t.Errorf("relay without a spec: exit %d, %s", code, errOut)
	}
	unrelayed := t.TempDir()
	clitest.WriteFile(t, filepath.Join(unrelayed, "jobc.yaml"), "version: 1\npackage: jobs\nout: jobs\njobs:\n  j:\n    payload:\n      versions:\n        1: {schema: {type: object}}\n"+
		"events:\n  e:\n    subject: e.happened\n    subscribers: [j]\n    payload:\n      versions:\n        1: {schema: {type: object}}\n")
	if _, errOut, code := jobc(t, "relay", "-C", unrelayed, "--to", srv.URL, "--database-url", dbURL); code != cli.ExitFailure || !strings.Contains(errOut, "declares no relayed event") {
		t.Errorf("relay with a spec that relays nothing: exit %d, %s", code, errOut)
	}

	ctx, cancel := context.WithCancel(t.Context())
	var stdout, stderr bytes.Buffer
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"relay", "-C", relaySpec(t, "forged.happened"), "--to", srv.URL, "--database-url", dbURL}, &stdout, &stderr)
	}()
	const poll = 100 * time.Millisecond // relay.Config's default PollInterval
	clitest.WaitFor(t, "the outbox to have nothing pending", clitest.Slowdown*(poll+time.Second), func() (bool, string) {
		s, err := relay.ReadStats(t.Context(), pool)
		return err == nil && s.Pending == 0, fmt.Sprintf("%+v %v", s, err)
	})
	cancel()
	if code := <-done; code != cli.ExitOK {
		t.Fatalf("jobc relay exited %d\n%s", code, stderr.String())
	}
	info, err := stream.Info(t.Context())
	if err != nil {
		t.Fatalf("the stream after the relay ran: %v", err)
	}
	if info.State.Msgs != 2 {
		t.Errorf("the stream holds %d messages, want the 2 declared events (%d, %d)", info.State.Msgs, before.ID, after.ID)
	}
	const reason = `subject "$JS.API.STREAM.DELETE.FORGED" is not the declared subject "forged.happened" of event cli_event`
	if !strings.Contains(stderr.String(), "event refused") || !strings.Contains(stderr.String(), fmt.Sprintf("event_id=%d", forged)) {
		t.Errorf("the relay's log does not name the refused event %d:\n%s", forged, stderr.String())
	}
	out, _, code := jobc(t, "relay", "failed", "--database-url", dbURL, "--json")
	var failed []cli.FailedEventJSON
	if err := json.Unmarshal([]byte(out), &failed); code != cli.ExitOK || err != nil || len(failed) != 1 || failed[0].ID != forged || failed[0].Error != reason {
		t.Errorf("relay failed --json: exit %d, %v\n%s; want event %d with %q", code, err, out, forged, reason)
	}
}

// TestRelayEventsMatchGenerated: the events jobc relay builds from jobc.yaml are the
// ones the generated code declares: for every golden case with events, each version's
// schema is the text of the generated MustEventType once compacted (the literal is
// indented for reading, and runtime.NewJobType compacts it), with the same subject, so
// a relay run from the spec and one given the generated EventTypes() check rows alike.
// (The other golden case with events, events_fanout_mapping, relays none.)
func TestRelayEventsMatchGenerated(t *testing.T) {
	schemaLit := regexp.MustCompile("(?ms)^\\s*Schema: `(.*?)`,$")
	subjectLit := regexp.MustCompile(`(?m)^\s*Subject:\s*"(.*)",$`)
	for _, c := range []struct{ dir, out string }{{"events_basic", "shop"}} {
		dir := filepath.Join("..", "..", "testdata", c.dir)
		events, err := declaredEvents(dir)
		if err != nil {
			t.Fatalf("%s: %v", c.dir, err)
		}
		for _, et := range events {
			gen, err := os.ReadFile(filepath.Join(dir, c.out, et.Name+".event.jobc.go"))
			if err != nil {
				t.Fatal(err)
			}
			var schemas []string
			for _, m := range schemaLit.FindAllStringSubmatch(string(gen), -1) {
				var b bytes.Buffer
				if err := json.Compact(&b, []byte(m[1])); err != nil {
					t.Fatalf("%s: event %s: a generated schema is not JSON: %v\n%s", c.dir, et.Name, err, m[1])
				}
				schemas = append(schemas, b.String())
			}
			var fromSpec []string
			for _, v := range et.Versions {
				fromSpec = append(fromSpec, v.Schema)
			}
			if !slices.Equal(fromSpec, schemas) {
				t.Errorf("%s: event %s: schemas from the spec\n%q\nthe generated code's\n%q", c.dir, et.Name, fromSpec, schemas)
			}
			if m := subjectLit.FindStringSubmatch(string(gen)); m == nil || m[1] != et.Subject {
				t.Errorf("%s: event %s: subject %q, the generated code's %q", c.dir, et.Name, et.Subject, m)
			}
		}
	}
}
