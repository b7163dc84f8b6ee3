package jobckafka_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/jobc-dev/jobc/contrib/kafka"
	"github.com/jobc-dev/jobc/internal/relaytest"
	"github.com/jobc-dev/jobc/internal/testkit"
)

// BenchmarkRelayKafka: relay throughput to kfake, franz-go's in-process cluster; it
// measures the relay and the client, not a Kafka broker's disk.
func BenchmarkRelayKafka(b *testing.B) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(8, "bench.happened"))
	if err != nil {
		b.Fatal(err)
	}
	defer cluster.Close()
	pool := testkit.MigratedSchema(b)
	sink, err := jobckafka.Connect(cluster.ListenAddrs())
	if err != nil {
		b.Fatal(err)
	}
	defer sink.Close()
	relaytest.BenchRelay(b, pool, "bench.happened", relaytest.BenchConfig(sink), 100_000)
}
