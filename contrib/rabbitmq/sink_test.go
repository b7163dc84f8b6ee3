package jobcamqp_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	jobcamqp "github.com/jobc-dev/jobc/contrib/rabbitmq"
	"github.com/jobc-dev/jobc/internal/brokertest"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/internal/relaytest"
	"github.com/jobc-dev/jobc/internal/testkit"
	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/relay"
)

// newQueue declares a durable topic exchange of the test's own and a durable queue
// bound to it for prefix.#, and returns the exchange's and the queue's names. The queue
// is a classic queue of version 2, whose persistent writes are about twice as fast as
// version 1's here (RabbitMQ 3.10).
func newQueue(t testing.TB, url, prefix string) (exchange, queue string) {
	t.Helper()
	return newQueueOf(t, url, prefix, classicV2)
}

// The queue types the benchmarks compare, as queue arguments.
var (
	classicV2 = amqp.Table{"x-queue-version": 2}
	quorum    = amqp.Table{"x-queue-type": "quorum"}
)

// newQueueOf is newQueue with a queue of the given arguments.
func newQueueOf(t testing.TB, url, prefix string, args amqp.Table) (exchange, queue string) {
	t.Helper()
	conn, err := amqp.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	exchange, queue = prefix+"-events", prefix+"-consumer"
	if err := ch.ExchangeDeclare(exchange, "topic", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare(queue, true, false, false, false, args); err != nil {
		t.Fatal(err)
	}
	if err := ch.QueueBind(queue, prefix+".#", exchange, false, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := amqp.Dial(url)
		if err != nil {
			return // a throwaway broker is gone already
		}
		defer conn.Close()
		if ch, err := conn.Channel(); err == nil {
			_, _ = ch.QueueDelete(queue, false, false, false)
			_ = ch.ExchangeDelete(exchange, false, false)
		}
	})
	return exchange, queue
}

// readQueue consumes every message in queue, in delivery order.
func readQueue(ctx context.Context, url, queue string) ([]relaytest.Delivery, error) {
	conn, err := amqp.Dial(url)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return nil, err
	}
	q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	if err != nil {
		return nil, fmt.Errorf("inspect queue %s: %w", queue, err)
	}
	if err := ch.Qos(1000, 0, false); err != nil {
		return nil, err
	}
	deliveries, err := ch.ConsumeWithContext(ctx, queue, "", false, true, false, false, nil)
	if err != nil {
		return nil, err
	}
	out := make([]relaytest.Delivery, 0, q.Messages)
	for len(out) < q.Messages {
		select {
		case d, ok := <-deliveries:
			if !ok {
				return out, fmt.Errorf("consumer closed after %d of %d messages", len(out), q.Messages)
			}
			id, err := strconv.ParseInt(d.MessageId, 10, 64)
			if err != nil {
				return out, fmt.Errorf("message id %q: %w", d.MessageId, err)
			}
			out = append(out, relaytest.Delivery{ID: id, Body: d.Body})
			if err := d.Ack(false); err != nil {
				return out, err
			}
		case <-time.After(10 * time.Second):
			return out, fmt.Errorf("no message for 10s after %d of %d", len(out), q.Messages)
		}
	}
	return out, nil
}

// TestChaosRabbitMQ: 10,000 events, a tenth in rolled-back transactions, relayed to a
// durable queue by a relay process that is killed with SIGKILL and replaced, with the
// node restarted in the middle: every committed event arrives at least once, each
// key's in id order, and no rolled-back one.
func TestChaosRabbitMQ(t *testing.T) {
	t.Parallel()
	node := brokertest.StartRabbitMQ(t)
	exchange, queue := newQueue(t, node.URL, "chaos")
	pool := testkit.MigratedSchema(t)
	relaytest.Chaos(t, pool, pgtest.SchemaConnString(t, pgtest.SchemaOf(pool)), relaytest.ChaosBroker{
		Name: "RabbitMQ", URL: node.URL, Target: exchange, Prefix: "chaos",
		Restart: node.Restart,
		Read: func(ctx context.Context, _ int) ([]relaytest.Delivery, error) {
			return readQueue(ctx, node.URL, queue)
		},
	}, relaytest.DefaultChaos())
}

// TestRabbitMQMessage: a published event arrives persistent, with its id as message
// id, the documented headers and its payload as the body.
func TestRabbitMQMessage(t *testing.T) {
	t.Parallel()
	url := brokertest.AMQPURL(t)
	prefix := fmt.Sprintf("msg%d", time.Now().UnixNano())
	exchange, queue := newQueue(t, url, prefix)
	sink, err := jobcamqp.Dial(t.Context(), url, jobcamqp.Options{Exchange: exchange})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	m := relay.Message{ID: 42, Event: "order_paid", Version: 3, Subject: prefix + ".paid", OrderingKey: "o-1", Payload: []byte(`{"order":"o-1"}`)}
	if errs := sink.Publish(t.Context(), []relay.Message{m}); errs != nil {
		t.Fatalf("publish: %v", errs)
	}
	conn, err := amqp.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	d, ok, err := ch.Get(queue, true)
	if err != nil || !ok {
		t.Fatalf("get from %s: %v, %v", queue, ok, err)
	}
	if d.MessageId != "42" || d.DeliveryMode != amqp.Persistent || d.ContentType != "application/json" || d.Type != "order_paid" {
		t.Errorf("message id %q, delivery mode %d, content type %q, type %q; want 42, persistent, application/json, order_paid",
			d.MessageId, d.DeliveryMode, d.ContentType, d.Type)
	}
	want := map[string]string{relay.HeaderEvent: "order_paid", relay.HeaderVersion: "3", relay.HeaderEventID: "42", relay.HeaderOrderingKey: "o-1"}
	for k, v := range want {
		if g, _ := d.Headers[k].(string); g != v {
			t.Errorf("header %s = %v, want %q", k, d.Headers[k], v)
		}
	}
	if string(d.Body) != string(m.Payload) {
		t.Errorf("body %q, want %q", d.Body, m.Payload)
	}
}

// TestRabbitMQPoison: an event whose routing key no queue is bound for comes back
// (mandatory) and fails for good with the broker's NO_ROUTE, while the routable events
// of its batch are published.
func TestRabbitMQPoison(t *testing.T) {
	t.Parallel()
	url := brokertest.AMQPURL(t)
	prefix := fmt.Sprintf("poison%d", time.Now().UnixNano())
	exchange, _ := newQueue(t, url, prefix)
	pool := testkit.MigratedSchema(t)
	routable := relaytest.PublishCommitted(t, pool, prefix+".ok", `{"n":1}`, `{"n":2}`)
	lost := relaytest.PublishCommitted(t, pool, "nobody.listens", `{"n":3}`)

	sink, err := jobcamqp.Dial(t.Context(), url, jobcamqp.Options{Exchange: exchange})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	events := []*runtime.EventType{relaytest.ProbeType(prefix + ".ok"), relaytest.ProbeType("nobody.listens")}
	relaytest.CheckPoison(t, pool, sink, events, routable, lost[0], "NO_ROUTE")
	failed, err := relay.ListFailed(t.Context(), pool, 10)
	if err != nil || len(failed) != 1 || failed[0].ID != lost[0] || failed[0].Subject != "nobody.listens" {
		t.Errorf("ListFailed: %+v, %v; want the unroutable event", failed, err)
	}
}

// TestRabbitMQChannelClosedMidBatch: publishing to an exchange that does not exist makes
// the broker close the channel, which closes its returns as well. Publish must come back
// by its deadline with a retryable error for every event (not spin on the closed
// returns, not call them poison), and so must the next Publish, on a new channel.
func TestRabbitMQChannelClosedMidBatch(t *testing.T) {
	t.Parallel()
	url := brokertest.AMQPURL(t)
	prefix := fmt.Sprintf("closed%d", time.Now().UnixNano())
	sink, err := jobcamqp.Dial(t.Context(), url, jobcamqp.Options{Exchange: prefix + "-missing"})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	msgs := []relay.Message{
		{ID: 1, Event: "e", Version: 1, Subject: prefix + ".a", Payload: []byte(`{"n":1}`)},
		{ID: 2, Event: "e", Version: 1, Subject: prefix + ".b", Payload: []byte(`{"n":2}`)},
	}
	const timeout = 2 * time.Second // as a relay's PublishTimeout
	for attempt := 1; attempt <= 2; attempt++ {
		ctx, cancel := context.WithTimeout(t.Context(), timeout)
		done := make(chan []error, 1)
		go func() { done <- sink.Publish(ctx, msgs) }()
		var errs []error
		select {
		case errs = <-done:
		case <-time.After(timeout + 5*time.Second):
			t.Fatalf("attempt %d: Publish to a missing exchange did not return within 5s of its deadline", attempt)
		}
		cancel()
		if len(errs) != len(msgs) {
			t.Fatalf("attempt %d: Publish returned %d results for %d messages: %v", attempt, len(errs), len(msgs), errs)
		}
		for i, err := range errs {
			if err == nil || relay.IsPoison(err) {
				t.Errorf("attempt %d, event %d: %v; want a retryable error", attempt, msgs[i].ID, err)
			}
		}
	}
}
