package jobcamqp_test

import (
	"testing"

	"github.com/jobc-dev/jobc/contrib/rabbitmq"
	"github.com/jobc-dev/jobc/internal/brokertest"
	"github.com/jobc-dev/jobc/internal/relaytest"
	"github.com/jobc-dev/jobc/internal/testkit"
)

// BenchmarkRelayRabbitMQ: relay throughput to a durable queue with publisher confirms
// and persistent messages, in events/s (see bench/results/relay.md).
func BenchmarkRelayRabbitMQ(b *testing.B) {
	url := brokertest.AMQPURL(b)
	exchange, _ := newQueue(b, url, "bench")
	pool := testkit.MigratedSchema(b)
	sink, err := jobcamqp.Dial(b.Context(), url, jobcamqp.Options{Exchange: exchange})
	if err != nil {
		b.Fatal(err)
	}
	defer sink.Close()
	relaytest.BenchRelay(b, pool, "bench.happened", relaytest.BenchConfig(sink), 100_000)
}
