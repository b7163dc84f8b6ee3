// Package spec loads a jobc project — the config file jobc.yaml and the job files it
// includes — into a checked model. Every problem is reported as a Diagnostic that names
// file, line, column and the path of the offending field, and one run reports them all.
package spec

import (
	"time"

	"go.yaml.in/yaml/v3"
)

// ConfigNames returns the file names Load looks for, in order.
func ConfigNames() []string { return []string{"jobc.yaml", "jobc.yml"} }

// Project is a loaded, checked spec.
type Project struct {
	Dir       string // the directory Load was given
	File      string // the config file, relative to Dir
	Version   int
	Package   string // Go package name of the generated code
	Out       string // output directory, relative to Dir
	OutPos    Pos    // where out is set
	Include   []string
	Types     map[string]GoType // Go type per JSON-Schema format
	Classes   []*ErrorClass     // in declaration order
	Jobs      []*Job            // sorted by kind
	Events    []*Event          // sorted by name
	Workflows []*Workflow       // sorted by name
	Queues    []*Queue          // queues with flow control, in declaration order
	Defaults  Defaults
	// Producers names the files generated for producers in other languages.
	Producers Producers
}

// Producers are the files `jobc generate` writes for code that enqueues jobs without
// the generated Go: paths relative to the project directory, "" for none.
type Producers struct {
	// SQL holds a jobc_enqueue_<kind> function per job type, applied like a migration.
	SQL    string
	SQLPos Pos
	// TypeScript holds payload types and enqueue functions for node-postgres, which
	// call the SQL functions.
	TypeScript    string
	TypeScriptPos Pos
}

// Defaults apply to every job that does not set the field.
type Defaults struct {
	Queue   string
	Timeout time.Duration
}

// GoType names a Go type by import path and name, for format overrides.
type GoType struct {
	Import string // "" for a predeclared or same-package type
	Name   string // e.g. "UUID"
}

// ErrorClass is a project-wide error class.
type ErrorClass struct {
	Name           string
	Pos            Pos
	Description    string
	Retry          bool
	Backoff        *Backoff // nil: the job's
	DelayFromError bool     // the handler supplies the delay (retry-after)
	MaxAttempts    int      // 0: the job's
}

// BackoffKind names how delays grow.
type BackoffKind string

const (
	Exponential BackoffKind = "exponential"
	Linear      BackoffKind = "linear"
	Constant    BackoffKind = "constant"
)

// Backoff is a retry delay policy.
type Backoff struct {
	Kind    BackoffKind
	Initial time.Duration
	Max     time.Duration
	Jitter  float64
}

// Job is one declared job type.
type Job struct {
	Kind         string
	Pos          Pos
	Description  string
	Queue        string
	Priority     int
	Timeout      time.Duration
	MaxAttempts  int
	Backoff      Backoff
	Errors       []string // classes this job may return, in declaration order
	DefaultError string   // class of errors a handler returns without one; "" retries with Backoff
	Unique       *Unique
	Flow         *Flow // the job's flow control (concurrency, rate, fairness, sequence); nil: none
	QueueFlow    *Flow // its queue's, from queues:, shared by the queue's jobs; nil: none
	Schedule     *Schedule
	Payload      Payload
	// Result is the job's result contract: the typed value its handlers return with
	// success, stored with the completed job and read back by its id; nil: none.
	Result        *Payload
	Deprecated    string // non-empty: the job is deprecated, and this says why
	Aliases       []string
	Transactional bool

	errorsPos       []Pos // of each entry of Errors
	defaultErrorPos Pos
}

// Unique makes at most one job exist per key while it is in one of While's states.
type Unique struct {
	Pos    Pos
	Key    []string // payload fields
	While  []string // job states
	Period time.Duration
	// OnConflict is OnConflictSkip or OnConflictReplace (a debounce: then While is
	// available and scheduled).
	OnConflict string

	keyPos []Pos // of each entry of Key
}

// Schedule enqueues a job periodically.
type Schedule struct {
	Pos      Pos
	Cron     string
	Timezone string

	cronPos, timezonePos Pos
}

// Payload is a job's versioned payload contract.
type Payload struct {
	Pos          Pos
	WriteVersion int
	// WriteVersionPos is where write_version is set; the zero Pos when it is not,
	// and WriteVersion defaults to the newest version.
	WriteVersionPos Pos
	Versions        []*Version // ascending
}

// Newest returns the highest version.
func (p Payload) Newest() *Version { return p.Versions[len(p.Versions)-1] }

// Version returns version n, or nil.
func (p Payload) Version(n int) *Version {
	for _, v := range p.Versions {
		if v.Number == n {
			return v
		}
	}
	return nil
}

// Version is one payload version.
type Version struct {
	Number  int
	Pos     Pos
	Schema  *Schema
	From    int // the version this one upcasts from; 0 for the first
	Changes []Change
}

// Schema is the JSON Schema of a payload version, written in YAML. It keeps the YAML
// node so that property order and positions survive.
//
// A Schema is self-contained: every schema that a $ref took from another file
// (./schemas/address.json, money.yaml#/$defs/Amount) is inlined under the root's $defs
// and the $ref rewritten to "#/$defs/<name>", so Node holds local references only. Its
// nodes keep their positions in the file they came from; Inlined says which file.
type Schema struct {
	File string // the file of Node, relative to the project directory
	Path string // dotted path of the schema in its file, for diagnostics
	Node *yaml.Node
	// Inlined maps each $defs name taken from another file to where it came from.
	Inlined map[string]Source
}

// ChangeOp is a declarative upcast step.
type ChangeOp string

const (
	Rename ChangeOp = "rename" // a field's name changes
	Add    ChangeOp = "add"    // a field appears, filled with Default (see Change.Require)
	Remove ChangeOp = "remove" // a field disappears
	Widen  ChangeOp = "widen"  // a field's type widens (integer → number, T → T|null)
)

// Name is the change's key in the spec: its Op, or "require".
func (c Change) Name() string {
	if c.Op == Add && c.Require {
		return "require"
	}
	return string(c.Op)
}

// Change is one declarative upcast step from the previous version.
type Change struct {
	Pos     Pos
	Op      ChangeOp
	Field   string // add, remove, widen
	From    string // rename
	To      string // rename
	Default any    // add: JSON value
	// Require marks the form require: {field, default} of add: the field exists in
	// the previous version as optional and becomes required, filled with Default
	// where it is absent. Its upcast is the same as add's (AddField fills an absent
	// field only); only the checks differ.
	Require bool

	fieldPos, fromPos, toPos, defaultPos Pos
}
