package spec

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Workflow is one declared workflow: steps that each run once the steps they come
// after have completed (a job, a job per item of a list, a sleep, or a wait for a
// signal), with payloads mapped from the workflow's input, the step's item and its
// predecessors' results.
type Workflow struct {
	Name        string
	Pos         Pos
	Description string
	Input       Payload // the input's versioned contract
	Signals     []*WorkflowSignal
	Steps       []*WorkflowStep
	// OnFailure is "cancel" (the default: a failed step fails the workflow at once)
	// or "continue" (the steps that do not depend on it run to their end).
	OnFailure string
	// Batch, when declared (batch: instead of steps:), is what the steps were made
	// from: a for_each step and a callback step (BatchSteps).
	Batch *Batch

	onFailurePos Pos
}

// WorkflowSignal is a typed message a running workflow can be sent, with its
// versioned contract; its wait steps wait for it.
type WorkflowSignal struct {
	Name    string
	Pos     Pos
	Payload Payload
}

// Batch is the one-line form of the commonest workflow: run Job once per item of the
// list ForEach reads, whatever each one's outcome, then Then once, with the counts
// of the items that completed, failed and were cancelled (and the list of their
// results, when Job has one) in the Then job's fields of those names.
type Batch struct {
	Job, ForEach, Then string
	Pos                Pos
}

// The names of a batch's steps.
const (
	BatchEach = "each"
	BatchThen = "then"
)

// WorkflowStep is one step of a workflow: exactly one of Job, Sleep and Wait is set.
type WorkflowStep struct {
	Name  string
	Pos   Pos
	Job   string // the kind of the job it runs; "" for a sleep or a wait
	After []string
	// Map, when set, builds the job's payload field by field, in the order written;
	// nil: the job's payload is the item (a for_each step) or the workflow's input.
	Map []StepMap
	// ForEach, when set, is the source of a list: the step runs its job once per
	// element, the element being the item its map reads.
	ForEach string
	// OnItemFailure is "fail" (the default: a failed item fails the step) or
	// "continue" (the step completes once every item has ended).
	OnItemFailure string
	Sleep         time.Duration // a sleep step: how long
	Wait          *StepWait     // a wait step

	jobPos, forEachPos, onItemPos Pos
	afterPos                      []Pos
}

// StepWait makes a step wait for signal Signal, for at most Timeout (0: no limit).
type StepWait struct {
	Signal    string
	Timeout   time.Duration
	SignalPos Pos
}

// Kind says what the step runs: "job", "for_each", "sleep" or "wait".
func (s *WorkflowStep) Kind() string {
	switch {
	case s.Job != "" && s.ForEach != "":
		return "for_each"
	case s.Job != "":
		return "job"
	case s.Wait != nil:
		return "wait"
	}
	return "sleep"
}

// StepMap sets the job's top-level field To from the source From (ParseSource).
type StepMap struct {
	To, From       string
	ToPos, FromPos Pos
}

// StepSource is what a map or for_each source reads: Root "input" (the workflow's input),
// "item" (a for_each step's item) or a step's name, and then, of a step, What:
// "result" or one of its item counts ("completed", "failed", "cancelled"); Path is
// the fields within.
type StepSource struct {
	Root, What string
	Path       []string
}

// ParseSource parses a source: input[.<field>...], item[.<field>...],
// <step>.result[.<field>...] or <step>.completed|failed|cancelled; ok is false for
// none of these.
func ParseSource(src string) (StepSource, bool) {
	parts := strings.Split(src, ".")
	if slices.Contains(parts, "") {
		return StepSource{}, false
	}
	switch {
	case parts[0] == "input" || parts[0] == "item":
		return StepSource{Root: parts[0], Path: parts[1:]}, true
	case len(parts) >= 2 && parts[1] == "result":
		return StepSource{Root: parts[0], What: "result", Path: parts[2:]}, true
	case len(parts) == 2 && slices.Contains(itemCounts, parts[1]):
		return StepSource{Root: parts[0], What: parts[1]}, true
	}
	return StepSource{}, false
}

// itemCounts are what a for_each step counts of its items.
var itemCounts = []string{"completed", "failed", "cancelled"}

// sourceForms is what a source may be, for messages.
const sourceForms = "input[.<field>...], item[.<field>...], <step>.result[.<field>...] or <step>.completed|failed|cancelled"

// Contract returns the workflow's input contract.
func (w *Workflow) Contract() Contract {
	return Contract{Section: "workflows", Name: w.Name, Pos: w.Pos, Payload: &w.Input, Key: "input"}
}

// SignalContract returns the contract of signal g of the workflow.
func (w *Workflow) SignalContract(g *WorkflowSignal) Contract {
	return Contract{Section: "workflows", Name: w.Name + "." + g.Name, Pos: g.Pos, Payload: &g.Payload, Key: "signal"}
}

// Signal returns the signal of that name, or nil.
func (w *Workflow) Signal(name string) *WorkflowSignal {
	for _, g := range w.Signals {
		if g.Name == name {
			return g
		}
	}
	return nil
}

// Step returns the step of that name, or nil.
func (w *Workflow) Step(name string) *WorkflowStep {
	for _, s := range w.Steps {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Before returns every step s comes after, directly or not (nil when the steps form a
// cycle, which spec.Load reports).
func (w *Workflow) Before(s *WorkflowStep) map[string]bool {
	out := map[string]bool{}
	todo := slices.Clone(s.After)
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		if out[name] {
			continue
		}
		out[name] = true
		if p := w.Step(name); p != nil {
			todo = append(todo, p.After...)
		}
	}
	return out
}

// reservedStepNames are the first parts of a map source that name no step.
var reservedStepNames = []string{"input", "item"}

func (l *loader) workflows(n node, p *Project) {
	l.entries(n, func(k, v node) {
		if !l.checkName(k, k.Value, "workflow") {
			return
		}
		if prev, dup := l.workflowNames[k.Value]; dup {
			l.d.add(k.pos(), k.path, "workflow %q is already declared at %s", k.Value, prev)
			return
		}
		l.workflowNames[k.Value] = k.pos()
		if w := l.workflow(k, v); w != nil {
			p.Workflows = append(p.Workflows, w)
		}
	})
}

func (l *loader) workflow(k, v node) *Workflow {
	w := &Workflow{Name: k.Value, Pos: k.pos(), OnFailure: "cancel"}
	present := l.mapping(v, map[string]field{
		"description": func(v node) { w.Description, _ = l.str(v) },
		"input":       func(v node) { w.Input = l.payload(v) },
		"on_failure": func(v node) {
			if s, ok := l.str(v); ok {
				if s != "cancel" && s != "continue" {
					l.d.add(v.pos(), v.path, "want cancel or continue, got %q", s)
				}
				w.OnFailure, w.onFailurePos = s, v.pos()
			}
		},
		"signals": func(v node) {
			l.entries(v, func(k, v node) {
				if l.checkName(k, k.Value, "signal") {
					w.Signals = append(w.Signals, &WorkflowSignal{Name: k.Value, Pos: k.pos(), Payload: l.payload(v)})
				}
			})
		},
		"batch": func(v node) {
			b := &Batch{Pos: v.pos()}
			present := l.mapping(v, map[string]field{
				"job":      func(v node) { b.Job, _ = l.str(v) },
				"for_each": func(v node) { b.ForEach, _ = l.str(v) },
				"then":     func(v node) { b.Then, _ = l.str(v) },
			})
			if present == nil {
				return
			}
			for _, key := range []string{"job", "for_each", "then"} {
				if _, ok := present[key]; !ok {
					l.d.add(v.pos(), v.path, "missing required key %q", key)
					return
				}
			}
			w.Batch = b
			// The steps it stands for; the callback's map needs the project's
			// jobs (BatchSteps, in checkWorkflow).
			w.Steps = []*WorkflowStep{
				{Name: BatchEach, Pos: b.Pos, Job: b.Job, ForEach: b.ForEach, OnItemFailure: "continue",
					jobPos: present["job"].pos(), forEachPos: present["for_each"].pos()},
				{Name: BatchThen, Pos: b.Pos, Job: b.Then, After: []string{BatchEach}, Map: []StepMap{},
					jobPos: present["then"].pos(), afterPos: []Pos{b.Pos}},
			}
		},
		"steps": func(v node) {
			l.entries(v, func(k, v node) {
				if s := l.workflowStep(k, v); s != nil {
					w.Steps = append(w.Steps, s)
				}
			})
			if v.Kind == yaml.MappingNode && len(v.Content) == 0 {
				l.d.add(v.pos(), v.path, "declare at least one step")
			}
		},
	})
	if present == nil {
		return nil
	}
	if _, ok := present["input"]; !ok {
		l.d.add(k.pos(), k.path, "missing required key %q", "input")
		return nil
	}
	_, steps := present["steps"]
	_, batch := present["batch"]
	switch {
	case steps && batch:
		l.d.add(present["batch"].pos(), k.path+".batch", "declare steps or a batch, not both: a batch is its two steps")
	case !steps && !batch:
		l.d.add(k.pos(), k.path, "missing required key %q (or %q)", "steps", "batch")
	}
	return w
}

func (l *loader) workflowStep(k, v node) *WorkflowStep {
	if !l.checkName(k, k.Value, "step") {
		return nil
	}
	if slices.Contains(reservedStepNames, k.Value) {
		l.d.add(k.pos(), k.path, "step name %q is reserved: a map source that starts with it reads the %s", k.Value, map[string]string{"input": "workflow's input", "item": "for_each item"}[k.Value])
		return nil
	}
	s := &WorkflowStep{Name: k.Value, Pos: k.pos()}
	present := l.mapping(v, map[string]field{
		"job": func(v node) { s.Job, _ = l.str(v); s.jobPos = v.pos() },
		"after": func(v node) {
			if after, ok := l.strings(v); ok {
				s.After, s.afterPos = after, positions(v)
			}
		},
		"map": func(v node) {
			s.Map = []StepMap{}
			l.entries(v, func(k, v node) {
				if from, ok := l.str(v); ok {
					s.Map = append(s.Map, StepMap{To: k.Value, From: from, ToPos: k.pos(), FromPos: v.pos()})
				}
			})
		},
		"for_each": func(v node) { s.ForEach, _ = l.str(v); s.forEachPos = v.pos() },
		"on_item_failure": func(v node) {
			if f, ok := l.str(v); ok {
				if f != "fail" && f != "continue" {
					l.d.add(v.pos(), v.path, "want fail or continue, got %q", f)
				}
				s.OnItemFailure, s.onItemPos = f, v.pos()
			}
		},
		"sleep": func(v node) { s.Sleep, _ = l.duration(v) },
		"wait": func(v node) {
			w := &StepWait{}
			present := l.mapping(v, map[string]field{
				"signal":  func(v node) { w.Signal, _ = l.str(v); w.SignalPos = v.pos() },
				"timeout": func(v node) { w.Timeout, _ = l.duration(v) },
			})
			if present == nil {
				return
			}
			if _, ok := present["signal"]; !ok {
				l.d.add(v.pos(), v.path, "missing required key %q", "signal")
				return
			}
			s.Wait = w
		},
	})
	if present == nil {
		return nil
	}
	var kinds []string
	for _, key := range []string{"job", "sleep", "wait"} {
		if _, ok := present[key]; ok {
			kinds = append(kinds, key)
		}
	}
	if len(kinds) != 1 {
		l.d.add(k.pos(), k.path, "want exactly one of job, sleep and wait, got %s", listOr(kinds, "none"))
		return nil
	}
	if s.Job == "" {
		for _, key := range []string{"map", "for_each", "on_item_failure"} {
			if n, ok := present[key]; ok {
				l.d.add(n.pos(), k.path+"."+key, "a %s step has no job: %s is for job steps", kinds[0], key)
			}
		}
		s.Map, s.ForEach, s.OnItemFailure = nil, "", ""
	}
	if n, ok := present["on_item_failure"]; ok && s.ForEach == "" && s.Job != "" {
		l.d.add(n.pos(), k.path+".on_item_failure", "on_item_failure is for for_each steps")
	}
	if s.Job == "" && s.Sleep == 0 && s.Wait == nil {
		return nil // an invalid sleep or wait, reported
	}
	return s
}

// listOr lists words with commas, or says none.
func listOr(words []string, none string) string {
	if len(words) == 0 {
		return none
	}
	return strings.Join(words, ", ")
}

// checkWorkflow reports problems of a workflow that span its steps: a step's job or
// signal, the steps it comes after (declared, no cycle), and its map's and for_each's
// sources (Resolve) and map targets (the job's write version). Whether the mapped
// values fit the job's fields is the contract checker's.
func (l *loader) checkWorkflow(p *Project, w *Workflow) {
	path := "workflows." + w.Name
	l.checkVersions(w.Contract())
	for _, g := range w.Signals {
		l.checkVersions(w.SignalContract(g))
	}
	if w.Batch != nil {
		l.batchMap(p, w)
	}
	kinds := make([]string, 0, len(p.Jobs))
	for _, j := range p.Jobs {
		kinds = append(kinds, j.Kind)
	}
	names := make([]string, 0, len(w.Steps))
	for _, s := range w.Steps {
		names = append(names, s.Name)
	}
	signals := make([]string, 0, len(w.Signals))
	for _, g := range w.Signals {
		signals = append(signals, g.Name)
	}
	for _, s := range w.Steps {
		sp := path + ".steps." + s.Name
		if w.Batch != nil {
			sp = path + ".batch"
		}
		if s.Job != "" && p.Job(s.Job) == nil {
			l.d.add(s.jobPos, sp+".job", "no job kind %q%s", s.Job, didYouMean(s.Job, kinds))
		}
		if s.Wait != nil && w.Signal(s.Wait.Signal) == nil {
			l.d.add(s.Wait.SignalPos, sp+".wait.signal", "no signal %q in workflow %s%s", s.Wait.Signal, w.Name, didYouMean(s.Wait.Signal, signals))
		}
		for i, a := range s.After {
			switch {
			case a == s.Name:
				l.d.add(s.afterPos[i], sp+".after", "step %s comes after itself", s.Name)
			case w.Step(a) == nil:
				l.d.add(s.afterPos[i], sp+".after", "no step %q in workflow %s%s", a, w.Name, didYouMean(a, names))
			}
		}
	}
	if cycle := stepCycle(w); cycle != nil {
		first := w.Step(cycle[0])
		l.d.add(first.Pos, path+".steps."+first.Name+".after", "steps %s come after one another in a cycle: none of them could ever start", strings.Join(cycle, " -> "))
		return
	}
	for _, s := range w.Steps {
		sp := path + ".steps." + s.Name
		if w.Batch != nil {
			sp = path + ".batch"
		}
		if s.ForEach != "" {
			r := w.Resolve(p, s, s.ForEach, false)
			if r.Problem != "" {
				l.d.add(s.forEachPos, sp+".for_each", "source %q: %s", s.ForEach, r.Problem)
			} else if r.Schema != nil && !isList(r.Schema) {
				l.d.add(s.forEachPos, sp+".for_each", "source %q is not a list: its schema is not of type array", s.ForEach)
			}
		}
		if j := p.Job(s.Job); j != nil && s.Map != nil && w.Batch == nil {
			l.checkStepMap(p, w, s, j, sp+".map")
		}
	}
}

// batchMap fills the map of a batch's callback step: each of completed, failed and
// cancelled, and results (the list of the items' results, when the item job has a
// result), that the callback job's write version declares, from the each step's
// counts and result. A required field of the callback that is none of them cannot be
// filled.
func (l *loader) batchMap(p *Project, w *Workflow) {
	each, then := w.Step(BatchEach), w.Step(BatchThen)
	j, item := p.Job(then.Job), p.Job(each.Job)
	if j == nil || item == nil {
		return // reported with the steps
	}
	jv := j.Payload.Version(j.Payload.WriteVersion)
	if jv == nil {
		return
	}
	fields, required := topLevel(jv.Schema)
	sources := map[string]string{"completed": BatchEach + ".completed", "failed": BatchEach + ".failed", "cancelled": BatchEach + ".cancelled"}
	if item.Result != nil {
		sources["results"] = BatchEach + ".result"
	}
	for _, name := range sortedNames(fields) {
		if src, ok := sources[name]; ok {
			then.Map = append(then.Map, StepMap{To: name, From: src, ToPos: w.Batch.Pos, FromPos: w.Batch.Pos})
		}
	}
	for _, name := range sortedSet(required) {
		if _, ok := sources[name]; ok {
			continue
		}
		if prop := fields[name]; prop != nil && mapGet(prop, "default") != nil {
			continue
		}
		l.d.add(w.Batch.Pos, "workflows."+w.Name+".batch.then", "required field %q of job %s version %d is none of what a batch gives its callback (completed, failed, cancelled%s) and has no default",
			name, j.Kind, jv.Number, map[bool]string{true: ", results", false: ""}[item.Result != nil])
	}
}

// isList reports whether schema s is of type array.
func isList(s any) bool {
	m, ok := s.(map[string]any)
	if !ok {
		return false
	}
	switch t := m["type"].(type) {
	case string:
		return t == "array"
	case []any:
		return len(t) == 1 && t[0] == "array"
	}
	return false
}

// stepCycle returns the steps of a cycle of after, the first repeated at the end, or
// nil.
func stepCycle(w *Workflow) []string {
	state := map[string]int{} // 1: on the path, 2: done
	var cycle []string
	var visit func(s *WorkflowStep, path []string) bool
	visit = func(s *WorkflowStep, path []string) bool {
		switch state[s.Name] {
		case 1:
			i := slices.Index(path, s.Name)
			cycle = append(slices.Clone(path[i:]), s.Name)
			return true
		case 2:
			return false
		}
		state[s.Name] = 1
		for _, a := range s.After {
			if p := w.Step(a); p != nil && visit(p, append(path, s.Name)) {
				return true
			}
		}
		state[s.Name] = 2
		return false
	}
	for _, s := range w.Steps {
		if visit(s, nil) {
			return cycle
		}
	}
	return nil
}

// checkStepMap checks a step's map: each source resolves (Resolve); each target is a
// field of the job's write version, filled once; every required job field without a
// default is filled.
func (l *loader) checkStepMap(p *Project, w *Workflow, s *WorkflowStep, j *Job, path string) {
	jv := j.Payload.Version(j.Payload.WriteVersion)
	if jv == nil {
		return
	}
	to, required := topLevel(jv.Schema)
	filled := map[string]Pos{}
	for _, m := range s.Map {
		mp := path + "." + m.To
		if _, ok := to[m.To]; !ok {
			l.d.add(m.ToPos, mp, "job %s version %d has no field %q%s", j.Kind, jv.Number, m.To, didYouMean(m.To, sortedNames(to)))
		} else if prev, dup := filled[m.To]; dup {
			l.d.add(m.ToPos, mp, "job field %q is already filled at %s", m.To, prev)
		} else {
			filled[m.To] = m.ToPos
		}
		if r := w.Resolve(p, s, m.From, true); r.Problem != "" {
			l.d.add(m.FromPos, mp, "source %q: %s", m.From, r.Problem)
		}
	}
	for _, name := range sortedSet(required) {
		if _, ok := filled[name]; ok {
			continue
		}
		if prop := to[name]; prop != nil && mapGet(prop, "default") != nil {
			continue
		}
		l.d.add(s.Pos, path, "required field %q of job %s version %d is not mapped and has no default", name, j.Kind, jv.Number)
	}
}

// Resolved is what a source reads, as Resolve finds it.
type Resolved struct {
	// Schema is the JSON schema of the values read, a part of Root, whose local
	// $refs resolve against Root; nil when the source does not resolve.
	Schema, Root any
	// Required: every valid document has it, so that the value is always there.
	Required bool
	// Problem says why the source does not resolve; "" when it does, or when what it
	// reads is itself in error (a step's unknown job), which is reported there.
	Problem string
}

// Resolve finds what source src of step s reads: a field of the input's write
// version, of the item of s (where item: s is a for_each step: an element of its
// for_each list), or what a step s comes after leaves: its result (a job's result
// write version, the list of a for_each step's items' results, a wait step's signal
// write version) or, of a for_each step, its item counts. This is the one rule of
// sources: the loader reports its problems and the contract checker builds the
// payload a map makes from its schemas.
func (w *Workflow) Resolve(p *Project, s *WorkflowStep, src string, item bool) Resolved {
	fail := func(format string, args ...any) Resolved { return Resolved{Problem: fmt.Sprintf(format, args...)} }
	at := func(root *Schema, start any, path []string, what string) Resolved {
		schema, required, found := schemaAt(root.Value(), start, path)
		if !found {
			return fail("%s has no field %s", what, strings.Join(path, "."))
		}
		return Resolved{Schema: schema, Root: root.Value(), Required: required}
	}
	src0, ok := ParseSource(src)
	switch {
	case !ok:
		return fail("want %s", sourceForms)
	case src0.Root == "input":
		v := w.Input.Version(w.Input.WriteVersion)
		if v == nil || v.Schema == nil {
			return Resolved{}
		}
		return at(v.Schema, v.Schema.Value(), src0.Path, "the input of workflow "+w.Name+" version "+strconv.Itoa(v.Number))
	case src0.Root == "item":
		if !item || s.ForEach == "" {
			return fail("only a for_each step has an item")
		}
		list := w.Resolve(p, s, s.ForEach, false)
		m, isObj := resolveLocalRef(list.Root, list.Schema).(map[string]any)
		if list.Schema == nil || !isObj || m["items"] == nil {
			return Resolved{} // the for_each source is reported
		}
		schema, required, found := schemaAt(list.Root, m["items"], src0.Path)
		if !found {
			return fail("the items of %s have no field %s", s.ForEach, strings.Join(src0.Path, "."))
		}
		return Resolved{Schema: schema, Root: list.Root, Required: required}
	}
	from := w.Step(src0.Root)
	switch {
	case from == nil:
		return fail("no step %q in workflow %s", src0.Root, w.Name)
	case !w.Before(s)[src0.Root]:
		return fail("step %s does not come after %s, so what it leaves may not exist yet: add %s to after", s.Name, src0.Root, src0.Root)
	case src0.What != "result":
		if from.Kind() != "for_each" {
			return fail("step %s is no for_each step, which counts its items", src0.Root)
		}
		return Resolved{Schema: map[string]any{"type": "integer", "minimum": json.Number("0")}, Root: map[string]any{}, Required: true}
	}
	switch from.Kind() {
	case "sleep":
		return fail("sleep step %s has no result", src0.Root)
	case "wait":
		g := w.Signal(from.Wait.Signal)
		if g == nil {
			return Resolved{}
		}
		v := g.Payload.Version(g.Payload.WriteVersion)
		if v == nil || v.Schema == nil {
			return Resolved{}
		}
		return at(v.Schema, v.Schema.Value(), src0.Path, "signal "+g.Name+" version "+strconv.Itoa(v.Number))
	}
	j := p.Job(from.Job)
	if j == nil {
		return Resolved{}
	}
	if j.Result == nil {
		return fail("job %s of step %s declares no result", j.Kind, src0.Root)
	}
	v := j.Result.Version(j.Result.WriteVersion)
	if v == nil || v.Schema == nil {
		return Resolved{}
	}
	if from.Kind() == "for_each" {
		if len(src0.Path) > 0 {
			return fail("the result of for_each step %s is the list of its items' results: read %s.result", src0.Root, src0.Root)
		}
		return Resolved{Schema: map[string]any{"type": "array", "items": v.Schema.Value()}, Root: v.Schema.Value(), Required: true}
	}
	return at(v.Schema, v.Schema.Value(), src0.Path, "the result of job "+j.Kind+" version "+strconv.Itoa(v.Number))
}

// SchemaAt returns the JSON schema (as a JSON value) of the field at path in the
// documents of s, following local $refs, and whether every field along the path is
// required (so that a valid document always has it); found is false when the schema
// declares no such field.
func SchemaAt(s *Schema, path []string) (schema any, required, found bool) {
	if s == nil {
		return nil, false, false
	}
	return schemaAt(s.Value(), s.Value(), path)
}

// schemaAt is SchemaAt from the schema start, a part of the document schema root.
func schemaAt(root, start any, path []string) (schema any, required, found bool) {
	cur, required := start, true
	for _, f := range path {
		obj := resolveLocalRef(root, cur)
		m, ok := obj.(map[string]any)
		if !ok {
			return nil, false, false
		}
		props, _ := m["properties"].(map[string]any)
		next, ok := props[f]
		if !ok {
			return nil, false, false
		}
		req := false
		if rs, ok := m["required"].([]any); ok {
			req = slices.Contains(rs, any(f))
		}
		required = required && req
		cur = next
	}
	return resolveLocalRef(root, cur), required, true
}

// resolveLocalRef follows a schema's "$ref": "#/$defs/<name>" within root, as many
// times as it takes (a bounded number: refs that go round are left as they are).
func resolveLocalRef(root, s any) any {
	for range 32 {
		m, ok := s.(map[string]any)
		if !ok {
			return s
		}
		ref, ok := m["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#/$defs/") {
			return s
		}
		r, _ := root.(map[string]any)
		defs, _ := r["$defs"].(map[string]any)
		next, ok := defs[strings.TrimPrefix(ref, "#/$defs/")]
		if !ok {
			return s
		}
		s = next
	}
	return s
}
