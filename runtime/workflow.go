package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// WorkflowType describes one workflow to the runtime: steps that run jobs, each once
// the steps it comes after have completed, with a payload mapped from the workflow's
// input and its predecessors' results. StartWorkflow records the whole definition
// with the workflow, so a workflow runs to its end as it was started, whichever build
// runs its steps; PostgreSQL advances it as its steps' jobs finish, in the
// transactions that record their outcomes, with no leader.
type WorkflowType struct {
	Name string
	// InputWriteVersion and InputVersions are the input's contract, as a job type's
	// WriteVersion and Versions are its payload's.
	InputWriteVersion int
	InputVersions     []Version
	Steps             []Step
	// OnFailure is what a failed step does to the rest; the zero value is
	// OnFailureCancel.
	OnFailure OnFailure

	input      *JobType // the input's contract, with the payloads' machinery
	definition []byte   // what StartWorkflow records (workflowDefinition), made once
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

// Step is one step of a workflow: it runs a job of Job once every step of After has
// completed.
type Step struct {
	Name  string
	Job   *JobType
	After []string
	// Map builds the job's payload, field by field: each entry sets the top-level
	// payload field (key) to the value at a source path (value), "input.<field>..."
	// of the workflow's input or "<step>.result.<field>..." of the result of a step
	// that this one comes after, directly or not. A source that is absent leaves its
	// field out. Nil: the job's payload is the workflow's input as it is, which must
	// then be valid as the job's write version.
	Map map[string]string
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

// NewWorkflowType checks t: its input contract compiles; step names are unique and
// not input or item; every step of After is declared and no step comes after itself,
// directly or not; each Map source reads the input or the result of an earlier step
// whose job type has a result. A step's job type may not have flow control or a
// unique key yet: the database inserts the steps' jobs.
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
	if len(t.Steps) == 0 {
		return fail("no steps")
	}
	byName := map[string]*Step{}
	for i := range t.Steps {
		s := &t.Steps[i]
		switch {
		case s.Name == "":
			return fail("step %d has no name", i+1)
		case slices.Contains(reservedSteps, s.Name):
			return fail("step %s: the name is reserved for map sources", s.Name)
		case byName[s.Name] != nil:
			return fail("step %s is declared twice", s.Name)
		case s.Job == nil:
			return fail("step %s has no job type", s.Name)
		case s.Job.Flow != nil || s.Job.QueueFlow != nil:
			return fail("step %s: job type %s has flow control, which workflow steps do not support yet", s.Name, s.Job.Kind)
		case s.Job.Unique != nil:
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
	d := workflowDefinition{OnFailure: t.OnFailure}
	for _, s := range t.Steps {
		sd := stepDefinition{Name: s.Name, Kind: s.Job.Kind, Queue: s.Job.Queue, Priority: s.Job.Priority,
			MaxAttempts: s.Job.MaxAttempts, PayloadVersion: s.Job.WriteVersion, After: s.After}
		if sd.After == nil {
			sd.After = []string{}
		}
		if s.Map != nil {
			sd.Map = map[string][]string{}
		}
		for field, src := range s.Map {
			path, err := sourcePath(src, s.Name, before[s.Name], byName)
			if err != nil {
				return fail("step %s: map %s: %v", s.Name, field, err)
			}
			sd.Map[field] = path
		}
		d.Steps = append(d.Steps, sd)
	}
	def, err := json.Marshal(d)
	if err != nil {
		return fail("definition: %v", err)
	}
	wt := t
	wt.input, wt.definition = input, def
	wt.InputVersions = input.Versions
	wt.Steps = slices.Clone(t.Steps)
	return &wt, nil
}

// sourcePath turns a map source into the path jobc_workflow_payload reads: ["input",
// field...] or [step, field...] for the result of step, which must be one of before
// (the steps the mapped step comes after) and have a result.
func sourcePath(src, step string, before map[string]bool, steps map[string]*Step) ([]string, error) {
	parts := strings.Split(src, ".")
	for _, p := range parts {
		if p == "" {
			return nil, fmt.Errorf("source %q: want input.<field> or <step>.result.<field>", src)
		}
	}
	if parts[0] == "input" {
		if len(parts) < 2 {
			return nil, fmt.Errorf("source %q: name a field of the input", src)
		}
		return parts, nil
	}
	from := steps[parts[0]]
	switch {
	case from == nil:
		return nil, fmt.Errorf("source %q: %s is neither input nor a step", src, parts[0])
	case !before[parts[0]]:
		return nil, fmt.Errorf("source %q: step %s does not come after %s, so its result may not exist yet", src, step, parts[0])
	case len(parts) < 3 || parts[1] != "result":
		return nil, fmt.Errorf("source %q: want %s.result.<field>", src, parts[0])
	case !from.Job.HasResult():
		return nil, fmt.Errorf("source %q: job type %s of step %s declares no result", src, from.Job.Kind, parts[0])
	}
	return append([]string{parts[0]}, parts[2:]...), nil
}

// workflowDefinition is what a workflow records of its type when it starts
// (jobc_workflows.definition): what the database needs to run its steps.
type workflowDefinition struct {
	OnFailure OnFailure        `json:"on_failure"`
	Steps     []stepDefinition `json:"steps"`
}

type stepDefinition struct {
	Name           string              `json:"name"`
	Kind           string              `json:"kind"`
	Queue          string              `json:"queue"`
	Priority       int                 `json:"priority"`
	MaxAttempts    int                 `json:"max_attempts"`
	PayloadVersion int                 `json:"payload_version"`
	After          []string            `json:"after"`
	Map            map[string][]string `json:"map"` // nil: the input is the payload
}

// WorkflowID names a started workflow.
type WorkflowID int64

// StartWorkflow starts a workflow of wt with input, through db: pass the transaction
// of the business change that needs it, and the workflow, with the jobs of its first
// steps, exists if and only if that transaction commits. The input is checked against
// its write version's schema, and against the write version of each first step's job
// that takes the input as its payload; an invalid one returns a *PayloadError and
// starts nothing. One statement.
func StartWorkflow(ctx context.Context, dbtx DBTX, wt *WorkflowType, input any) (WorkflowID, error) {
	raw, _, err := wt.input.marshalPayload(wt.InputWriteVersion, input, false)
	if err != nil {
		return 0, fmt.Errorf("jobc: start workflow %s: %w", wt.Name, err)
	}
	for _, s := range wt.Steps {
		if s.Map == nil {
			if err := s.Job.Validate(s.Job.WriteVersion, raw); err != nil {
				return 0, fmt.Errorf("jobc: start workflow %s: step %s takes the input as its payload: %w", wt.Name, s.Name, err)
			}
		}
	}
	id, err := db.New(dbtx).StartWorkflow(ctx, db.StartWorkflowParams{
		Name: wt.Name, Definition: wt.definition, InputVersion: int32(wt.InputWriteVersion), Input: raw,
	})
	if err != nil {
		return 0, fmt.Errorf("jobc: start workflow %s: %w", wt.Name, dberr.Describe(err))
	}
	return WorkflowID(id), nil
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
	Steps        []StepInfo // in the order the definition declares them
}

// StepInfo is one step of a workflow.
type StepInfo struct {
	Name  string
	State StepState
	After []string
	JobID int64 // 0 until the step runs
	// ResultVersion and Result are the result of the step's job, once it completed,
	// as it was stored; 0 and nil without one.
	ResultVersion         int
	Result                json.RawMessage
	StartedAt, FinishedAt *time.Time
}

// GetWorkflow reads workflow id, with each of its steps' state and result.
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
	info := &WorkflowInfo{ID: id, Name: w.Name, State: WorkflowState(w.State), InputVersion: int(w.InputVersion),
		Input: w.Input, CreatedAt: w.CreatedAt, FinishedAt: w.FinishedAt}
	var def workflowDefinition
	if err := json.Unmarshal(w.Definition, &def); err != nil {
		return nil, fmt.Errorf("jobc: get workflow %d: its definition: %w", id, err)
	}
	order := map[string]int{}
	for i, s := range def.Steps {
		order[s.Name] = i
	}
	for _, r := range rows {
		s := StepInfo{Name: r.Step, State: StepState(r.State), After: r.After, Result: r.Result,
			StartedAt: r.StartedAt, FinishedAt: r.FinishedAt}
		if r.JobID != nil {
			s.JobID = *r.JobID
		}
		if r.ResultVersion != nil {
			s.ResultVersion = int(*r.ResultVersion)
		}
		info.Steps = append(info.Steps, s)
	}
	slices.SortFunc(info.Steps, func(a, b StepInfo) int { return order[a.Name] - order[b.Name] })
	return info, nil
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
