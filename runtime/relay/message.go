package relay

import (
	"strconv"
	"time"
)

// The header names of a broker message (see the package documentation).
const (
	HeaderEvent       = "Jobc-Event"
	HeaderVersion     = "Jobc-Version"
	HeaderEventID     = "Jobc-Event-Id"
	HeaderOrderingKey = "Jobc-Ordering-Key"
	ContentType       = "application/json"
)

// Message is one event to publish, as claimed from the outbox.
type Message struct {
	ID          int64  // the outbox row's id: unique per database
	Event       string // the event's name in jobc.yaml
	Version     int    // the payload version
	Subject     string // the broker's subject, routing key or topic
	OrderingKey string // "" when the event has none
	Payload     []byte // the payload's JSON, as stored
	CreatedAt   time.Time
	Attempt     int // 1 on the first publication
}

// IDString is the event id as sinks write it: Nats-Msg-Id, AMQP MessageId and the
// Jobc-Event-Id header.
func (m *Message) IDString() string { return strconv.FormatInt(m.ID, 10) }

// Headers returns the message's headers, in a fixed order (Content-Type excluded:
// every broker has a field of its own for it).
func (m *Message) Headers() [][2]string {
	h := [][2]string{
		{HeaderEvent, m.Event},
		{HeaderVersion, strconv.Itoa(m.Version)},
		{HeaderEventID, m.IDString()},
	}
	if m.OrderingKey != "" {
		h = append(h, [2]string{HeaderOrderingKey, m.OrderingKey})
	}
	return h
}
