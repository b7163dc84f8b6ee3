package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/schema"
)

// JobType describes one kind of job to the runtime. Generated code builds one per job of
// the spec with MustJobType; applications use the generated functions instead.
type JobType struct {
	Kind        string
	Aliases     []string // former kinds; stored rows under these are still worked
	Queue       string
	Priority    int
	MaxAttempts int
	Timeout     time.Duration // a handler's context is cancelled after this; 0: none
	Backoff     Backoff
	// Classes are the error classes the job declares. An error of no declared class
	// is handled as DefaultClass, or retried with Backoff when that is empty too.
	Classes      []ErrorClass
	DefaultClass string
	// Transactional jobs get a transaction that also completes them.
	Transactional bool
	// Unique, if set, keeps at most one job per key.
	Unique *Unique
	// Flow, if set, limits and orders the kind's starts fleet-wide (concurrency and
	// rate by key, fairness, sequences); QueueFlow, if set, is its queue's limits,
	// which every job type of the queue carries alike.
	Flow      *Flow
	QueueFlow *Flow
	// Schedule, if set, enqueues the job periodically.
	Schedule *Schedule
	// WriteVersion is the payload version enqueue writes.
	WriteVersion int
	// Versions holds each payload version's JSON Schema, oldest first.
	Versions []Version
	// ResultWriteVersion and ResultVersions are the job's result contract, for a job
	// type whose handlers return a typed result (HandleResult): the version the
	// results are stored as, and each version's JSON Schema, oldest first, with the
	// upcasts between them, as for payloads. Both are zero for a job type without one.
	ResultWriteVersion int
	ResultVersions     []Version

	schemas map[int]*schema.Schema
	// result checks, fills and upcasts the results: the payload machinery, built
	// from the result versions (as an event's contract is); nil without a result.
	result *JobType
}

// Unique keeps at most one job of a kind per key while it is in one of the While
// states. The key is made of payload fields and, with a Period, of the period the
// enqueue falls in: with Period 1h, one job per key and hour.
type Unique struct {
	Fields []string // top-level payload fields
	// While defaults to available, scheduled and running; with OnConflictReplace, to
	// available and scheduled, the only states it may then hold.
	While      []State
	Period     time.Duration
	OnConflict OnConflict // what an enqueue of a held key does; default OnConflictSkip
}

// OnConflict is what an enqueue does when another job holds its unique key.
type OnConflict string

const (
	// OnConflictSkip inserts nothing and returns the holder (Enqueued.Duplicate). The
	// zero value means it too.
	OnConflictSkip OnConflict = "skip"
	// OnConflictReplace debounces: while the holder waits (available or scheduled), the
	// enqueue writes its payload, payload version, metadata and run time into it and
	// returns it (Enqueued.Replaced). The key is held only while its job waits, so once
	// the holder runs, an enqueue inserts a new job; a running job is never changed.
	OnConflictReplace OnConflict = "replace"
)

// Schedule makes workers enqueue the job periodically, with an empty payload whose
// defaults apply. Every worker may run the scheduler: each occurrence has a unique key,
// so N schedulers produce one job per occurrence.
type Schedule struct {
	Cron     string // standard five fields, or a descriptor such as @hourly
	Timezone string // IANA name; default UTC
}

// Version is one payload version of a job type.
type Version struct {
	Number int
	// Schema is the JSON Schema (draft 2020-12), canonical JSON; generated code
	// indents it, and NewJobType compacts it back.
	Schema string
	// Upcast turns a payload of the previous version into this one. nil means the
	// previous version's payloads are already valid here (the versions are compatible).
	Upcast Upcast
}

// MustJobType is NewJobType for generated code, whose specs are checked when they are
// generated: it panics on error.
func MustJobType(t JobType) *JobType {
	jt, err := NewJobType(t)
	if err != nil {
		panic(err)
	}
	return jt
}

// NewJobType checks t and compiles its schemas.
func NewJobType(t JobType) (*JobType, error) {
	if t.Kind == "" {
		return nil, errors.New("jobc: job type without a kind")
	}
	if t.Queue == "" {
		return nil, fmt.Errorf("jobc: job type %s: no queue", t.Kind)
	}
	if t.MaxAttempts < 1 {
		return nil, fmt.Errorf("jobc: job type %s: max attempts %d, want at least 1", t.Kind, t.MaxAttempts)
	}
	if len(t.Versions) == 0 {
		return nil, fmt.Errorf("jobc: job type %s: no payload versions", t.Kind)
	}
	if t.Unique != nil {
		if err := t.Unique.check(t.Kind); err != nil {
			return nil, err
		}
	}
	for _, f := range []struct {
		flow  *Flow
		queue bool
	}{{t.Flow, false}, {t.QueueFlow, true}} {
		if f.flow != nil {
			if err := f.flow.check(t.Kind, f.queue); err != nil {
				return nil, err
			}
		}
	}
	jt := t
	jt.schemas = make(map[int]*schema.Schema, len(t.Versions))
	for _, v := range t.Versions {
		s, err := schema.Compile([]byte(v.Schema))
		if err != nil {
			return nil, fmt.Errorf("jobc: job type %s: version %d schema: %w", t.Kind, v.Number, err)
		}
		jt.schemas[v.Number] = s
	}
	if _, ok := jt.schemas[t.WriteVersion]; !ok {
		return nil, fmt.Errorf("jobc: job type %s: write version %d is not one of its versions", t.Kind, t.WriteVersion)
	}
	if len(t.ResultVersions) > 0 {
		res, err := NewJobType(JobType{Kind: t.Kind, Queue: "-", MaxAttempts: 1, WriteVersion: t.ResultWriteVersion, Versions: t.ResultVersions})
		if err != nil {
			// Its errors say "version N schema"; this is the result's.
			return nil, fmt.Errorf("jobc: job type %s: result %s", t.Kind, strings.TrimPrefix(err.Error(), "jobc: job type "+t.Kind+": "))
		}
		jt.result, jt.ResultVersions = res, res.Versions
	} else if t.ResultWriteVersion != 0 {
		return nil, fmt.Errorf("jobc: job type %s: result write version %d without result versions", t.Kind, t.ResultWriteVersion)
	}
	jt.Versions = append([]Version(nil), t.Versions...)
	for i, v := range jt.Versions {
		// Generated code writes the schema indented for reading; the runtime keeps the
		// canonical JSON it was rendered from, so schemas compare equal by meaning
		// (an event and a subscriber sharing one) whatever their layout.
		var b bytes.Buffer
		if err := json.Compact(&b, []byte(v.Schema)); err != nil {
			return nil, fmt.Errorf("jobc: job type %s: version %d schema: %w", t.Kind, v.Number, err)
		}
		jt.Versions[i].Schema = b.String()
	}
	sort.Slice(jt.Versions, func(i, j int) bool { return jt.Versions[i].Number < jt.Versions[j].Number })
	for i, v := range jt.Versions {
		if i > 0 && v.Number != jt.Versions[i-1].Number+1 {
			return nil, fmt.Errorf("jobc: job type %s: versions must be consecutive, found %d after %d", t.Kind, v.Number, jt.Versions[i-1].Number)
		}
	}
	return &jt, nil
}

// minVersion and maxVersion bound the versions this build decodes.
func (jt *JobType) minVersion() int { return jt.Versions[0].Number }
func (jt *JobType) maxVersion() int { return jt.Versions[len(jt.Versions)-1].Number }

func (jt *JobType) class(name string) (ErrorClass, bool) {
	for _, c := range jt.Classes {
		if c.Name == name {
			return c, true
		}
	}
	return ErrorClass{}, false
}

// Validate checks a payload's JSON against the schema of its version.
func (jt *JobType) Validate(version int, payload []byte) error {
	_, err := jt.parse(version, payload)
	return err
}

// parse decodes a payload of version and validates it, returning the decoded document.
// A payload that would not reach a handler exactly (schema.Exact) is refused first,
// with those problems alone.
func (jt *JobType) parse(version int, payload []byte) (any, error) {
	s, ok := jt.schemas[version]
	if !ok {
		return nil, &PayloadError{Kind: jt.Kind, Version: version, Problems: []Problem{{Message: fmt.Sprintf("unknown payload version %d (this build knows %d..%d)", version, jt.minVersion(), jt.maxVersion())}}}
	}
	if ps := exactProblems(s, payload); ps != nil {
		return nil, &PayloadError{Kind: jt.Kind, Version: version, Problems: ps}
	}
	doc, err := schema.Decode(payload)
	if err != nil {
		return nil, &PayloadError{Kind: jt.Kind, Version: version, Problems: []Problem{{Message: "not valid JSON: " + err.Error()}}}
	}
	if err := jt.check(version, s, doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// check validates a decoded document against s, the schema of version.
func (jt *JobType) check(version int, s *schema.Schema, doc any) error {
	ps := s.Validate(doc)
	if len(ps) == 0 {
		return nil
	}
	e := &PayloadError{Kind: jt.Kind, Version: version, Problems: make([]Problem, len(ps))}
	for i, p := range ps {
		e.Problems[i] = Problem{Field: p.Field, Message: p.Message}
	}
	return e
}

// marshalPayload encodes a payload, refuses what would not reach a worker exactly
// (encodeExact), fills in the schema's defaults for properties it
// leaves out, and checks it against version's schema. The payload is encoded once.
// When the schema declares no defaults and the caller needs no decoded document
// (withDoc false), Check validates the bytes in place and the document returned is nil;
// otherwise, or when Check is unsure (which includes every invalid payload, so errors
// are the tree validator's), the bytes are decoded once, for validation, and the
// decoded document is returned too, so that the unique key is read from it rather than
// from another parse. Only when the schema declares defaults is the document encoded
// again, after filling them in: always then, so the bytes (and any unique key taken
// from them) are what earlier releases wrote.
func (jt *JobType) marshalPayload(version int, payload any, withDoc bool) ([]byte, any, error) {
	s := jt.schemas[version]
	raw, err := json.Marshal(payload)
	if err != nil {
		return nil, nil, jt.encodeError(version, s, payload, err)
	}
	if !withDoc && !s.HasDefaults() && s.Check(raw) == schema.Valid && !bytes.Contains(raw, replacedUTF8) {
		return raw, nil, nil
	}
	if ps := encodedProblems(s, raw, payload); ps != nil {
		return nil, nil, &PayloadError{Kind: jt.Kind, Version: version, Problems: ps}
	}
	doc, err := schema.Decode(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("encode %s payload: %w", jt.Kind, err)
	}
	if s.HasDefaults() {
		s.FillDefaults(doc)
		if raw, err = json.Marshal(doc); err != nil {
			return nil, nil, fmt.Errorf("encode %s payload: %w", jt.Kind, err)
		}
	}
	if err := jt.check(version, s, doc); err != nil {
		return nil, nil, err
	}
	return raw, doc, nil
}

// encodeError is the error of a payload json.Marshal refused: a *PayloadError naming
// the NaN or infinity that made it refuse, else err with context.
func (jt *JobType) encodeError(version int, s *schema.Schema, payload any, err error) error {
	if _, ps, err2 := encodeExact(s, payload); err2 == nil && ps != nil {
		return &PayloadError{Kind: jt.Kind, Version: version, Problems: ps}
	}
	return fmt.Errorf("encode %s payload: %w", jt.Kind, err)
}
