package jobcnats_test

import (
	"fmt"
	"testing"

	"github.com/jobc-dev/jobc/contrib/nats"
	"github.com/jobc-dev/jobc/internal/brokertest"
	"github.com/jobc-dev/jobc/internal/relaytest"
	"github.com/jobc-dev/jobc/internal/testkit"
)

// BenchmarkRelayNATS: relay throughput to a file-backed JetStream stream, in events/s
// (figures and command in bench/results/2026-12-01-relay.txt). many_keys: 100,000
// ordering keys, so nearly every event is the only pending one of its key; hot_keys:
// 1,000 keys with a deep backlog each, where claims made while other batches are in
// flight scan the events those batches hold back, so fewer batches in flight go faster;
// few_keys: 10 keys, where every claim finds 10 events, the slow case (issue 24's "the
// relay walks hot keys": bench/results/2026-12-06-relay-keys.txt and
// 2026-12-06-relay-claim-visits.txt).
func BenchmarkRelayNATS(b *testing.B) {
	url := brokertest.NATSURL(b)
	_, _ = newStream(b, url, "bench")
	for _, c := range []struct {
		name              string
		keys, concurrency int
	}{{"many_keys", 100_000, 4}, {"hot_keys", 1000, 4}, {"hot_keys", 1000, 1}, {"few_keys", 10, 2}} {
		b.Run(fmt.Sprintf("%s/concurrency=%d", c.name, c.concurrency), func(b *testing.B) {
			pool := testkit.MigratedSchema(b)
			sink, err := jobcnats.Connect(url, jobcnats.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer sink.Close()
			cfg := relaytest.BenchConfig(sink)
			cfg.Concurrency = c.concurrency
			relaytest.BenchRelay(b, pool, "bench.happened", cfg, c.keys)
		})
	}
}
