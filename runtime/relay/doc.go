// Package relay moves events from the outbox table (jobc_events, written by
// runtime.Publish in the business transaction) to a message broker.
//
// A Relay claims pending events with FOR UPDATE SKIP LOCKED under a lease token, hands
// them to a Sink in batches, and marks each published only after the broker confirmed
// it, conditioned on the token: any number of relays, in any number of processes, can
// run against one database. An event with an ordering key leaves only once every older
// event of its (event, key) has been published or failed, so each key has at most one
// event in flight and a broker receives a key's events in id order, the order they
// were published in; and never while a transaction that published the key is still
// open, so an event with a smaller id cannot commit after a larger one has left (see
// jobc_claim_events in the schema). A failed
// publication is retried with jittered exponential backoff (attempts, available_at
// and last_error on the row); an event the broker will never take (it rejects it, it
// is unroutable, it is too large: a Sink reports it with Poison) becomes state failed
// with its error, stays visible to `jobc status` and `jobc relay failed`, and is sent
// again by RetryFailed. The Pruner deletes published events after a retention.
//
// # Only declared events leave
//
// The outbox is data, and not only Publish writes it: whoever may INSERT into
// jobc_events (the producer role, a hand-written fix, an attacker with that role) can
// put any event name, version, subject and payload in a row, and a relay that trusted
// the row would publish wherever it says: a NATS subject such as
// $JS.API.STREAM.DELETE.<stream> is an order to the server, and RabbitMQ's default
// exchange delivers to whichever queue the routing key names. So a relay knows the
// spec (Config.Events) and checks every row it claims before the Sink sees it: its
// event is declared and relayed, its version is one the event declares, its subject is
// the event's declared subject (a literal of the spec, never computed from the
// payload), it has an ordering key exactly when the event declares one, and its
// payload is valid for that (event, version). A row that fails the
// check is never published: it becomes failed at once, its last error saying why
// ("undeclared event ...", "subject S is not the declared subject T of event X",
// "payload invalid for X v2: /field: ..."), the log names it, and `jobc relay failed`
// and `jobc status` show it. RetryFailed makes it pending again, and the relay checks
// it again: it reaches the broker only once the spec the relay runs with declares it,
// for instance after an upgrade that added the event or version. Deploy a relay with a
// spec at least as new as its producers', or their new events fail until it is.
//
// How the relay learns the spec: an application that runs a relay in its own process
// passes its generated package's EventTypes(), the very *runtime.EventType values its
// Publish<Event> functions validate with; `jobc relay` loads jobc.yaml (-C names its
// directory, as for the other commands that read the spec) and builds the same values
// with runtime.NewEventType from each version's canonical JSON Schema, the text the
// generator writes into that generated code. Both paths end in one check, here, with
// the runtime's compiled validators (EventType.Validate, which reads a valid payload
// in place, without decoding it). The spec, not the database, is the authority: a
// list of allowed subjects kept in a table could be rewritten by the roles it guards
// against, and the spec is what the application's code was generated from. The sinks
// refuse, besides, what no declaration should make them send: NATS subjects that are
// reserved ($..., _INBOX.) or hold wildcards or whitespace, and RabbitMQ routing keys
// reserved by the broker (amq.*).
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
