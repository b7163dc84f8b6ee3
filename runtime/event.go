package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/jobc-dev/jobc/runtime/internal/schema"
)

// EventType describes one event of the spec to the runtime: a fact the application
// publishes, with a versioned payload contract like a job's. Publishing it writes, in
// the caller's transaction, one job per subscriber (fan-out inside PostgreSQL) and,
// when it is relayed, a row of the outbox jobc_events that a relay delivers to a
// broker. Generated code builds one per event of the spec with MustEventType;
// applications call the generated Publish<Event> instead.
type EventType struct {
	Name    string
	Subject string // the broker's subject, routing key or topic
	// OrderingKey names the top-level payload fields, scalars, whose values make the
	// event's ordering key: relays deliver the events of one key in the order they were
	// published, and none while a transaction that published the key is open.
	// Empty: the events are unordered.
	OrderingKey []string
	// Relay writes an outbox row per event, for a relay to deliver to a broker.
	Relay bool
	// WriteVersion is the payload version Publish writes.
	WriteVersion int
	// Versions holds each payload version's JSON Schema, oldest first, with the
	// upcasts between them: the same machinery as a job's payload.
	Versions []Version
	// Subscribers are the jobs each Publish enqueues in the same transaction.
	Subscribers []Subscriber

	// contract checks, fills and upcasts the payloads: the jobs' payload machinery,
	// built from the event's versions.
	contract *JobType
}

// Subscriber is a job created from every published event, in its transaction.
type Subscriber struct {
	Job *JobType
	// Version is the job's payload version that the event's write version is stored
	// as when the job is typed as the event (Map is nil): the event's payload becomes
	// the job's, unchanged, and workers upcast it to the job's newest version as they
	// do any stored job. jobc check proves that version accepts every payload of the
	// event's write version. 0 means the job's write version.
	Version int
	// Map, if set, builds the job's payload from the event's instead: each event field
	// (key) is copied, when present, to the job field (value); the job is written at
	// its write version, with its defaults, and validated against it.
	Map map[string]string

	same bool // typed as the event, with the event's write schema: no second validation
}

// MustEventType is NewEventType for generated code, whose specs are checked when they
// are generated: it panics on error.
func MustEventType(t EventType) *EventType {
	et, err := NewEventType(t)
	if err != nil {
		panic(err)
	}
	return et
}

// NewEventType checks t and compiles its schemas.
func NewEventType(t EventType) (*EventType, error) {
	if t.Name == "" {
		return nil, errors.New("jobc: event type without a name")
	}
	if t.Subject == "" {
		return nil, fmt.Errorf("jobc: event %s: no subject", t.Name)
	}
	contract, err := NewJobType(JobType{
		Kind: t.Name, Queue: "-", MaxAttempts: 1, WriteVersion: t.WriteVersion, Versions: t.Versions,
	})
	if err != nil {
		// The job type's errors say "job type"; this is an event's payload.
		return nil, fmt.Errorf("jobc: event %s: %s", t.Name, strings.TrimPrefix(err.Error(), "jobc: job type "+t.Name+": "))
	}
	et := t
	et.contract = contract
	et.Versions = contract.Versions
	et.OrderingKey = append([]string(nil), t.OrderingKey...)
	for _, f := range et.OrderingKey {
		if f == "" || strings.Contains(f, ".") {
			return nil, fmt.Errorf("jobc: event %s: ordering key field %q: want a top-level payload field", t.Name, f)
		}
	}
	et.Subscribers = make([]Subscriber, len(t.Subscribers))
	write := contract.schemaOf(t.WriteVersion)
	for i, s := range t.Subscribers {
		if s.Job == nil {
			return nil, fmt.Errorf("jobc: event %s: subscriber %d has no job type", t.Name, i)
		}
		if s.Map != nil {
			targets := map[string]string{}
			for from, to := range s.Map {
				if other, dup := targets[to]; dup {
					return nil, fmt.Errorf("jobc: event %s: subscriber %s: fields %s and %s both map to %s", t.Name, s.Job.Kind, min(from, other), max(from, other), to)
				}
				targets[to] = from
			}
			s.Map = copyMap(s.Map)
			s.Version = s.Job.WriteVersion
		} else {
			if s.Version == 0 {
				s.Version = s.Job.WriteVersion
			}
			if _, ok := s.Job.schemas[s.Version]; !ok {
				return nil, fmt.Errorf("jobc: event %s: subscriber %s: version %d is not one of the job's versions", t.Name, s.Job.Kind, s.Version)
			}
			s.same = s.Job.schemaOf(s.Version) == write
		}
		et.Subscribers[i] = s
	}
	return &et, nil
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// schemaOf returns version n's JSON Schema text.
func (jt *JobType) schemaOf(n int) string {
	for _, v := range jt.Versions {
		if v.Number == n {
			return v.Schema
		}
	}
	return ""
}

// Validate checks a payload's JSON against the schema of its version, returning a
// *PayloadError when it does not match. A relay checks every outbox row with it before
// publishing the row, so a payload the in-place check vouches for is not decoded: only
// a payload that check is unsure of (an invalid one among them, whose problems the
// tree validator then names) is parsed.
func (et *EventType) Validate(version int, payload []byte) error {
	if et.contract == nil {
		return fmt.Errorf("jobc: event type %s was not built with NewEventType, which compiles its schemas", et.Name)
	}
	if s, ok := et.contract.schemas[version]; ok && s.Check(payload) != schema.Unsure {
		return nil
	}
	return et.contract.Validate(version, payload)
}

// Decode turns a payload of any version this build knows, as a consumer receives it
// from a broker (the Jobc-Version header gives its version), into the newest version's
// JSON: validated against its own version, upcast one version at a time, and checked
// against the newest, as workers decode stored jobs. Generated Decode<Event> functions
// call it and unmarshal the result into the newest payload type.
func (et *EventType) Decode(version int, payload []byte) ([]byte, error) {
	out, err := et.contract.decode(version, payload)
	if err != nil {
		return nil, fmt.Errorf("jobc: decode event %s: %w", et.Name, err)
	}
	return out, nil
}

// CheckUpcast is JobType.CheckUpcast for the event's payload: jobc check runs sample
// documents of every older version through it.
func (et *EventType) CheckUpcast(from int, payload []byte) ([]byte, error) {
	return et.contract.CheckUpcast(from, payload)
}

// orderingKey returns the ordering key of a payload, decoded as doc, or nil for an
// unordered event. A key of one field is that field's value as text (a string without
// its quotes, any other scalar as its JSON); a key of several is the JSON array of their
// values. A relay hands the key to the broker (Kafka's record key) as it is.
func (et *EventType) orderingKey(doc any) (*string, error) {
	if len(et.OrderingKey) == 0 {
		return nil, nil
	}
	obj, _ := doc.(map[string]any)
	values := make([]any, len(et.OrderingKey))
	for i, f := range et.OrderingKey {
		v, ok := obj[f]
		if !ok || v == nil {
			return nil, fmt.Errorf("ordering key field %s is absent", f)
		}
		switch v.(type) {
		case map[string]any, []any:
			return nil, fmt.Errorf("ordering key field %s is not a scalar", f)
		}
		values[i] = v
	}
	if s, ok := values[0].(string); ok && len(values) == 1 {
		return &s, nil
	}
	var b []byte
	var err error
	if len(values) == 1 {
		b, err = json.Marshal(values[0])
	} else {
		b, err = json.Marshal(values)
	}
	if err != nil {
		return nil, fmt.Errorf("ordering key: %w", err)
	}
	s := string(b)
	return &s, nil
}

// sortedKeys returns the distinct keys, sorted.
func sortedKeys(keys []*string) []string {
	seen := make(map[string]bool, len(keys))
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if k != nil && !seen[*k] {
			seen[*k] = true
			out = append(out, *k)
		}
	}
	sort.Strings(out)
	return out
}
