package jobcamqp_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	jobcamqp "github.com/jobc-dev/jobc/contrib/rabbitmq"
	"github.com/jobc-dev/jobc/internal/brokertest"
	"github.com/jobc-dev/jobc/internal/relaytest"
	"github.com/jobc-dev/jobc/internal/testkit"
	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/relay"
)

// defaultExchangeQueues declares durable queues of the given names, which the default
// exchange routes to by name, and deletes them when the test ends.
func defaultExchangeQueues(t *testing.T, url string, names ...string) {
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
	for _, n := range names {
		if _, err := ch.QueueDeclare(n, true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		conn, err := amqp.Dial(url)
		if err != nil {
			return // a throwaway broker is gone already
		}
		defer conn.Close()
		if ch, err := conn.Channel(); err == nil {
			for _, n := range names {
				_, _ = ch.QueueDelete(n, false, false, false)
			}
		}
	})
}

// TestRabbitMQForgedRouting is the regression test of a relay that published what an
// outbox row said: on the default exchange, a row written around Publish with a plain
// INSERT (as the producer role can) put a forged body in an unrelated queue by naming
// it as its subject. Now neither a forged subject under a declared event nor an
// undeclared event reaches that queue; they fail with the reason, and the declared
// events around them arrive in their queue, in order. A routing key the spec itself
// declares is refused too when it is the broker's own (amq.*) or a wildcard.
func TestRabbitMQForgedRouting(t *testing.T) {
	t.Parallel()
	url := brokertest.AMQPURL(t)
	prefix := fmt.Sprintf("forged%d", time.Now().UnixNano())
	orders, payroll := prefix+".orders", prefix+".payroll"
	defaultExchangeQueues(t, url, orders, payroll)
	pool := testkit.MigratedSchema(t)
	paid := runtime.MustEventType(runtime.EventType{Name: "order_paid", Subject: orders, OrderingKey: []string{"order"},
		Relay: true, WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object","required":["order"],"properties":{"order":{"type":"string"}}}`}}})
	declared := func(name, subject string) *runtime.EventType {
		return runtime.MustEventType(runtime.EventType{Name: name, Subject: subject, Relay: true, WriteVersion: 1,
			Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}}})
	}
	replyTo := declared("reply_forged", "amq.rabbitmq.reply-to")
	wildcard := declared("everything", prefix+".#")
	pub := func(et *runtime.EventType, payload any) int64 {
		p, err := runtime.Publish(t.Context(), pool, et, payload)
		if err != nil {
			t.Fatal(err)
		}
		return p.ID
	}
	const body = `{"employee":"mallory","cents":100000000}`
	orderKey := "o-1"
	o1 := pub(paid, map[string]string{"order": "o-1"})
	forgedSubject := relaytest.Forge(t, pool, "order_paid", 1, payroll, &orderKey, `{"order":"o-1","employee":"mallory"}`)
	forgedEvent := relaytest.Forge(t, pool, "salary_paid", 1, payroll, nil, body)
	o2 := pub(paid, map[string]string{"order": "o-1"})
	viaReplyTo := pub(replyTo, map[string]string{})
	viaWildcard := pub(wildcard, map[string]string{})
	o3 := pub(paid, map[string]string{"order": "o-1"})

	sink, err := jobcamqp.Dial(t.Context(), url, jobcamqp.Options{}) // the default exchange
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	r, err := relay.New(pool, relay.Config{Sink: sink, Events: []*runtime.EventType{paid, replyTo, wildcard}, Logger: testkit.Config().Logger})
	if err != nil {
		t.Fatal(err)
	}
	if res := relaytest.Drain(t, pool, r, 10); res.Published != 3 || res.Failed != 4 {
		t.Errorf("batches %+v, want 3 published and 4 failed", res)
	}
	relaytest.CheckFailed(t, pool, map[int64]string{
		forgedSubject: fmt.Sprintf("subject %q is not the declared subject %q of event order_paid", payroll, orders),
		forgedEvent:   `undeclared event "salary_paid"`,
		viaReplyTo:    `refused routing key "amq.rabbitmq.reply-to": amq. names are the broker's own`,
		viaWildcard:   fmt.Sprintf("refused routing key %q: a topic wildcard", prefix+".#"),
	})
	got, err := readQueue(t.Context(), url, payroll)
	if err != nil || len(got) != 0 {
		t.Errorf("the unrelated queue %s holds %v (%v), want nothing", payroll, got, err)
	}
	got, err = readQueue(t.Context(), url, orders)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, d := range got {
		ids = append(ids, d.ID)
	}
	if want := []int64{o1, o2, o3}; !slices.Equal(ids, want) {
		t.Errorf("the orders queue holds %v, want the declared events %v in order", ids, want)
	}
}

// TestCheckRoutingKey: the routing keys the sink refuses whatever the spec says, and
// some it publishes with.
func TestCheckRoutingKey(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"shop.order_paid", "orders", "a-b_c.d", "Ünïcode", "x.amq.y", strings.Repeat("k", 255)} {
		if err := jobcamqp.CheckRoutingKey(ok); err != nil {
			t.Errorf("CheckRoutingKey(%q) = %v, want nil", ok, err)
		}
	}
	for key, want := range map[string]string{
		"":                            "empty",
		strings.Repeat("k", 256):      "255 bytes",
		"amq.rabbitmq.reply-to":       "broker's own",
		"amq.rabbitmq.reply-to.g1h2":  "broker's own",
		"amq.gen-JzTY20BRgKO-HjmUJj0": "broker's own",
		"orders.*":                    "wildcard",
		"orders.#":                    "wildcard",
		"orders paid":                 "whitespace",
		"orders\r\nCC: payroll":       "whitespace",
		"orders\x00":                  "control",
		"orders\xff":                  "UTF-8",
	} {
		if err := jobcamqp.CheckRoutingKey(key); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckRoutingKey(%q) = %v, want an error with %q", key, err, want)
		}
	}
}
