package jobcnats_test

import (
	"context"
	"testing"

	"github.com/jobc-dev/jobc/contrib/nats"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/internal/relaytest"
	"github.com/jobc-dev/jobc/runtime/relay"
)

// TestMain runs the tests against a package database, or, started by
// relaytest.StartRelay, a relay publishing to JetStream.
func TestMain(m *testing.M) {
	relaytest.MaybeRunChild(func(_ context.Context, url, _ string) (relay.Sink, error) {
		return jobcnats.Connect(url, jobcnats.Options{})
	})
	pgtest.Main(m)
}
