package jobcnats_test

import (
	"testing"

	"github.com/jobc-dev/jobc/contrib/nats"
	"github.com/jobc-dev/jobc/internal/brokertest"
	"github.com/jobc-dev/jobc/internal/relaytest"
	"github.com/jobc-dev/jobc/internal/testkit"
)

// BenchmarkRelayNATS: relay throughput to a file-backed JetStream stream, in events/s
// (see bench/results/relay.md for the figures and the command).
func BenchmarkRelayNATS(b *testing.B) {
	url := brokertest.NATSURL(b)
	_, _ = newStream(b, url, "bench")
	pool := testkit.MigratedSchema(b)
	sink, err := jobcnats.Connect(url, jobcnats.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer sink.Close()
	relaytest.BenchRelay(b, pool, "bench.happened", relaytest.BenchConfig(sink), 100_000)
}
