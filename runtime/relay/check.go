package relay

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/jobc-dev/jobc/runtime"
)

// catalogue is what the relay knows of the spec: the declared events, by name. Every
// claimed outbox row is checked against it before it reaches the sink (see check).
type catalogue map[string]*runtime.EventType

// newCatalogue indexes the declared events; it refuses none at all (a relay that knows
// no event could only fail every row), a nil entry and a name declared twice.
func newCatalogue(events []*runtime.EventType) (catalogue, error) {
	if len(events) == 0 {
		return nil, errors.New("relay: Config.Events is empty: the relay publishes only the events the spec declares; " +
			"pass the generated package's EventTypes() (jobc relay loads them from jobc.yaml)")
	}
	c := make(catalogue, len(events))
	for i, et := range events {
		if et == nil {
			return nil, fmt.Errorf("relay: Config.Events[%d] is nil", i)
		}
		if len(et.Versions) == 0 {
			return nil, fmt.Errorf("relay: Config.Events[%d] (%s) has no payload versions: build it with runtime.NewEventType, as generated code does", i, et.Name)
		}
		if _, dup := c[et.Name]; dup {
			return nil, fmt.Errorf("relay: Config.Events declares event %s twice", et.Name)
		}
		c[et.Name] = et
	}
	return c, nil
}

// check says why m must not be published, or returns nil; keyed says whether its row
// has an ordering key (which may be ""). An outbox row is data written by whoever may
// INSERT into jobc_events, not only by Publish: its event, version, subject, ordering
// key and payload are each checked against the declaration, so that a forged row can
// reach neither a subject nor a consumer the spec does not name. The errors become the
// failed row's last_error; what they quote from the row is quoted (a forged name may
// hold anything) and cut to a readable length, saying so.
func (c catalogue) check(m *Message, keyed bool) error {
	et, ok := c[m.Event]
	if !ok {
		return fmt.Errorf("undeclared event %s", Quote(m.Event))
	}
	if !et.Relay {
		return fmt.Errorf("event %s is not relayed (the spec does not set relay: true)", et.Name)
	}
	if first, last := et.Versions[0].Number, et.Versions[len(et.Versions)-1].Number; m.Version < first || m.Version > last {
		hint := ""
		if m.Version > last {
			hint = "; if a newer spec declares it, run the relay with that spec, then `jobc relay retry`"
		}
		return fmt.Errorf("version %d of event %s is not declared (the spec declares %d..%d)%s", m.Version, et.Name, first, last, hint)
	}
	if m.Subject != et.Subject {
		return fmt.Errorf("subject %s is not the declared subject %s of event %s", Quote(m.Subject), strconv.Quote(et.Subject), et.Name)
	}
	// Publish writes an ordering key exactly when the event declares one; its value is
	// not derived again here, which would decode every ordered payload.
	switch {
	case len(et.OrderingKey) == 0 && keyed:
		return fmt.Errorf("ordering key %s on event %s, which declares none", Quote(m.OrderingKey), et.Name)
	case len(et.OrderingKey) > 0 && !keyed:
		return fmt.Errorf("no ordering key on event %s, which declares one (%s)", et.Name, strings.Join(et.OrderingKey, ", "))
	}
	if err := et.Validate(m.Version, m.Payload); err != nil {
		var pe *runtime.PayloadError
		if !errors.As(err, &pe) {
			return fmt.Errorf("payload invalid for %s v%d: %w", et.Name, m.Version, err)
		}
		var b strings.Builder
		for i, p := range pe.Problems {
			if i == maxProblems {
				fmt.Fprintf(&b, "; and %d more", len(pe.Problems)-i)
				break
			}
			if i > 0 {
				b.WriteString("; ")
			}
			if p.Field != "" {
				b.WriteString(p.Field + ": ")
			}
			b.WriteString(p.Message)
		}
		return fmt.Errorf("payload invalid for %s v%d: %s", et.Name, m.Version, escapeControls(b.String()))
	}
	return nil
}

// maxProblems bounds the schema violations an error lists; it counts the rest.
const maxProblems = 10

// maxQuoted bounds how much of a row's text an error quotes.
const maxQuoted = 200

// Quote quotes s as Go would, cut to 200 bytes with its full length said: text copied
// from an outbox row into an error (an event name, a subject, a routing key) may be of
// any length and hold any character. The sinks quote what they refuse with it too.
func Quote(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:maxQuoted]), len(s))
}

// escapeControls writes the control characters of s (a schema problem may quote a
// payload's key or value) as Go escapes, so that a last error stays one line.
func escapeControls(s string) string {
	if strings.IndexFunc(s, unicode.IsControl) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
