package runtime_test

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// signedUp is an event payload type, as jobc generates one per event payload version.
type signedUp struct {
	UserID int64  `json:"user_id"`
	Email  string `json:"email"`
}

// ExamplePublish publishes an event in the transaction that creates the user: the
// outbox row (the event is relayed to a broker, in order per user_id) and the
// subscriber job (the welcome email, typed as the event) commit with the user, or
// none of them does. Generated code declares the event with runtime.MustEventType and
// applications call the generated Publish<Event>.
func ExamplePublish() {
	pool, _, cleanup := pgtest.ExampleSchema("publish", migrated)
	defer cleanup()
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `CREATE TABLE users (id bigint PRIMARY KEY, email text)`); err != nil {
		panic(err)
	}
	userSignedUp := runtime.MustEventType(runtime.EventType{
		Name: "user_signed_up", Subject: "accounts.user_signed_up", OrderingKey: []string{"user_id"}, Relay: true,
		WriteVersion: 1, Versions: welcomeType.Versions,
		Subscribers: []runtime.Subscriber{{Job: welcomeType, Version: 1}},
	})

	var published runtime.Published
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO users VALUES (42, 'ada@example.com')`); err != nil {
			return err
		}
		var err error
		published, err = runtime.Publish(ctx, tx, userSignedUp, signedUp{UserID: 42, Email: "ada@example.com"})
		return err
	})
	if err != nil {
		panic(err)
	}
	var event, key, payload string
	if err := pool.QueryRow(ctx, `SELECT event, ordering_key, payload::text FROM jobc_events WHERE id = $1`, published.ID).Scan(&event, &key, &payload); err != nil {
		panic(err)
	}
	fmt.Println("outbox:", event, key, payload)
	job, err := runtime.GetJob(ctx, pool, published.Jobs[0].ID)
	if err != nil {
		panic(err)
	}
	fmt.Println("subscriber:", job.Kind, job.State, string(job.Payload))

	// A consumer behind the broker decodes what it receives with the event's versions.
	newest, err := userSignedUp.Decode(1, []byte(payload))
	fmt.Println("decoded:", string(newest), err)
	// Output:
	// outbox: user_signed_up 42 {"email": "ada@example.com", "user_id": 42}
	// subscriber: send_welcome_email available {"email": "ada@example.com", "user_id": 42}
	// decoded: {"email": "ada@example.com", "user_id": 42} <nil>
}
