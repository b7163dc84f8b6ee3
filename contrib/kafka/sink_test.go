package jobckafka_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	jobckafka "github.com/jobc-dev/jobc/contrib/kafka"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/internal/relaytest"
	"github.com/jobc-dev/jobc/internal/testkit"
	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/relay"
)

// No Kafka server runs on the test machines: these tests run against franz-go's
// in-process cluster, kfake, which speaks the Kafka protocol (produce, fetch,
// idempotent producer ids and sequence numbers) over real sockets.

func TestMain(m *testing.M) { pgtest.Main(m) }

// newCluster starts a kfake cluster with topics of 4 partitions and broker configs.
func newCluster(t *testing.T, configs map[string]string, topics ...string) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, topics...), kfake.BrokerConfigs(configs))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

type order struct {
	Order string `json:"order"`
	N     int    `json:"n"`
}

// TestKafkaOrderingKey: events relayed to Kafka arrive with their ordering key as the
// record key, so each key's events are on one partition in id order, with the
// relay's headers; the producer is idempotent.
func TestKafkaOrderingKey(t *testing.T) {
	t.Parallel()
	cluster := newCluster(t, nil, "orders.paid")
	pool := testkit.MigratedSchema(t)
	et := runtime.MustEventType(runtime.EventType{Name: "order_paid", Subject: "orders.paid", OrderingKey: []string{"order"},
		Relay: true, WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}}})
	const keys, perKey = 8, 25
	var payloads []order
	for n := range perKey {
		for k := range keys {
			payloads = append(payloads, order{Order: fmt.Sprintf("o-%d", k), N: n})
		}
	}
	published, err := runtime.PublishMany(t.Context(), pool, et, payloads)
	if err != nil {
		t.Fatal(err)
	}

	sink, err := jobckafka.Connect(cluster.ListenAddrs())
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	r, err := relay.New(pool, relay.Config{Sink: sink, Events: []*runtime.EventType{et}, Logger: testkit.Config().Logger, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for range perKey { // one event per key and batch
		if res, err := r.RunOnce(t.Context()); err != nil || res.Published != keys {
			t.Fatalf("batch: %+v, %v; want %d published", res, err, keys)
		}
	}

	consumer, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.ConsumeTopics("orders.paid"), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	partitionOf := map[string]int32{}
	lastN := map[string]int{}
	got := 0
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for got < len(payloads) {
		fetches := consumer.PollFetches(ctx)
		if err := fetches.Err(); err != nil {
			t.Fatalf("fetch after %d of %d records: %v", got, len(payloads), err)
		}
		fetches.EachRecord(func(rec *kgo.Record) {
			got++
			key := string(rec.Key)
			headers := map[string]string{}
			for _, h := range rec.Headers {
				headers[h.Key] = string(h.Value)
			}
			if headers[relay.HeaderOrderingKey] != key || headers[relay.HeaderEvent] != "order_paid" || headers[relay.HeaderVersion] != "1" {
				t.Errorf("record %s headers %v", rec.Value, headers)
			}
			id, _ := strconv.ParseInt(headers[relay.HeaderEventID], 10, 64)
			if id < published[0].ID || id > published[len(published)-1].ID {
				t.Errorf("record %s: event id %q is none of the published", rec.Value, headers[relay.HeaderEventID])
			}
			if p, ok := partitionOf[key]; ok && p != rec.Partition {
				t.Errorf("key %s on partitions %d and %d", key, p, rec.Partition)
			}
			partitionOf[key] = rec.Partition
			var n int
			if _, err := fmt.Sscanf(string(rec.Value), `{"n": %d, "order": %q}`, &n, new(string)); err != nil {
				t.Errorf("record value %s: %v", rec.Value, err)
			}
			if last, ok := lastN[key]; ok && n != last+1 {
				t.Errorf("key %s: event %d after %d", key, n, last)
			}
			lastN[key] = n
		})
	}
	if len(lastN) != keys {
		t.Errorf("records of %d keys, want %d", len(lastN), keys)
	}
	// The relay's client writes idempotently: it holds a producer id.
	if id, epoch, err := jobckafka.ProducerID(t, sink); err != nil || id < 0 || epoch < 0 {
		t.Errorf("producer id %d epoch %d, %v: want an idempotent producer", id, epoch, err)
	}
}

// TestKafkaPoison: a record larger than message.max.bytes fails for good with
// MESSAGE_TOO_LARGE while its batch's other events are published. The client's
// ProducerBatchMaxBytes is set to the broker's limit, so the client refuses that
// record alone instead of the broker refusing a whole batch of the partition.
func TestKafkaPoison(t *testing.T) {
	t.Parallel()
	cluster := newCluster(t, map[string]string{"message.max.bytes": "2048"}, "poison.big")
	pool := testkit.MigratedSchema(t)
	et := runtime.MustEventType(runtime.EventType{Name: "blob_stored", Subject: "poison.big",
		Relay: true, WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}}})
	ps, err := runtime.PublishMany(t.Context(), pool, et, []map[string]string{{"pad": "small"}, {"pad": incompressible(8192)}})
	if err != nil {
		t.Fatal(err)
	}
	sink, err := jobckafka.Connect(cluster.ListenAddrs(), kgo.ProducerBatchMaxBytes(2048))
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	relaytest.CheckPoison(t, pool, sink, []*runtime.EventType{et}, []int64{ps[0].ID}, ps[1].ID, "MESSAGE_TOO_LARGE")
}

// incompressible returns n hexadecimal digits of random bytes.
func incompressible(n int) string {
	b := make([]byte, n/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
