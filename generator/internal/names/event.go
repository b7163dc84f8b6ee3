package names

import (
	"strconv"

	"github.com/jobc-dev/jobc/generator/internal/gotype"
)

// Event derives the identifiers of one event from its base name, the Go form of its
// name (order_paid → OrderPaid). Its payload structs and upcasts follow the jobs' rules,
// so an event and a job of one base name collide, which the collision check reports.
type Event struct {
	Base string
}

// ForEvent returns the naming of the event called name.
func ForEvent(name string) Event { return Event{Base: gotype.GoName(name)} }

// NameConst is the constant holding the event's name: EventOrderPaid.
func (n Event) NameConst() string { return "Event" + n.Base }

// Payload is the alias of the newest payload version, the one Decode returns: OrderPaid.
func (n Event) Payload() string { return n.Base }

// Version is the payload struct of version v: OrderPaidV2.
func (n Event) Version(v int) string { return versionStruct(n.Base, v) }

// Upcast is the hand-written function that upcasts version v-1 payloads into version
// v: UpcastOrderPaidV1ToV2.
func (n Event) Upcast(v int) string { return upcastFunc(n.Base, v) }

// Publish publishes one event: PublishOrderPaid.
func (n Event) Publish() string { return "Publish" + n.Base }

// PublishMany publishes many events: PublishOrderPaidMany.
func (n Event) PublishMany() string { return "Publish" + n.Base + "Many" }

// Decode decodes a received event of any known version into the newest: DecodeOrderPaid.
func (n Event) Decode() string { return "Decode" + n.Base }

// TypeVar is the unexported variable describing the event to the runtime:
// orderPaidEvent.
func (n Event) TypeVar() string { return gotype.LowerFirst(n.Base) + "Event" }

// Idents lists every package-level identifier the event declares, or makes the package
// declare (a hand-written upcast), given its payload versions.
func (n Event) Idents(versions []Version) []Ident {
	ids := []Ident{
		{Name: n.NameConst(), What: "the event name constant"},
		{Name: n.Payload(), What: "the newest event payload's alias"},
		{Name: n.Publish(), What: "the Publish function"},
		{Name: n.PublishMany(), What: "the PublishMany function"},
		{Name: n.Decode(), What: "the Decode function"},
		{Name: n.TypeVar(), What: "the event type variable"},
	}
	for _, v := range versions {
		num := strconv.Itoa(v.Number)
		root := n.Version(v.Number)
		ids = append(ids, Ident{Name: root, What: "the version " + num + " event payload struct"})
		if v.HandWritten {
			ids = append(ids, Ident{Name: n.Upcast(v.Number), What: "the hand-written upcast into version " + num, HandWritten: true})
		}
		ids = append(ids, payloadIdents(v, root, num, "payload")...)
	}
	return ids
}
