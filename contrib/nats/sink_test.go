package jobcnats_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	jobcnats "github.com/jobc-dev/jobc/contrib/nats"
	"github.com/jobc-dev/jobc/internal/brokertest"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/internal/relaytest"
	"github.com/jobc-dev/jobc/internal/testkit"
	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/relay"
)

// newStream connects to url and creates a file-backed stream of the test's own that
// binds prefix.>, with a two-minute duplicate window.
func newStream(t testing.TB, url, prefix string) (*nats.Conn, jetstream.Stream) {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.RetryOnFailedConnect(true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.CreateStream(t.Context(), jetstream.StreamConfig{
		Name: strings.ToUpper(prefix), Subjects: []string{prefix + ".>"},
		Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute,
	})
	if err != nil {
		t.Fatalf("create stream for %s.>: %v", prefix, err)
	}
	return nc, stream
}

// readStream returns every message of the stream, oldest first.
func readStream(ctx context.Context, stream jetstream.Stream) ([]relaytest.Delivery, error) {
	info, err := stream.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("stream info: %w", err)
	}
	n := int(info.State.Msgs)
	c, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return nil, fmt.Errorf("ordered consumer: %w", err)
	}
	out := make([]relaytest.Delivery, 0, n)
	for len(out) < n {
		batch, err := c.Fetch(min(n-len(out), 1000), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return out, fmt.Errorf("fetch after %d of %d messages: %w", len(out), n, err)
		}
		got := 0
		for m := range batch.Messages() {
			got++
			id, err := strconv.ParseInt(m.Headers().Get(relay.HeaderEventID), 10, 64)
			if err != nil {
				return out, fmt.Errorf("message %q: %s header: %w", m.Subject(), relay.HeaderEventID, err)
			}
			out = append(out, relaytest.Delivery{ID: id, Body: m.Data()})
		}
		if err := batch.Error(); err != nil && got == 0 {
			return out, fmt.Errorf("fetch after %d of %d messages: %w", len(out), n, err)
		}
	}
	return out, nil
}

// TestChaosNATS: 10,000 events, a tenth in rolled-back transactions, relayed to a
// JetStream stream by a relay process that is killed with SIGKILL and replaced, with
// the server restarted in the middle: every committed event is in the stream exactly
// once, each key's in id order, and no rolled-back one.
func TestChaosNATS(t *testing.T) {
	t.Parallel()
	srv := brokertest.StartNATS(t)
	_, stream := newStream(t, srv.URL, "chaos")
	pool := testkit.MigratedSchema(t)
	relaytest.Chaos(t, pool, pgtest.SchemaConnString(t, pgtest.SchemaOf(pool)), relaytest.ChaosBroker{
		Name: "NATS JetStream", URL: srv.URL, Prefix: "chaos", ExactlyOnce: true,
		Restart: srv.Restart,
		Read: func(ctx context.Context, _ int) ([]relaytest.Delivery, error) {
			return readStream(ctx, stream)
		},
	}, relaytest.DefaultChaos())
}

// TestNATSMessage: a published event arrives with the documented headers and its
// payload as the body, and publishing it again is deduplicated by its Nats-Msg-Id.
func TestNATSMessage(t *testing.T) {
	t.Parallel()
	url := brokertest.NATSURL(t)
	prefix := fmt.Sprintf("msg%d", time.Now().UnixNano())
	_, stream := newStream(t, url, prefix)
	sink, err := jobcnats.Connect(url, jobcnats.Options{MsgIDPrefix: "db1-"})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	m := relay.Message{ID: 42, Event: "order_paid", Version: 3, Subject: prefix + ".paid", OrderingKey: "o-1", Payload: []byte(`{"order":"o-1"}`)}
	for range 2 {
		if errs := sink.Publish(t.Context(), []relay.Message{m}); errs != nil {
			t.Fatalf("publish: %v", errs)
		}
	}
	got, err := stream.GetLastMsgForSubject(t.Context(), m.Subject)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"Nats-Msg-Id": "db1-42", relay.HeaderEvent: "order_paid", relay.HeaderVersion: "3",
		relay.HeaderEventID: "42", relay.HeaderOrderingKey: "o-1", "Content-Type": "application/json"}
	for k, v := range want {
		if g := got.Header.Get(k); g != v {
			t.Errorf("header %s = %q, want %q", k, g, v)
		}
	}
	if string(got.Data) != string(m.Payload) {
		t.Errorf("body %q, want %q", got.Data, m.Payload)
	}
	info, err := stream.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 {
		t.Errorf("stream holds %d messages after publishing one event twice, want 1", info.State.Msgs)
	}
}

// TestNATSPoison: an event larger than the server's max_payload fails for good with
// the client's error, while the events beside it in the batch are published.
func TestNATSPoison(t *testing.T) {
	t.Parallel()
	const maxPayload = 4096
	srv := brokertest.StartNATS(t, "max_payload: "+strconv.Itoa(maxPayload))
	_, stream := newStream(t, srv.URL, "poison")
	pool := testkit.MigratedSchema(t)
	small := relaytest.PublishCommitted(t, pool, "poison.small", `{"n":1}`, `{"n":2}`)
	big := relaytest.PublishCommitted(t, pool, "poison.big", `{"pad":"`+strings.Repeat("x", 2*maxPayload)+`"}`)

	sink, err := jobcnats.Connect(srv.URL, jobcnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	events := []*runtime.EventType{relaytest.ProbeType("poison.small"), relaytest.ProbeType("poison.big")}
	relaytest.CheckPoison(t, pool, sink, events, small, big[0], "maximum payload exceeded")
	info, err := stream.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 2 {
		t.Errorf("stream holds %d messages, want the 2 small ones", info.State.Msgs)
	}
	stats, err := relay.ReadStats(t.Context(), pool)
	if err != nil || stats.Failed != 1 || stats.Pending != 0 {
		t.Errorf("stats %+v, %v; want 1 failed, 0 pending", stats, err)
	}
}

// TestConnectAndCheckStreams: Connect fails when no server answers, naming the URL
// without its password, rather than returning a sink that retries in the background;
// CheckStreams names a subject no stream binds and passes the ones a stream binds.
func TestConnectAndCheckStreams(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := fmt.Sprintf("127.0.0.1:%d", l.Addr().(*net.TCPAddr).Port)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	sink, err := jobcnats.Connect("nats://relay:s3cret@"+closed, jobcnats.Options{})
	if err == nil {
		sink.Close()
		t.Fatalf("Connect to %s, where nothing listens: no error", closed)
	}
	if want := "jobcnats: cannot connect to nats://relay:xxxxx@" + closed + ": "; !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Connect to %s: %v; want %q and no password", closed, err, want)
	}

	url := brokertest.NATSURL(t)
	prefix := fmt.Sprintf("check%d", time.Now().UnixNano())
	newStream(t, url, prefix)
	sink, err = jobcnats.Connect(url, jobcnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	if err := sink.CheckStreams(t.Context(), prefix+".a", prefix+".b.c"); err != nil {
		t.Errorf("CheckStreams of bound subjects: %v", err)
	}
	want := fmt.Sprintf(`jobcnats: no stream binds subject "%s-unbound.a"`, prefix)
	if err := sink.CheckStreams(t.Context(), prefix+".a", prefix+"-unbound.a"); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("CheckStreams of an unbound subject: %v; want %q", err, want)
	}
}
