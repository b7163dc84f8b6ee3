// Package relay moves events from the outbox table (jobc_events, written by
// runtime.Publish in the business transaction) to a message broker.
//
// A Relay claims pending events with FOR UPDATE SKIP LOCKED under a lease token, hands
// them to a Sink in batches, and marks each published only after the broker confirmed
// it, conditioned on the token: any number of relays, in any number of processes, can
// run against one database. An event with an ordering key leaves only once every older
// event of its (event, key) has been published or failed, so each key has at most one
// event in flight and a broker receives a key's events in commit order. A failed
// publication is retried with jittered exponential backoff (attempts, available_at
// and last_error on the row); an event the broker will never take (it rejects it, it
// is unroutable, it is too large: a Sink reports it with Poison) becomes state failed
// with its error, stays visible to `jobc status` and `jobc relay failed`, and is sent
// again by RetryFailed. The Pruner deletes published events after a retention.
//
// Delivery is at least once: a relay that dies between the broker's confirmation and
// its own UPDATE leaves the event to be sent again when its lease expires. Sinks turn
// that into exactly once where the broker can (JetStream's duplicate window, keyed by
// the event id); consumers of the other brokers deduplicate by the event id.
//
// # The broker message
//
// Every sink sends the same message for an event:
//
//   - body: the payload's JSON, as stored in the outbox;
//   - header Jobc-Event: the event's name in jobc.yaml;
//   - header Jobc-Version: the payload version, which the generated decoder needs;
//   - header Jobc-Event-Id: the event's id in the outbox (a decimal integer);
//   - header Jobc-Ordering-Key: the ordering key, when the event has one;
//   - Content-Type: application/json.
//
// NATS JetStream: subject = the event's subject, Nats-Msg-Id = the event id (with the
// sink's optional prefix, for several databases relaying into one stream). RabbitMQ:
// routing key = the subject, MessageId = the event id, persistent, mandatory, the
// headers above as AMQP headers. Kafka: topic = the subject, record key = the ordering
// key, the headers above as record headers.
//
// The sinks live in modules of their own (contrib/nats, contrib/rabbitmq,
// contrib/kafka), so an application that imports the runtime pays for no broker client.
package relay
