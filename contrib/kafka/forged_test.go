package jobckafka_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	jobckafka "github.com/jobc-dev/jobc/contrib/kafka"
	"github.com/jobc-dev/jobc/internal/relaytest"
	"github.com/jobc-dev/jobc/internal/testkit"
	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/relay"
)

// TestKafkaForgedTopic (against kfake, like every Kafka test here): outbox rows written
// around Publish with a plain INSERT (as the producer role can) that name another
// topic than their event's, an undeclared event, or a payload the event's schema
// rejects reach no topic: they fail with the reason, and the declared events around
// them arrive in their topic, in order.
func TestKafkaForgedTopic(t *testing.T) {
	t.Parallel()
	cluster := newCluster(t, nil, "orders.paid", "payroll")
	pool := testkit.MigratedSchema(t)
	et := runtime.MustEventType(runtime.EventType{Name: "order_paid", Subject: "orders.paid", OrderingKey: []string{"order"},
		Relay: true, WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object","required":["order"],"properties":{"order":{"type":"string"}}}`}}})
	pub := func() int64 {
		p, err := runtime.Publish(t.Context(), pool, et, map[string]string{"order": "o-1"})
		if err != nil {
			t.Fatal(err)
		}
		return p.ID
	}
	orderKey := "o-1"
	o1 := pub()
	forgedTopic := relaytest.Forge(t, pool, "order_paid", 1, "payroll", &orderKey, `{"order":"o-1"}`)
	forgedEvent := relaytest.Forge(t, pool, "salary_paid", 1, "payroll", nil, `{"cents":100000000}`)
	forgedBody := relaytest.Forge(t, pool, "order_paid", 1, "orders.paid", &orderKey, `{"order":1}`)
	o2 := pub()
	o3 := pub()

	sink, err := jobckafka.Connect(cluster.ListenAddrs())
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	r, err := relay.New(pool, relay.Config{Sink: sink, Events: []*runtime.EventType{et}, Logger: testkit.Config().Logger})
	if err != nil {
		t.Fatal(err)
	}
	if res := relaytest.Drain(t, pool, r, 10); res.Published != 3 || res.Failed != 3 {
		t.Errorf("batches %+v, want 3 published and 3 failed", res)
	}
	relaytest.CheckFailed(t, pool, map[int64]string{
		forgedTopic: `subject "payroll" is not the declared subject "orders.paid" of event order_paid`,
		forgedEvent: `undeclared event "salary_paid"`,
		forgedBody:  "payload invalid for order_paid v1: /order: ",
	})

	// A sentinel written to each partition of payroll after the relay ran (newCluster
	// makes 4) must be the first record of its partition: once all four are read,
	// every record before them has been.
	const partitions = 4
	client, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.ConsumeTopics("orders.paid", "payroll"),
		kgo.FetchMaxWait(100*time.Millisecond), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	for p := range int32(partitions) {
		if err := client.ProduceSync(t.Context(), &kgo.Record{Topic: "payroll", Partition: p, Value: []byte("sentinel")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var orders []int64
	var payroll []string
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for len(orders) < 3 || len(payroll) < partitions {
		fetches := client.PollFetches(ctx)
		if err := fetches.Err(); err != nil {
			t.Fatalf("fetch after orders %v, payroll %q: %v", orders, payroll, err)
		}
		fetches.EachRecord(func(rec *kgo.Record) {
			if rec.Topic == "payroll" {
				payroll = append(payroll, string(rec.Value))
				return
			}
			for _, h := range rec.Headers {
				if h.Key == relay.HeaderEventID {
					id, _ := strconv.ParseInt(string(h.Value), 10, 64)
					orders = append(orders, id)
				}
			}
		})
	}
	if !slices.Equal(payroll, slices.Repeat([]string{"sentinel"}, partitions)) {
		t.Errorf("the payroll topic holds %q, want only the sentinels", payroll)
	}
	if want := []int64{o1, o2, o3}; !slices.Equal(orders, want) {
		t.Errorf("the orders.paid topic holds %v, want the declared events %v in order", orders, want)
	}
}
