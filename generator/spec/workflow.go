package spec

import (
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Workflow is one declared workflow: steps that run jobs, each once the steps it
// comes after have completed, with payloads mapped from the workflow's input and its
// predecessors' results.
type Workflow struct {
	Name        string
	Pos         Pos
	Description string
	Input       Payload // the input's versioned contract
	Steps       []*WorkflowStep
	// OnFailure is "cancel" (the default: a failed step fails the workflow at once)
	// or "continue" (the steps that do not depend on it run to their end).
	OnFailure string

	onFailurePos Pos
}

// WorkflowStep is one step of a workflow.
type WorkflowStep struct {
	Name  string
	Pos   Pos
	Job   string // the kind of the job it runs
	After []string
	// Map, when set, builds the job's payload field by field, in the order written;
	// nil: the job's payload is the workflow's input.
	Map []StepMap

	jobPos   Pos
	afterPos []Pos
}

// StepMap sets the job's top-level field To from the source From: input.<path> of
// the workflow's input or <step>.result.<path> of a step's result.
type StepMap struct {
	To, From       string
	ToPos, FromPos Pos
}

// Source splits From into what it reads: "input" or a step's name, and the path of
// fields in it; ok is false for a source of neither form.
func (m StepMap) Source() (root string, path []string, ok bool) {
	parts := strings.Split(m.From, ".")
	if slices.Contains(parts, "") {
		return "", nil, false
	}
	switch {
	case parts[0] == "input" && len(parts) >= 2:
		return "input", parts[1:], true
	case parts[0] != "input" && len(parts) >= 3 && parts[1] == "result":
		return parts[0], parts[2:], true
	}
	return "", nil, false
}

// Contract returns the workflow's input contract.
func (w *Workflow) Contract() Contract {
	return Contract{Section: "workflows", Name: w.Name, Pos: w.Pos, Payload: &w.Input, Key: "input"}
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
	for _, key := range []string{"input", "steps"} {
		if _, ok := present[key]; !ok {
			l.d.add(k.pos(), k.path, "missing required key %q", key)
		}
	}
	if _, ok := present["input"]; !ok {
		return nil
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
	})
	if present == nil {
		return nil
	}
	if _, ok := present["job"]; !ok {
		l.d.add(k.pos(), k.path, "missing required key %q", "job")
		return nil
	}
	return s
}

// checkWorkflow reports problems of a workflow that span its steps: a step's job, the
// steps it comes after (declared, no cycle), and its map's sources (the input's write
// version, or the result's write version of a step it comes after) and targets (the
// job's write version). Whether the mapped values fit the job's fields is the
// contract checker's.
func (l *loader) checkWorkflow(p *Project, w *Workflow) {
	path := "workflows." + w.Name
	l.checkVersions(w.Contract())
	kinds := make([]string, 0, len(p.Jobs))
	for _, j := range p.Jobs {
		kinds = append(kinds, j.Kind)
	}
	names := make([]string, 0, len(w.Steps))
	for _, s := range w.Steps {
		names = append(names, s.Name)
	}
	for _, s := range w.Steps {
		sp := path + ".steps." + s.Name
		if p.Job(s.Job) == nil {
			l.d.add(s.jobPos, sp+".job", "no job kind %q%s", s.Job, didYouMean(s.Job, kinds))
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
		if j := p.Job(s.Job); j != nil && s.Map != nil {
			l.checkStepMap(p, w, s, j, path+".steps."+s.Name+".map")
		}
	}
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

// checkStepMap checks a step's map: each source reads a field that exists, of the
// input or of the result of a step it comes after; each target is a field of the
// job's write version, filled once; every required job field without a default is
// filled.
func (l *loader) checkStepMap(p *Project, w *Workflow, s *WorkflowStep, j *Job, path string) {
	jv := j.Payload.Version(j.Payload.WriteVersion)
	if jv == nil {
		return
	}
	to, required := topLevel(jv.Schema)
	before := w.Before(s)
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
		root, fields, ok := m.Source()
		if !ok {
			l.d.add(m.FromPos, mp, "source %q: want input.<field> or <step>.result.<field>", m.From)
			continue
		}
		var from *Schema
		var what string
		if root == "input" {
			v := w.Input.Version(w.Input.WriteVersion)
			if v == nil {
				continue
			}
			from, what = v.Schema, "the input of workflow "+w.Name+" version "+strconv.Itoa(v.Number)
		} else {
			src := w.Step(root)
			switch {
			case src == nil:
				l.d.add(m.FromPos, mp, "source %q: no step %q in workflow %s", m.From, root, w.Name)
				continue
			case !before[root]:
				l.d.add(m.FromPos, mp, "source %q: step %s does not come after %s, so its result may not exist yet: add %s to after", m.From, s.Name, root, root)
				continue
			}
			sj := p.Job(src.Job)
			if sj == nil {
				continue // reported with the step
			}
			if sj.Result == nil {
				l.d.add(m.FromPos, mp, "source %q: job %s of step %s declares no result", m.From, sj.Kind, root)
				continue
			}
			v := sj.Result.Version(sj.Result.WriteVersion)
			if v == nil {
				continue
			}
			from, what = v.Schema, "the result of job "+sj.Kind+" version "+strconv.Itoa(v.Number)
		}
		if _, _, found := SchemaAt(from, fields); !found {
			l.d.add(m.FromPos, mp, "source %q: %s has no field %s", m.From, what, strings.Join(fields, "."))
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

// SchemaAt returns the JSON schema (as a JSON value) of the field at path in the
// documents of s, following local $refs, and whether every field along the path is
// required (so that a valid document always has it); found is false when the schema
// declares no such field.
func SchemaAt(s *Schema, path []string) (schema any, required, found bool) {
	if s == nil {
		return nil, false, false
	}
	root := s.Value()
	cur, required := root, true
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
		defs, _ := root.(map[string]any)["$defs"].(map[string]any)
		next, ok := defs[strings.TrimPrefix(ref, "#/$defs/")]
		if !ok {
			return s
		}
		s = next
	}
	return s
}
