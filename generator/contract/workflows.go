package contract

import (
	"strings"

	"github.com/jobc-dev/jobc/generator/internal/compat"
	"github.com/jobc-dev/jobc/generator/spec"
)

// StepModel is the schema of the job payloads a workflow step's map builds: a closed
// object of the mapped fields, under the job's names, each with the schema of its
// source (in the input's write version, or in the write version of the result of the
// step it reads), required where every field along the source's path is required.
// false when a source cannot be resolved (spec.Load reports it).
func StepModel(p *spec.Project, w *spec.Workflow, s *spec.WorkflowStep) (any, bool) {
	props := map[string]any{}
	var req []any
	for _, m := range s.Map {
		root, path, ok := m.Source()
		if !ok {
			return nil, false
		}
		var from *spec.Version
		if root == "input" {
			from = w.Input.Version(w.Input.WriteVersion)
		} else if st := w.Step(root); st != nil {
			if j := p.Job(st.Job); j != nil && j.Result != nil {
				from = j.Result.Version(j.Result.WriteVersion)
			}
		}
		if from == nil || from.Schema == nil {
			return nil, false
		}
		rootSchema, _ := from.Schema.Value().(map[string]any)
		schema, required, found := spec.SchemaAt(from.Schema, path)
		if !found {
			return nil, false
		}
		props[m.To] = inlineRefs(copyJSON(schema), rootSchema, 0)
		if required {
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

// checkWorkflows checks that each step's job accepts the payload its step builds:
// the input as it is, for a step without a map, else what the map makes of the
// input and the earlier steps' results.
func checkWorkflows(c *collector, p *spec.Project) {
	for _, w := range p.Workflows {
		in := w.Input.Version(w.Input.WriteVersion)
		for _, s := range w.Steps {
			j := p.Job(s.Job)
			if j == nil {
				continue // reported by spec.Load
			}
			jw := j.Payload.Version(j.Payload.WriteVersion)
			if jw == nil || jw.Schema == nil || in == nil || in.Schema == nil {
				continue
			}
			path := "workflows." + w.Name + ".steps." + s.Name
			if s.Map == nil {
				reasons := compat.Check(in.Schema.Value(), jw.Schema.Value())
				if len(reasons) == 0 {
					continue
				}
				c.errorf(w.Name, s.Pos, path, RuleStepIncompatible,
					"step %s gives job %s the workflow's input as its payload, but version %d of %s rejects some version %d inputs (%s): map the fields it needs",
					s.Name, j.Kind, jw.Number, j.Kind, in.Number, ruleList(reasons))
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
			c.errorf(w.Name, s.Pos, path+".map", RuleStepIncompatible,
				"the map of step %s does not make a valid version %d %s payload of every input and result (%s)",
				s.Name, jw.Number, j.Kind, ruleList(reasons))
			explain(c, w.Name, jw.Schema, reasons)
		}
	}
}
