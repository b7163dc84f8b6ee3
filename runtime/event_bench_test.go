package runtime_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// BenchmarkPublishInTx compares what an event and a job cost a business transaction:
// each iteration is one transaction that inserts a business row and then enqueues one
// job, or publishes one event (relayed, with an ordering key, and one subscriber job),
// and commits. The difference between the two is Publish's own price: the advisory
// lock, the outbox row and the subscriber's insert.
// `go run ./internal/cmd/withpostgres -- go test -run '^$' -bench PublishInTx -benchtime 2000x ./runtime/`.
func BenchmarkPublishInTx(b *testing.B) {
	pool := pgtest.NewSchema(b, migrated)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `CREATE TABLE orders (id bigint PRIMARY KEY, email text)`); err != nil {
		b.Fatal(err)
	}
	jt, err := runtime.NewJobType(runtime.JobType{
		Kind: "notify", Queue: "bench", Priority: 5, MaxAttempts: 3,
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: emailSchema}},
	})
	if err != nil {
		b.Fatal(err)
	}
	newEvent := func(b *testing.B, name string, relay bool, key []string, subs ...runtime.Subscriber) *runtime.EventType {
		et, err := runtime.NewEventType(runtime.EventType{
			Name: name, Subject: "bench." + name, OrderingKey: key, Relay: relay,
			WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: emailSchema}}, Subscribers: subs,
		})
		if err != nil {
			b.Fatal(err)
		}
		return et
	}
	next := int64(0)
	inTx := func(b *testing.B, write func(tx pgx.Tx, n int) error) {
		b.Helper()
		for range b.N {
			next++
			err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, `INSERT INTO orders VALUES ($1, 'ada@example.com')`, next); err != nil {
					return err
				}
				return write(tx, int(next))
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("business_row_only", func(b *testing.B) {
		inTx(b, func(pgx.Tx, int) error { return nil })
	})
	b.Run("enqueue", func(b *testing.B) {
		inTx(b, func(tx pgx.Tx, n int) error {
			_, err := runtime.Enqueue(ctx, tx, jt, emailPayload{N: n, Email: "ada@example.com"})
			return err
		})
	})
	b.Run("publish_outbox_only", func(b *testing.B) {
		et := newEvent(b, "outbox_only", true, nil)
		inTx(b, func(tx pgx.Tx, n int) error {
			_, err := runtime.Publish(ctx, tx, et, emailPayload{N: n, Email: "ada@example.com"})
			return err
		})
	})
	b.Run("publish_keyed_outbox_and_subscriber", func(b *testing.B) {
		et := newEvent(b, "keyed", true, []string{"n"}, runtime.Subscriber{Job: jt})
		inTx(b, func(tx pgx.Tx, n int) error {
			_, err := runtime.Publish(ctx, tx, et, emailPayload{N: n % 100, Email: "ada@example.com"})
			return err
		})
	})
	b.Run("publish_subscriber_only", func(b *testing.B) {
		et := newEvent(b, "local", false, nil, runtime.Subscriber{Job: jt})
		inTx(b, func(tx pgx.Tx, n int) error {
			_, err := runtime.Publish(ctx, tx, et, emailPayload{N: n, Email: "ada@example.com"})
			return err
		})
	})
	b.Run("publish_many_100_keyed", func(b *testing.B) {
		et := newEvent(b, "many", true, []string{"n"}, runtime.Subscriber{Job: jt})
		batch := make([]emailPayload, 100)
		for i := range batch {
			batch[i] = emailPayload{N: i, Email: "ada@example.com"}
		}
		inTx(b, func(tx pgx.Tx, _ int) error {
			_, err := runtime.PublishMany(ctx, tx, et, batch)
			return err
		})
		b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "events/s")
	})
}
