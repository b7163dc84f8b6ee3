package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// WorkflowType describes one workflow to the runtime: steps that each run once the
// steps they come after have completed (a job, a job per item of a list, a sleep, or a
// wait for a signal), each job's payload mapped from the workflow's input, its item
// and its predecessors' results. StartWorkflow records the workflow under its whole
// definition (stored once, the first time a start sends it), so a workflow runs to its
// end as it was started, whichever build runs its steps; PostgreSQL advances it as its steps' jobs finish, in the transactions that
// record their outcomes, and as its timers come due, with no leader.
type WorkflowType struct {
	Name string
	// InputWriteVersion and InputVersions are the input's contract, as a job type's
	// WriteVersion and Versions are its payload's.
	InputWriteVersion int
	InputVersions     []Version
	// Signals are the typed messages a running workflow can be sent (SignalWorkflow)
	// and its wait steps wait for.
	Signals []Signal
	Steps   []Step
	// OnFailure is what a failed step does to the rest; the zero value is
	// OnFailureCancel.
	OnFailure OnFailure

	input      *JobType   // the input's contract, with the payloads' machinery
	definition string     // what StartWorkflow records (workflowDefinition), made once
	firstMaps  []firstMap // the maps of the job steps that come after none (firstPayloads)
}

// Signal is a signal a workflow declares, with its payload's versioned contract.
type Signal struct {
	Name         string
	WriteVersion int
	Versions     []Version

	contract *JobType // the payload's machinery
}

// OnFailure is what a failed step (out of attempts, or cancelled) does to the rest of
// its workflow. Either way the steps that come after it, directly or not, are
// cancelled: they can never run.
type OnFailure string

const (
	// OnFailureCancel fails the workflow at once: the steps that wait are cancelled
	// and the running steps' jobs asked to stop.
	OnFailureCancel OnFailure = "cancel"
	// OnFailureContinue lets the steps that do not depend on the failed one run to
	// their end; the workflow then ends failed.
	OnFailureContinue OnFailure = "continue"
)

// OnItemFailure is what an item of a for_each step that failed (or was cancelled) does
// to its step.
type OnItemFailure string

const (
	// OnItemFailureFail fails the step at once, and its other items' jobs are
	// stopped; the workflow goes on as its OnFailure says.
	OnItemFailureFail OnItemFailure = "fail"
	// OnItemFailureContinue lets the other items run: the step completes when every
	// item has ended, whatever its outcome, with null in its result for each item
	// that did not complete, and counts that say how many did (<step>.completed,
	// <step>.failed, <step>.cancelled): a batch's callback step reads them.
	OnItemFailureContinue OnItemFailure = "continue"
)

// Step is one step of a workflow: once every step of After has completed, it runs a
// job of Job (a job step), a job of Job per item of the list ForEach reads (a for_each
// step), sleeps for Sleep, or waits for a signal (Wait). Exactly one of Job, Sleep
// and Wait is set.
type Step struct {
	Name  string
	After []string
	Job   *JobType
	// Map builds the job's payload, field by field: each entry sets the top-level
	// payload field (key) to the value at a source path (value): "input" or
	// "input.<field>..." of the workflow's input, "item" or "item.<field>..." of a
	// for_each step's item, "<step>.result" or "<step>.result.<field>..." of the result
	// of a step that this one comes after, directly or not (a job step's job result,
	// the list of a for_each step's item results, a wait step's signal), and
	// "<step>.completed", "<step>.failed" or "<step>.cancelled", how many items of a
	// for_each step ended so. A source that is absent leaves its field out. Nil: the
	// job's payload is the item (a for_each step) or the workflow's input as it is,
	// which must then be valid as the job's write version.
	Map map[string]string
	// ForEach, when set, is the source path of a list ("input.<field>..." or
	// "<step>.result..."): the step runs a job per element, in parallel, and completes
	// when all have, with the list of their results as its result. An absent list has
	// no items.
	ForEach string
	// OnItemFailure is what a failed item does to a for_each step; the zero value is
	// OnItemFailureFail.
	OnItemFailure OnItemFailure
	// Sleep makes a sleep step: it completes this long after it starts, by the
	// database's clock.
	Sleep time.Duration
	// Wait makes a wait step.
	Wait *Wait
}

// Wait makes a step wait for a signal: the step completes with the first signal of
// that name the workflow is sent (before the step began to wait, or after) as its
// result, or fails when Timeout (zero: none) passes without one.
type Wait struct {
	Signal  string
	Timeout time.Duration
}

// StepKind is what a step runs.
type StepKind string

const (
	StepJob     StepKind = "job"
	StepForEach StepKind = "for_each"
	StepSleep   StepKind = "sleep"
	StepWait    StepKind = "wait"
)

// Kind says what s runs.
func (s Step) Kind() StepKind {
	switch {
	case s.Job != nil && s.ForEach != "":
		return StepForEach
	case s.Job != nil:
		return StepJob
	case s.Wait != nil:
		return StepWait
	}
	return StepSleep
}

// MustWorkflowType is NewWorkflowType for generated code: it panics on error.
func MustWorkflowType(t WorkflowType) *WorkflowType {
	wt, err := NewWorkflowType(t)
	if err != nil {
		panic(err)
	}
	return wt
}

// reservedSteps are the first parts of a source path that name no step.
var reservedSteps = []string{"input", "item"}

// maxTimer bounds a sleep and a wait's timeout: 31 years, in milliseconds well within
// what jobc_workflow_start accepts.
const maxTimer = 31 * 365 * 24 * time.Hour

// NewWorkflowType checks t: its input and signal contracts compile; step names are
// unique and not input or item; each step is exactly one of a job step, a sleep or a
// wait for a declared signal; every step of After is declared and no step comes after
// itself, directly or not; each Map and ForEach source reads the input, the step's
// item, or what an earlier step leaves (a result, or a for_each step's counts). A
// step's job type may not have flow control or a unique key yet: the database inserts
// the steps' jobs.
func NewWorkflowType(t WorkflowType) (*WorkflowType, error) {
	fail := func(format string, args ...any) (*WorkflowType, error) {
		return nil, fmt.Errorf("jobc: workflow %s: %s", t.Name, fmt.Sprintf(format, args...))
	}
	if t.Name == "" {
		return nil, errors.New("jobc: workflow without a name")
	}
	switch t.OnFailure {
	case "":
		t.OnFailure = OnFailureCancel
	case OnFailureCancel, OnFailureContinue:
	default:
		return fail("on failure %q: want cancel or continue", t.OnFailure)
	}
	input, err := NewJobType(JobType{Kind: t.Name, Queue: "-", MaxAttempts: 1, WriteVersion: t.InputWriteVersion, Versions: t.InputVersions})
	if err != nil {
		return fail("input %s", strings.TrimPrefix(err.Error(), "jobc: job type "+t.Name+": "))
	}
	signals := slices.Clone(t.Signals)
	d := workflowDefinition{OnFailure: t.OnFailure}
	for i := range signals {
		g := &signals[i]
		if g.Name == "" || slices.ContainsFunc(signals[:i], func(o Signal) bool { return o.Name == g.Name }) {
			return fail("signal %d: a name, once", i+1)
		}
		c, err := NewJobType(JobType{Kind: t.Name + "." + g.Name, Queue: "-", MaxAttempts: 1, WriteVersion: g.WriteVersion, Versions: g.Versions})
		if err != nil {
			return fail("signal %s: %s", g.Name, strings.TrimPrefix(err.Error(), "jobc: job type "+t.Name+"."+g.Name+": "))
		}
		g.contract, g.Versions = c, c.Versions
		if d.Signals == nil {
			d.Signals = map[string]int{}
		}
		d.Signals[g.Name] = g.WriteVersion
	}
	if len(t.Steps) == 0 {
		return fail("no steps")
	}
	byName := map[string]*Step{}
	for i := range t.Steps {
		s := &t.Steps[i]
		kinds := 0
		for _, set := range []bool{s.Job != nil, s.Sleep != 0, s.Wait != nil} {
			if set {
				kinds++
			}
		}
		switch {
		case s.Name == "":
			return fail("step %d has no name", i+1)
		case slices.Contains(reservedSteps, s.Name):
			return fail("step %s: the name is reserved for map sources", s.Name)
		case byName[s.Name] != nil:
			return fail("step %s is declared twice", s.Name)
		case kinds != 1:
			return fail("step %s: want exactly one of a job, a sleep and a wait", s.Name)
		case s.Job == nil && (s.Map != nil || s.ForEach != "" || s.OnItemFailure != ""):
			return fail("step %s: a map, for_each and on_item_failure need a job", s.Name)
		case s.Sleep < 0 || s.Sleep > maxTimer:
			return fail("step %s: sleep %v, want more than 0 and at most %v", s.Name, s.Sleep, maxTimer)
		case s.Wait != nil && !slices.ContainsFunc(signals, func(g Signal) bool { return g.Name == s.Wait.Signal }):
			return fail("step %s waits for signal %q, which the workflow does not declare", s.Name, s.Wait.Signal)
		case s.Wait != nil && (s.Wait.Timeout < 0 || s.Wait.Timeout > maxTimer || (s.Wait.Timeout > 0 && s.Wait.Timeout < time.Millisecond)):
			return fail("step %s: timeout %v, want 0 (none) or 1ms..%v", s.Name, s.Wait.Timeout, maxTimer)
		case s.Sleep > 0 && s.Sleep < time.Millisecond:
			return fail("step %s: sleep %v, want at least 1ms", s.Name, s.Sleep)
		case s.OnItemFailure != "" && (s.ForEach == "" || (s.OnItemFailure != OnItemFailureFail && s.OnItemFailure != OnItemFailureContinue)):
			return fail("step %s: on item failure %q: want fail or continue, on a for_each step", s.Name, s.OnItemFailure)
		case s.Job != nil && (s.Job.Flow != nil || s.Job.QueueFlow != nil):
			return fail("step %s: job type %s has flow control, which workflow steps do not support yet", s.Name, s.Job.Kind)
		case s.Job != nil && s.Job.Unique != nil:
			return fail("step %s: job type %s has a unique key, which workflow steps do not support yet", s.Name, s.Job.Kind)
		}
		byName[s.Name] = s
	}
	for _, s := range t.Steps {
		for _, a := range s.After {
			if byName[a] == nil {
				return fail("step %s comes after %s, which is not a step", s.Name, a)
			}
		}
	}
	// before[s] is every step s comes after, directly or not; a step in its own set
	// is in a cycle.
	before := map[string]map[string]bool{}
	var visit func(name string, path []string) error
	visit = func(name string, path []string) error {
		if before[name] != nil {
			return nil
		}
		if slices.Contains(path, name) {
			return fmt.Errorf("steps %s come after one another in a cycle", strings.Join(append(path[slices.Index(path, name):], name), " -> "))
		}
		set := map[string]bool{}
		for _, a := range byName[name].After {
			if err := visit(a, append(path, name)); err != nil {
				return err
			}
			set[a] = true
			for b := range before[a] {
				set[b] = true
			}
		}
		before[name] = set
		return nil
	}
	for _, s := range t.Steps {
		if err := visit(s.Name, nil); err != nil {
			return fail("%v", err)
		}
	}
	var firstMaps []firstMap
	for _, s := range t.Steps {
		sd := stepDefinition{Name: s.Name, After: s.After}
		if sd.After == nil {
			sd.After = []string{}
		}
		switch s.Kind() {
		case StepSleep:
			ms := s.Sleep.Milliseconds()
			sd.SleepMS = &ms
		case StepWait:
			sd.Wait = &waitDefinition{Signal: s.Wait.Signal}
			if s.Wait.Timeout > 0 {
				ms := s.Wait.Timeout.Milliseconds()
				sd.Wait.TimeoutMS = &ms
			}
		default:
			sd.Kind, sd.Queue, sd.Priority = s.Job.Kind, s.Job.Queue, s.Job.Priority
			sd.MaxAttempts, sd.PayloadVersion = s.Job.MaxAttempts, s.Job.WriteVersion
			if s.ForEach != "" {
				path, err := sourcePath(s.ForEach, false, s.Name, before[s.Name], byName)
				if err != nil {
					return fail("step %s: for_each: %v", s.Name, err)
				}
				if path[0] == "count" {
					return fail("step %s: for_each %q: want a list, of the input or a result", s.Name, s.ForEach)
				}
				sd.ForEach, sd.OnItemFailure = path, s.OnItemFailure
			}
			if s.Map != nil {
				sd.Map = map[string][]string{}
			}
			for field, src := range s.Map {
				path, err := sourcePath(src, s.ForEach != "", s.Name, before[s.Name], byName)
				if err != nil {
					return fail("step %s: map %s: %v", s.Name, field, err)
				}
				sd.Map[field] = path
			}
			if s.Map != nil && s.ForEach == "" && len(s.After) == 0 {
				firstMaps = append(firstMaps, firstMap{step: s.Name, fields: sd.Map})
			}
		}
		d.Steps = append(d.Steps, sd)
	}
	def, err := json.Marshal(d)
	if err != nil {
		return fail("definition: %v", err)
	}
	wt := t
	wt.input, wt.definition, wt.firstMaps = input, string(def), firstMaps
	wt.InputVersions = input.Versions
	wt.Signals = signals
	wt.Steps = slices.Clone(t.Steps)
	return &wt, nil
}

// Definition is what StartWorkflow gives jobc_workflow_start with each workflow it
// starts: the steps as the database runs them, which it checks and stores once, the
// first time it sees this text. The SQL producers' jobc_start_<workflow> functions
// embed it.
func (wt *WorkflowType) Definition() json.RawMessage { return json.RawMessage(wt.definition) }

// sourcePath turns a source into the path jobc_workflow_payload reads: ["input",
// field...], ["item", field...] (where item: in a for_each step), ["result", step,
// field...] for the result of step, or ["count", step, "completed" | "failed" |
// "cancelled"] for a for_each step's counts; a step read must be one of before (the
// steps the reading step comes after) and leave what is read.
func sourcePath(src string, item bool, step string, before map[string]bool, steps map[string]*Step) ([]string, error) {
	parts := strings.Split(src, ".")
	if slices.Contains(parts, "") {
		return nil, fmt.Errorf("source %q: want input[.<field>...], item[.<field>...], <step>.result[.<field>...] or <step>.completed|failed|cancelled", src)
	}
	switch parts[0] {
	case "input":
		return parts, nil
	case "item":
		if !item {
			return nil, fmt.Errorf("source %q: only a for_each step has an item", src)
		}
		return parts, nil
	}
	from := steps[parts[0]]
	switch {
	case from == nil:
		return nil, fmt.Errorf("source %q: %s is neither input, item nor a step", src, parts[0])
	case !before[parts[0]]:
		return nil, fmt.Errorf("source %q: step %s does not come after %s, so what it leaves may not exist yet", src, step, parts[0])
	case len(parts) == 2 && slices.Contains([]string{"completed", "failed", "cancelled"}, parts[1]):
		if from.Kind() != StepForEach {
			return nil, fmt.Errorf("source %q: step %s is no for_each step, which counts its items", src, parts[0])
		}
		return []string{"count", parts[0], parts[1]}, nil
	case parts[1] != "result":
		return nil, fmt.Errorf("source %q: want %s.result[.<field>...] or %s.completed|failed|cancelled", src, parts[0], parts[0])
	}
	switch from.Kind() {
	case StepSleep:
		return nil, fmt.Errorf("source %q: sleep step %s has no result", src, parts[0])
	case StepJob, StepForEach:
		if !from.Job.HasResult() {
			return nil, fmt.Errorf("source %q: job type %s of step %s declares no result", src, from.Job.Kind, parts[0])
		}
	}
	if from.Kind() == StepForEach && len(parts) > 2 {
		return nil, fmt.Errorf("source %q: the result of for_each step %s is the list of its items' results: read %s.result", src, parts[0], parts[0])
	}
	return append([]string{"result", parts[0]}, parts[2:]...), nil
}

// workflowDefinition is what a workflow records of its type when it starts
// (jobc_workflows.definition): what the database needs to run its steps, in the shape
// jobc_workflow_step_valid checks.
type workflowDefinition struct {
	OnFailure OnFailure        `json:"on_failure"`
	Signals   map[string]int   `json:"signals,omitempty"` // name: write version
	Steps     []stepDefinition `json:"steps"`
}

type stepDefinition struct {
	Name           string              `json:"name"`
	After          []string            `json:"after"`
	Kind           string              `json:"kind,omitempty"`
	Queue          string              `json:"queue,omitempty"`
	Priority       int                 `json:"priority,omitempty"`
	MaxAttempts    int                 `json:"max_attempts,omitempty"`
	PayloadVersion int                 `json:"payload_version,omitempty"`
	Map            map[string][]string `json:"map,omitempty"` // nil: the item or the input is the payload
	ForEach        []string            `json:"for_each,omitempty"`
	OnItemFailure  OnItemFailure       `json:"on_item_failure,omitempty"`
	SleepMS        *int64              `json:"sleep_ms,omitempty"`
	Wait           *waitDefinition     `json:"wait,omitempty"`
}

type waitDefinition struct {
	Signal    string `json:"signal"`
	TimeoutMS *int64 `json:"timeout_ms,omitempty"`
}

// WorkflowID names a started workflow.
type WorkflowID int64

// StartWorkflow starts a workflow of wt with input, through db: pass the transaction
// of the business change that needs it, and the workflow, with the jobs of its first
// steps, exists if and only if that transaction commits. The input is checked against
// its write version's schema, against the write version of each step's job that takes
// the input as its payload, and each item of a list of the input a for_each step runs
// without a map against its job's write version; an invalid one returns a
// *PayloadError and starts nothing. One statement. With WithWorkflowKey, a workflow
// of the type that runs with the key is returned instead of starting another.
func StartWorkflow(ctx context.Context, dbtx DBTX, wt *WorkflowType, input any, opts ...StartOption) (WorkflowID, error) {
	var o startOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.key != nil && len(*o.key) > maxWorkflowKey {
		return 0, fmt.Errorf("jobc: start workflow %s: a key of %d bytes, want at most %d", wt.Name, len(*o.key), maxWorkflowKey)
	}
	raw, _, err := wt.input.marshalPayload(wt.InputWriteVersion, input, false)
	if err != nil {
		return 0, fmt.Errorf("jobc: start workflow %s: %w", wt.Name, err)
	}
	for _, s := range wt.Steps {
		if s.Job == nil || s.Map != nil {
			continue
		}
		if s.ForEach == "" {
			if err := s.Job.Validate(s.Job.WriteVersion, raw); err != nil {
				return 0, fmt.Errorf("jobc: start workflow %s: step %s takes the input as its payload: %w", wt.Name, s.Name, err)
			}
			continue
		}
		if !strings.HasPrefix(s.ForEach, "input.") {
			continue // a list a step leaves: its items are checked when their jobs are claimed
		}
		items, err := inputList(raw, strings.Split(s.ForEach, ".")[1:])
		if err != nil {
			return 0, fmt.Errorf("jobc: start workflow %s: step %s: for_each %s: %w", wt.Name, s.Name, s.ForEach, err)
		}
		for i, item := range items {
			if err := s.Job.Validate(s.Job.WriteVersion, item); err != nil {
				return 0, fmt.Errorf("jobc: start workflow %s: step %s: item %d of %s is its job's payload: %w", wt.Name, s.Name, i, s.ForEach, err)
			}
		}
	}
	id, err := db.New(dbtx).StartWorkflow(ctx, db.StartWorkflowParams{
		Name: wt.Name, Definition: wt.definition, InputVersion: int32(wt.InputWriteVersion), Input: raw, Key: o.key,
		Payloads: wt.firstPayloads(raw),
	})
	if err != nil {
		return 0, fmt.Errorf("jobc: start workflow %s: %w", wt.Name, dberr.Describe(err))
	}
	return WorkflowID(id), nil
}

// StartOption configures one StartWorkflow.
type StartOption func(*startOptions)

type startOptions struct {
	key *string
}

// maxWorkflowKey bounds a workflow's key, as jobc_workflow_start does.
const maxWorkflowKey = 512

// WithWorkflowKey makes the start unique by key among the running workflows of its
// type: while one started with the key runs, StartWorkflow returns its id and starts
// nothing, as a unique job's enqueue returns the job that holds its key (a start that
// meets one another transaction is starting waits for that transaction). Once it has
// ended, the key starts a new one. At most 512 bytes.
func WithWorkflowKey(key string) StartOption {
	return func(o *startOptions) { o.key = &key }
}

// inputList returns the elements of the list at path in input, read as the step will
// read it (jsonAt): none when it is absent, an error when it is not a list (the step
// would fail).
func inputList(input []byte, path []string) ([]json.RawMessage, error) {
	cur, err := jsonAt(input, path)
	if err != nil || cur == nil || string(cur) == "null" {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(cur, &items); err != nil {
		return nil, fmt.Errorf("not a list: %.40s", cur)
	}
	return items, nil
}

// firstMap is the map of a job step that comes after none: each field's source,
// ["input", field...], the only source such a step can read.
type firstMap struct {
	step   string
	fields map[string][]string
}

// firstPayloads is what jobc_workflow_start takes as p_payloads: the payload of each
// job step with a map that comes after none, by step name, mapped from the input as
// jobc_workflow_payload maps it, which would otherwise cost a start a statement of
// its own (TestStartPayloadsAgreeWithTheDatabase holds the two to each other). It is
// nil, and the database maps, when there is no such step or the input is not JSON.
func (wt *WorkflowType) firstPayloads(input []byte) json.RawMessage {
	if len(wt.firstMaps) == 0 {
		return nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range wt.firstMaps {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(&b, m.step)
		b.WriteString(":{")
		n := 0
		for field, src := range m.fields {
			v, err := jsonAt(input, src[1:])
			if err != nil {
				return nil
			}
			if v == nil {
				continue // a source that is absent leaves its field out
			}
			if n > 0 {
				b.WriteByte(',')
			}
			n++
			writeJSONString(&b, field)
			b.WriteByte(':')
			b.Write(v)
		}
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return b.Bytes()
}

// writeJSONString writes s as a JSON string.
func writeJSONString(b *bytes.Buffer, s string) {
	q, _ := json.Marshal(s) // a string always marshals
	b.Write(q)
}

// jsonAt reads path in doc as jsonb's #> operator does (jsonb_get_element): at each
// part, a member of an object (the last of the name, which is the one jsonb keeps) or
// an element of a list by its index (listIndex), counted from the end if negative. It
// returns nil where it finds nothing: a missing member, an index past either end or
// that is no index, a part past a scalar.
func jsonAt(doc json.RawMessage, path []string) (json.RawMessage, error) {
	for _, part := range path {
		switch firstByte(doc) {
		case '{':
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(doc, &obj); err != nil {
				return nil, err
			}
			if doc = obj[part]; doc == nil {
				return nil, nil
			}
		case '[':
			var list []json.RawMessage
			if err := json.Unmarshal(doc, &list); err != nil {
				return nil, err
			}
			i, ok := listIndex(part)
			if ok && i < 0 {
				i += int64(len(list))
			}
			if !ok || i < 0 || i >= int64(len(list)) {
				return nil, nil
			}
			doc = list[i]
		default:
			return nil, nil
		}
	}
	return doc, nil
}

// listIndex reads part as jsonb_get_element reads a list's index, with C's strtol
// into an int: white space, a sign and decimal digits, and nothing after them; an
// int's range, without its least value. ok is false for anything else.
func listIndex(part string) (i int64, ok bool) {
	s := strings.TrimLeft(part, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		if i = i*10 + int64(c-'0'); i > math.MaxInt32 {
			return 0, false
		}
	}
	if neg {
		i = -i
	}
	return i, true
}

// firstByte is the first byte of doc that is not white space, 0 if none.
func firstByte(doc []byte) byte {
	for _, c := range doc {
		switch c {
		case ' ', '\t', '\n', '\r':
		default:
			return c
		}
	}
	return 0
}

// SignalWorkflow sends signal name, with payload, to running workflow id of type wt,
// through db (a producer's transaction, like StartWorkflow): the payload is checked
// against the signal's write version and kept, and the workflow's wait steps for it
// that wait complete with it as their result; a wait step that begins to wait later
// takes the first one that was kept. It returns ErrWorkflowNotFound for an unknown id,
// an error wrapping ErrWorkflowEnded for a workflow that has ended (it is sent
// nothing), and a *PayloadError for an invalid payload.
func SignalWorkflow(ctx context.Context, dbtx DBTX, wt *WorkflowType, id WorkflowID, name string, payload any) error {
	i := slices.IndexFunc(wt.Signals, func(g Signal) bool { return g.Name == name })
	if i < 0 {
		return fmt.Errorf("jobc: signal workflow %s %d: it declares no signal %q", wt.Name, id, name)
	}
	g := wt.Signals[i]
	raw, _, err := g.contract.marshalPayload(g.WriteVersion, payload, false)
	if err != nil {
		return fmt.Errorf("jobc: signal workflow %s %d: %s: %w", wt.Name, id, name, err)
	}
	r, err := db.New(dbtx).SignalWorkflow(ctx, db.SignalWorkflowParams{ID: int64(id), Name: name, Version: int32(g.WriteVersion), Payload: raw})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("%w: id %d", ErrWorkflowNotFound, id)
	case err != nil:
		return fmt.Errorf("jobc: signal workflow %s %d: %s: %w", wt.Name, id, name, dberr.Describe(err))
	case r.State != string(WorkflowRunning) && r.Woken == 0:
		return fmt.Errorf("jobc: signal workflow %s %d: %s: it is %s: %w", wt.Name, id, name, r.State, ErrWorkflowEnded)
	}
	return nil
}

// WorkflowState is the state of a workflow.
type WorkflowState string

const (
	WorkflowRunning   WorkflowState = "running"
	WorkflowCompleted WorkflowState = "completed"
	WorkflowFailed    WorkflowState = "failed"
	WorkflowCancelled WorkflowState = "cancelled"
)

// StepState is the state of a workflow's step.
type StepState string

const (
	StepWaiting   StepState = "waiting" // for the steps it comes after
	StepRunning   StepState = "running" // its job waits to run, runs or retries
	StepCompleted StepState = "completed"
	StepFailed    StepState = "failed"
	StepCancelled StepState = "cancelled"
)

// WorkflowInfo is a workflow as GetWorkflow reads it.
type WorkflowInfo struct {
	ID           WorkflowID
	Name         string
	State        WorkflowState
	InputVersion int
	Input        json.RawMessage
	CreatedAt    time.Time
	FinishedAt   *time.Time
	Steps        []StepInfo   // in the order the definition declares them
	Signals      []SignalInfo // the signals it was sent, in the order they came
}

// StepInfo is one step of a workflow.
type StepInfo struct {
	Name  string
	Kind  StepKind
	State StepState
	After []string
	JobID int64 // a job step's job, 0 until the step runs
	// ResultVersion and Result are the step's result, once it completed, as it was
	// stored: its job's result, the list of its items' results (a for_each step), or
	// the signal it took (a wait step); 0 and nil without one.
	ResultVersion int
	Result        json.RawMessage
	// A for_each step's items, once it runs: how many, how many have not ended, and
	// how many of those that ended failed or were cancelled.
	Items, ItemsLeft, ItemsFailed, ItemsCancelled int
	// Signal is what a wait step waits for; WakeAt is when a running sleep step ends
	// or a running wait step stops waiting.
	Signal string
	WakeAt *time.Time
	// Error says why the step failed where no job's error does: a wait that timed
	// out, items that failed, a for_each source that is not a list.
	Error string
	// WaitingOn says, for a step that has not ended, what it waits for: the steps it
	// comes after, its job or items, a timer or a signal.
	WaitingOn             string
	StartedAt, FinishedAt *time.Time
}

// SignalInfo is a signal a workflow was sent.
type SignalInfo struct {
	Name    string
	Version int
	Payload json.RawMessage
	SentAt  time.Time
}

// GetWorkflow reads workflow id, with each of its steps' state and result, and the
// signals it was sent.
func GetWorkflow(ctx context.Context, dbtx DBTX, id WorkflowID) (*WorkflowInfo, error) {
	q := db.New(dbtx)
	w, err := q.GetWorkflow(ctx, int64(id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: id %d", ErrWorkflowNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("jobc: get workflow %d: %w", id, dberr.Describe(err))
	}
	rows, err := q.WorkflowSteps(ctx, int64(id))
	if err != nil {
		return nil, fmt.Errorf("jobc: get workflow %d: its steps: %w", id, dberr.Describe(err))
	}
	signals, err := q.WorkflowSignals(ctx, int64(id))
	if err != nil {
		return nil, fmt.Errorf("jobc: get workflow %d: its signals: %w", id, dberr.Describe(err))
	}
	info := &WorkflowInfo{ID: id, Name: w.Name, State: WorkflowState(w.State), InputVersion: int(w.InputVersion),
		Input: w.Input, CreatedAt: w.CreatedAt, FinishedAt: w.FinishedAt}
	var def workflowDefinition
	if err := json.Unmarshal(w.Definition, &def); err != nil {
		return nil, fmt.Errorf("jobc: get workflow %d: its definition: %w", id, err)
	}
	// A step without a row (none of its kind has one before it runs, a job step none
	// before its job ends) waits.
	byName := map[string]db.WorkflowStepsRow{}
	state := map[string]StepState{}
	for _, r := range rows {
		byName[r.Step] = r
		state[r.Step] = StepState(r.State)
	}
	for _, sd := range def.Steps {
		r, ok := byName[sd.Name]
		if !ok {
			r = db.WorkflowStepsRow{Step: sd.Name, State: string(StepWaiting)}
			state[sd.Name] = StepWaiting
		}
		s := StepInfo{Name: sd.Name, Kind: sd.kind(), State: StepState(r.State), After: sd.After, Result: r.Result,
			WakeAt: r.WakeAt, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt}
		if s.After == nil {
			s.After = []string{}
		}
		if sd.Wait != nil {
			s.Signal = sd.Wait.Signal
		}
		for _, f := range []struct {
			dst *int
			src *int32
		}{{&s.ResultVersion, r.ResultVersion}, {&s.Items, r.Items}, {&s.ItemsLeft, r.ItemsLeft},
			{&s.ItemsFailed, r.ItemsFailed}, {&s.ItemsCancelled, r.ItemsCancelled}} {
			if f.src != nil {
				*f.dst = int(*f.src)
			}
		}
		if r.JobID != nil {
			s.JobID = *r.JobID
		}
		if r.Error != nil {
			s.Error = *r.Error
		}
		info.Steps = append(info.Steps, s)
	}
	for i := range info.Steps {
		info.Steps[i].WaitingOn = info.Steps[i].waitingOn(state)
	}
	for _, g := range signals {
		info.Signals = append(info.Signals, SignalInfo{Name: g.Name, Version: int(g.Version), Payload: g.Payload, SentAt: g.CreatedAt})
	}
	return info, nil
}

func (sd stepDefinition) kind() StepKind {
	switch {
	case sd.Kind != "" && sd.ForEach != nil:
		return StepForEach
	case sd.Kind != "":
		return StepJob
	case sd.Wait != nil:
		return StepWait
	}
	return StepSleep
}

// waitingOn says what a step that has not ended waits for (StepInfo.WaitingOn).
func (s StepInfo) waitingOn(states map[string]StepState) string {
	switch s.State {
	case StepWaiting:
		var left []string
		for _, a := range s.After {
			if states[a] != StepCompleted {
				left = append(left, a)
			}
		}
		return "steps " + strings.Join(left, ", ")
	case StepRunning:
	default:
		return ""
	}
	at := func() string {
		if s.WakeAt == nil {
			return ""
		}
		return " until " + s.WakeAt.UTC().Format(time.RFC3339)
	}
	switch s.Kind {
	case StepForEach:
		return fmt.Sprintf("%d of %d items", s.ItemsLeft, s.Items)
	case StepSleep:
		return "the timer" + at()
	case StepWait:
		return "signal " + s.Signal + at()
	}
	return fmt.Sprintf("job %d", s.JobID)
}

// CheckUpcast runs an input of version from through the upcasts to the newest
// input version, as JobType.CheckUpcast does a payload; jobc check calls it on
// sample documents of every older input version.
func (wt *WorkflowType) CheckUpcast(from int, input []byte) ([]byte, error) {
	return wt.input.CheckUpcast(from, input)
}

// WorkflowFilter selects workflows for ListWorkflows; zero fields select all.
type WorkflowFilter struct {
	Name  string        // of this workflow type
	State WorkflowState // in this state
	After WorkflowID    // with a smaller id (the next page)
	Limit int           // at most this many; default 50, at most 10,000
}

// WorkflowSummary is a workflow as ListWorkflows reads it: without its input and steps.
type WorkflowSummary struct {
	ID                       WorkflowID
	Name                     string
	State                    WorkflowState
	Steps, StepsLeft, Failed int // steps in all, not yet ended, failed or cancelled
	CreatedAt                time.Time
	FinishedAt               *time.Time
}

// WorkflowPage is a page of ListWorkflows, newest first; More says that more match.
type WorkflowPage struct {
	Workflows []WorkflowSummary
	More      bool
}

// ListWorkflows lists the newest workflows that match f, newest first.
func ListWorkflows(ctx context.Context, dbtx DBTX, f WorkflowFilter) (WorkflowPage, error) {
	limit := f.Limit
	switch {
	case limit == 0:
		limit = 50
	case limit < 0 || limit > 10000:
		return WorkflowPage{}, fmt.Errorf("jobc: list workflows: limit %d, want 1..10000", limit)
	}
	p := db.ListWorkflowsParams{Max: int32(limit + 1)}
	if f.Name != "" {
		p.Name = &f.Name
	}
	if f.State != "" {
		s := string(f.State)
		p.State = &s
	}
	if f.After > 0 {
		a := int64(f.After)
		p.After = &a
	}
	rows, err := db.New(dbtx).ListWorkflows(ctx, p)
	if err != nil {
		return WorkflowPage{}, fmt.Errorf("jobc: list workflows: %w", dberr.Describe(err))
	}
	var page WorkflowPage
	if len(rows) > limit {
		rows, page.More = rows[:limit], true
	}
	for _, r := range rows {
		page.Workflows = append(page.Workflows, WorkflowSummary{ID: WorkflowID(r.ID), Name: r.Name, State: WorkflowState(r.State),
			Steps: int(r.Steps), StepsLeft: int(r.StepsLeft), Failed: int(r.FailedSteps), CreatedAt: r.CreatedAt, FinishedAt: r.FinishedAt})
	}
	return page, nil
}

// CancelWorkflow cancels running workflow id: it ends cancelled at once, its waiting
// steps are cancelled, its steps' jobs that wait are cancelled and those that run are
// asked to stop, through their handlers' contexts (their steps end when they do). It
// returns ErrWorkflowNotFound for an unknown id and, for a workflow that had already
// ended, an error wrapping ErrWorkflowEnded that names its state.
func CancelWorkflow(ctx context.Context, dbtx DBTX, id WorkflowID) error {
	r, err := db.New(dbtx).CancelWorkflow(ctx, int64(id))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("%w: id %d", ErrWorkflowNotFound, id)
	case err != nil:
		return fmt.Errorf("jobc: cancel workflow %d: %w", id, dberr.Describe(err))
	case !r.Cancelled:
		return fmt.Errorf("jobc: cancel workflow %d: it is %s: %w", id, r.State, ErrWorkflowEnded)
	}
	return nil
}

// RetryWorkflow resumes failed or cancelled workflow id from the steps that did not
// complete: it runs again, completed steps keep their results (and a for_each step's
// completed items theirs: they do not run again), and the failed and cancelled steps
// run again once the steps they come after have completed. It returns
// ErrWorkflowNotFound for an unknown id, an error wrapping ErrWorkflowNotRetryable
// for a workflow that runs or completed, and an error when a step's job still runs (asked
// to stop when the workflow failed): retry once it has ended.
func RetryWorkflow(ctx context.Context, dbtx DBTX, id WorkflowID) error {
	r, err := db.New(dbtx).RetryWorkflow(ctx, int64(id))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("%w: id %d", ErrWorkflowNotFound, id)
	case err != nil:
		return fmt.Errorf("jobc: retry workflow %d: %w", id, dberr.Describe(err))
	case !r.Retried:
		return fmt.Errorf("jobc: retry workflow %d: it is %s, not failed or cancelled: %w", id, r.State, ErrWorkflowNotRetryable)
	}
	return nil
}

// CheckUpcast runs a signal payload of version from through the upcasts to the
// newest version, as JobType.CheckUpcast does a payload; jobc check calls it on
// sample documents of every older signal version.
func (g Signal) CheckUpcast(from int, payload []byte) ([]byte, error) {
	if g.contract == nil {
		return nil, fmt.Errorf("jobc: signal %s: not checked by NewWorkflowType", g.Name)
	}
	return g.contract.CheckUpcast(from, payload)
}

// WorkflowCount counts the workflows of a name in a state, for metrics.
type WorkflowCount struct {
	Workflow  string
	State     WorkflowState // running or failed
	Workflows int64
	// OldestRunning is how long the oldest running one has run; 0 for failed.
	OldestRunning time.Duration
}

// StepCount counts the steps of running workflows of a name, by step and state.
type StepCount struct {
	Workflow, Step string
	State          StepState
	Steps          int64
}

// CountWorkflows counts running and failed workflows by name, and the steps of the
// running ones by step and state: what the metrics report (contrib/prometheus). It
// reads running workflows and failed ones through indexes of their own, never the
// history of completed workflows, so a scrape costs what is under way.
func CountWorkflows(ctx context.Context, dbtx DBTX) ([]WorkflowCount, []StepCount, error) {
	q := db.New(dbtx)
	rows, err := q.CountWorkflows(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("jobc: count workflows: %w", dberr.Describe(err))
	}
	steps, err := q.CountRunningWorkflowSteps(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("jobc: count workflow steps: %w", dberr.Describe(err))
	}
	var out []WorkflowCount
	for _, r := range rows {
		out = append(out, WorkflowCount{Workflow: r.Name, State: WorkflowState(r.State), Workflows: r.Workflows,
			OldestRunning: time.Duration(r.OldestSeconds * float64(time.Second))})
	}
	var sc []StepCount
	for _, r := range steps {
		sc = append(sc, StepCount{Workflow: r.Name, Step: r.Step, State: StepState(r.State), Steps: r.Steps})
	}
	return out, sc, nil
}
