package jobcamqp_test

import (
	"context"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/contrib/rabbitmq"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/internal/relaytest"
	"github.com/jobc-dev/jobc/runtime/relay"
)

// TestMain runs the tests against a package database, or, started by
// relaytest.StartRelay, a relay publishing to RabbitMQ (the target is the exchange).
func TestMain(m *testing.M) {
	relaytest.MaybeRunChild(func(ctx context.Context, url, exchange string) (relay.Sink, error) {
		return jobcamqp.Dial(ctx, url, jobcamqp.Options{Exchange: exchange, WriteTimeout: time.Second})
	})
	pgtest.Main(m)
}
