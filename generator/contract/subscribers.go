package contract

import (
	"strconv"

	"github.com/jobc-dev/jobc/generator/internal/compat"
	"github.com/jobc-dev/jobc/generator/spec"
)

// SubscriberVersion returns the payload version of job j that the write version of
// event e is stored as, for a subscriber typed as the event: the highest version of j
// up to its write_version that accepts every payload of e's write version (the job's
// released workers decode it, as they decode what Enqueue writes), else the lowest
// newer one that does; workers upcast the job from there like any stored job. 0, with
// the reasons j's write version rejects some event payloads, when none does.
// Generation and `jobc check` decide with this one function.
func SubscriberVersion(e *spec.Event, j *spec.Job) (int, []compat.Finding) {
	ev := e.Payload.Version(e.Payload.WriteVersion)
	if ev == nil || ev.Schema == nil {
		return 0, nil
	}
	accepts := func(jv *spec.Version) bool {
		return jv.Schema != nil && compat.Compatible(ev.Schema.Value(), jv.Schema.Value())
	}
	vs := j.Payload.Versions
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].Number <= j.Payload.WriteVersion && accepts(vs[i]) {
			return vs[i].Number, nil
		}
	}
	for _, jv := range vs {
		if jv.Number > j.Payload.WriteVersion && accepts(jv) {
			return jv.Number, nil
		}
	}
	jw := j.Payload.Version(j.Payload.WriteVersion)
	if jw == nil || jw.Schema == nil {
		return 0, nil
	}
	return 0, compat.Check(ev.Schema.Value(), jw.Schema.Value())
}

// MappedModel is the schema of the job payloads a mapping builds from the payloads
// of the event's write version: a closed object of the mapped fields, under the job's
// names, each with the event field's schema, required where the event requires it.
func MappedModel(e *spec.Event, s *spec.Subscriber) (any, bool) {
	ev := e.Payload.Version(e.Payload.WriteVersion)
	if ev == nil || ev.Schema == nil {
		return nil, false
	}
	root, ok := copyJSON(ev.Schema.Value()).(map[string]any)
	if !ok {
		return nil, false
	}
	root = (&upcastModel{}).inline(root, root)
	props, _ := root["properties"].(map[string]any)
	required := map[string]bool{}
	if rs, ok := root["required"].([]any); ok {
		for _, r := range rs {
			if name, ok := r.(string); ok {
				required[name] = true
			}
		}
	}
	model := map[string]any{"type": "object", "additionalProperties": false}
	if defs, ok := root["$defs"]; ok {
		model["$defs"] = defs
	}
	mapped := map[string]any{}
	var req []any
	for _, m := range s.Map {
		p, ok := props[m.From]
		if !ok {
			return nil, false // reported by spec.Load
		}
		mapped[m.To] = p
		if required[m.From] {
			req = append(req, m.To)
		}
	}
	model["properties"] = mapped
	if len(req) > 0 {
		model["required"] = req
	}
	return model, true
}

// checkSubscribers checks that every subscriber job accepts what the event gives it.
func checkSubscribers(c *collector, p *spec.Project) {
	for _, e := range p.Events {
		seen := map[string]bool{}
		for i, s := range e.Subscribers {
			j := p.Job(s.Job)
			if j == nil || seen[s.Job] {
				continue // reported by spec.Load
			}
			seen[s.Job] = true
			path := "events." + e.Name + ".subscribers." + strconv.Itoa(i)
			jw := j.Payload.Version(j.Payload.WriteVersion)
			if jw == nil || jw.Schema == nil {
				continue
			}
			if s.Map == nil {
				v, reasons := SubscriberVersion(e, j)
				if v > 0 || len(reasons) == 0 {
					continue
				}
				c.errorf(e.Name, s.Pos, path, RuleSubscriberIncompatible,
					"job %s is typed as event %s, but none of its payload versions accepts every version %d event payload (version %d: %s): give the job a version that does, or subscribe it through a map",
					j.Kind, e.Name, e.Payload.WriteVersion, jw.Number, ruleList(reasons))
				explain(c, e.Name, jw.Schema, reasons)
				continue
			}
			model, ok := MappedModel(e, s)
			if !ok {
				continue
			}
			reasons := compat.Check(model, jw.Schema.Value())
			if len(reasons) == 0 {
				continue
			}
			c.errorf(e.Name, s.Pos, path+".map", RuleSubscriberIncompatible,
				"the map does not turn every version %d %s payload into a valid version %d %s payload (%s)",
				e.Payload.WriteVersion, e.Name, jw.Number, j.Kind, ruleList(reasons))
			explain(c, e.Name, jw.Schema, reasons)
		}
	}
}
