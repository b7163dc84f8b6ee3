package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
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
	// Schedule, if set, enqueues the job periodically.
	Schedule *Schedule
	// WriteVersion is the payload version enqueue writes.
	WriteVersion int
	// Versions holds each payload version's JSON Schema, oldest first.
	Versions []Version

	schemas  map[int]*jsonschema.Schema
	defaults map[int]bool // versions whose schema declares defaults somewhere
}

// Unique keeps at most one job of a kind per key while it is in one of the While
// states. The key is made of payload fields and, with a Period, of the period the
// enqueue falls in: with Period 1h, one job per key and hour.
type Unique struct {
	Fields []string // top-level payload fields
	While  []State  // default: available, scheduled, running
	Period time.Duration
}

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
	Schema string // JSON Schema (draft 2020-12), canonical JSON
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
	jt := t
	jt.schemas = make(map[int]*jsonschema.Schema, len(t.Versions))
	jt.defaults = make(map[int]bool, len(t.Versions))
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	for _, v := range t.Versions {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(v.Schema))
		if err != nil {
			return nil, fmt.Errorf("jobc: job type %s: version %d schema: %w", t.Kind, v.Number, err)
		}
		url := fmt.Sprintf("jobc:///%s/v%d.json", t.Kind, v.Number)
		if err := c.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("jobc: job type %s: version %d schema: %w", t.Kind, v.Number, err)
		}
		s, err := c.Compile(url)
		if err != nil {
			return nil, fmt.Errorf("jobc: job type %s: version %d schema: %w", t.Kind, v.Number, err)
		}
		jt.schemas[v.Number] = s
		jt.defaults[v.Number] = hasDefaults(s, map[*jsonschema.Schema]bool{})
	}
	if _, ok := jt.schemas[t.WriteVersion]; !ok {
		return nil, fmt.Errorf("jobc: job type %s: write version %d is not one of its versions", t.Kind, t.WriteVersion)
	}
	jt.Versions = append([]Version(nil), t.Versions...)
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
	s, ok := jt.schemas[version]
	if !ok {
		return &PayloadError{Kind: jt.Kind, Version: version, Problems: []Problem{{Message: fmt.Sprintf("unknown payload version %d (this build knows %d..%d)", version, jt.minVersion(), jt.maxVersion())}}}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(payload))
	if err != nil {
		return &PayloadError{Kind: jt.Kind, Version: version, Problems: []Problem{{Message: "not valid JSON: " + err.Error()}}}
	}
	if err := s.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return &PayloadError{Kind: jt.Kind, Version: version, Problems: problems(ve)}
		}
		return &PayloadError{Kind: jt.Kind, Version: version, Problems: []Problem{{Message: err.Error()}}}
	}
	return nil
}

// PayloadError says why a payload does not match its version's schema.
type PayloadError struct {
	Kind     string
	Version  int
	Problems []Problem
}

// Problem is one schema violation, at a JSON pointer into the payload.
type Problem struct {
	Field   string // "/recipient", "/items/0/sku"; "" for the whole payload
	Message string
}

func (e *PayloadError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid %s payload (version %d): ", e.Kind, e.Version)
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		if p.Field != "" {
			b.WriteString(p.Field)
			b.WriteString(": ")
		}
		b.WriteString(p.Message)
	}
	return b.String()
}

func problems(ve *jsonschema.ValidationError) []Problem {
	p := message.NewPrinter(language.English)
	var out []Problem
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			field := ""
			if len(e.InstanceLocation) > 0 {
				field = "/" + strings.Join(e.InstanceLocation, "/")
			}
			out = append(out, Problem{Field: field, Message: e.ErrorKind.LocalizedString(p)})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out
}

// marshalPayload encodes a payload, fills in the schema's defaults for properties it
// leaves out, and checks it against version's schema.
func (jt *JobType) marshalPayload(version int, payload any) ([]byte, error) {
	raw, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("encode %s payload: %w", jt.Kind, err)
	}
	if jt.defaults[version] {
		if raw, err = withDefaults(raw, jt.schemas[version]); err != nil {
			return nil, fmt.Errorf("encode %s payload: %w", jt.Kind, err)
		}
	}
	if err := jt.Validate(version, raw); err != nil {
		return nil, err
	}
	return raw, nil
}
