package relay_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/relay"
)

func migrated(ctx context.Context, pool *pgxpool.Pool) error {
	_, err := runtime.Migrate(ctx, pool)
	return err
}

// printSink prints what a broker would receive. Real sinks live in contrib/nats
// (jobcnats.Connect), contrib/rabbitmq (jobcamqp.Dial) and contrib/kafka
// (jobckafka.Connect).
type printSink struct{}

func (printSink) Publish(_ context.Context, msgs []relay.Message) []error {
	for _, m := range msgs {
		fmt.Printf("%s %s %v\n", m.Subject, m.Payload, m.Headers()[:2])
	}
	return nil // every message confirmed
}

func (printSink) Close() error { return nil }

// A relay publishes the events of the outbox in batches and marks them published once
// the sink confirmed them; Run does so until its context ends. It publishes only the
// events it is given: an application passes its generated package's EventTypes().
func ExampleNew() {
	pool, _, cleanup := pgtest.ExampleSchema("relay_new", migrated)
	defer cleanup()
	ctx := context.Background()
	orderPaid := runtime.MustEventType(runtime.EventType{
		Name: "order_paid", Subject: "shop.orders.paid", OrderingKey: []string{"order_id"}, Relay: true, WriteVersion: 1,
		Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object","required":["order_id"],"properties":{"order_id":{"type":"string"}}}`}},
	})
	if _, err := runtime.Publish(ctx, pool, orderPaid, map[string]string{"order_id": "o-1"}); err != nil {
		panic(err)
	}

	r, err := relay.New(pool, relay.Config{Sink: printSink{}, Events: []*runtime.EventType{orderPaid}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	res, err := r.RunOnce(ctx) // one batch; Run(ctx) loops
	if err != nil {
		panic(err)
	}
	stats, err := relay.ReadStats(ctx, pool)
	if err != nil {
		panic(err)
	}
	fmt.Printf("published %d; %d pending, lag %s\n", res.Published, stats.Pending, stats.Lag)
	// Output:
	// shop.orders.paid {"order_id": "o-1"} [[Jobc-Event order_paid] [Jobc-Version 1]]
	// published 1; 0 pending, lag 0s
}
