package contract

import (
	"fmt"
	"strings"

	"github.com/jobc-dev/jobc/generator/internal/compat"
	"github.com/jobc-dev/jobc/generator/spec"
)

// StepModel is the schema of the job payloads a workflow step's map builds: a closed
// object of the mapped fields, under the job's names, each with the schema of what
// its source reads (spec.Workflow.Resolve), required where the source always has a
// value. false when a source cannot be resolved (spec.Load reports it).
func StepModel(p *spec.Project, w *spec.Workflow, s *spec.WorkflowStep) (any, bool) {
	props := map[string]any{}
	var req []any
	for _, m := range s.Map {
		r := w.Resolve(p, s, m.From, true)
		if r.Schema == nil {
			return nil, false
		}
		root, _ := r.Root.(map[string]any)
		props[m.To] = inlineRefs(copyJSON(r.Schema), root, 0)
		if r.Required {
			req = append(req, m.To)
		}
	}
	model := map[string]any{"type": "object", "additionalProperties": false, "properties": props}
	if len(req) > 0 {
		model["required"] = req
	}
	return model, true
}

// inlineRefs replaces every local $ref in v by what it refers to in root, to a
// bounded depth: the schemas of several sources meet in one model without their
// $defs.
func inlineRefs(v any, root map[string]any, depth int) any {
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok && depth < 16 && strings.HasPrefix(ref, "#/") {
			if target, _, ok := resolveRef(root, ref); ok {
				merged, isObj := copyJSON(target).(map[string]any)
				if isObj {
					for k, e := range x {
						if k != "$ref" {
							merged[k] = e
						}
					}
					return inlineRefs(merged, root, depth+1)
				}
			}
		}
		for k, e := range x {
			x[k] = inlineRefs(e, root, depth+1)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = inlineRefs(e, root, depth+1)
		}
		return x
	}
	return v
}

// checkWorkflows checks that each job step's job accepts the payload its step
// builds: the input as it is (or, of a for_each step, each item of its list), for a
// step without a map, else what the map makes of what its sources read.
func checkWorkflows(c *collector, p *spec.Project) {
	for _, w := range p.Workflows {
		in := w.Input.Version(w.Input.WriteVersion)
		for _, s := range w.Steps {
			j := p.Job(s.Job)
			if j == nil {
				continue // a sleep or a wait, or reported by spec.Load
			}
			jw := j.Payload.Version(j.Payload.WriteVersion)
			if jw == nil || jw.Schema == nil || in == nil || in.Schema == nil {
				continue
			}
			path, mapPath := "workflows."+w.Name+".steps."+s.Name, ".map"
			if w.Batch != nil {
				path, mapPath = "workflows."+w.Name+".batch."+map[string]string{spec.BatchEach: "job", spec.BatchThen: "then"}[s.Name], ""
			}
			if s.Map == nil {
				given, what := in.Schema.Value(), fmt.Sprintf("the workflow's input as its payload, but version %d of %s rejects some version %d inputs", jw.Number, j.Kind, in.Number)
				if s.ForEach != "" {
					r := w.Resolve(p, s, "item", true)
					if r.Schema == nil {
						continue
					}
					root, _ := r.Root.(map[string]any)
					given = inlineRefs(copyJSON(r.Schema), root, 0)
					what = fmt.Sprintf("each item of %s as its payload, but version %d of %s rejects some of them", s.ForEach, jw.Number, j.Kind)
				}
				reasons := compat.Check(given, jw.Schema.Value())
				if len(reasons) == 0 {
					continue
				}
				c.errorf(w.Name, s.Pos, path, RuleStepIncompatible,
					"step %s gives job %s %s (%s): map the fields it needs", s.Name, j.Kind, what, ruleList(reasons))
				explain(c, w.Name, jw.Schema, reasons)
				continue
			}
			model, ok := StepModel(p, w, s)
			if !ok {
				continue
			}
			reasons := compat.Check(model, jw.Schema.Value())
			if len(reasons) == 0 {
				continue
			}
			c.errorf(w.Name, s.Pos, path+mapPath, RuleStepIncompatible,
				"the map of step %s does not make a valid version %d %s payload of every input and result (%s)",
				s.Name, jw.Number, j.Kind, ruleList(reasons))
			explain(c, w.Name, jw.Schema, reasons)
		}
	}
}
