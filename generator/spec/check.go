package spec

import (
	"sort"
	"strconv"
	"time"
	_ "time/tzdata" // time zones are checked the same on every machine

	"github.com/robfig/cron/v3"
	"go.yaml.in/yaml/v3"
)

// check reports problems that span fields: references between jobs, classes and
// payloads, and settings that contradict each other. It runs even when loading found
// problems, on whatever loaded, so that one run reports everything.
func (l *loader) check(p *Project) {
	declared := make([]string, 0, len(l.classes))
	for _, c := range p.Classes {
		declared = append(declared, c.Name)
	}
	for _, j := range p.Jobs {
		path := "jobs." + j.Kind
		seen := map[string]bool{}
		for i, e := range j.Errors {
			ep, at := path+".errors."+strconv.Itoa(i), j.Pos
			if i < len(j.errorsPos) {
				at = j.errorsPos[i]
			}
			switch {
			case seen[e]:
				l.d.add(at, ep, "error class %q is listed twice", e)
			case !l.classes[e]:
				if s := Suggest(e, declared); s != "" {
					l.d.add(at, ep, "undeclared error class %q; did you mean %q?", e, s)
				} else {
					l.d.add(at, ep, "undeclared error class %q: declare it under error_classes in %s", e, p.File)
				}
			}
			seen[e] = true
		}
		if j.DefaultError != "" && !contains(j.Errors, j.DefaultError) {
			l.d.add(j.defaultErrorPos, path+".default_error", "default_error %q is not one of the job's errors %v", j.DefaultError, j.Errors)
		}
		l.checkVersions(j.Contract())
		if j.Result != nil {
			l.checkVersions(j.ResultContract())
		}
		if w := j.Payload.Version(j.Payload.WriteVersion); w != nil {
			if j.Unique != nil {
				l.checkUnique(j, w)
			}
			if j.Schedule != nil {
				l.checkSchedule(j, w)
			}
		}
	}
	l.checkFlow(p)
	for _, e := range p.Events {
		l.checkEvent(p, e)
	}
	for _, w := range p.Workflows {
		l.checkWorkflow(p, w)
	}
}

// checkVersions checks how the versions of a payload contract follow each other.
func (l *loader) checkVersions(c Contract) {
	for i, v := range c.Payload.Versions {
		vp := c.At() + ".versions." + strconv.Itoa(v.Number)
		if i == 0 {
			if v.From != 0 && v.From < v.Number {
				l.d.add(v.Pos, vp+".from", "the first version has nothing to upcast from")
			}
			continue
		}
		if v.From == 0 {
			v.From = v.Number - 1
		}
		if v.From != v.Number-1 && v.From < v.Number {
			l.d.add(v.Pos, vp+".from", "from %d skips a version: each version upcasts from the one before it (%d)", v.From, v.Number-1)
		}
		if c.Payload.Versions[i-1].Number == v.Number-1 {
			l.checkChanges(c.Payload.Versions[i-1], v, vp+".changes")
		}
	}
}

// checkChanges checks each declarative change against the two versions it connects.
func (l *loader) checkChanges(prev, cur *Version, path string) {
	before, requiredBefore := topLevel(prev.Schema)
	after, requiredAfter := topLevel(cur.Schema)
	in := func(props map[string]*yaml.Node, field string, v *Version, at Pos, p string, want bool) bool {
		if _, ok := props[field]; ok == want {
			return true
		}
		if want {
			l.d.add(at, p, "version %d has no field %q", v.Number, field)
		} else {
			l.d.add(at, p, "version %d already has a field %q", v.Number, field)
		}
		return false
	}
	for i, c := range cur.Changes {
		cp := path + "." + strconv.Itoa(i) + "." + c.Name()
		switch {
		case c.Op == Rename:
			in(before, c.From, prev, c.fromPos, cp+".from", true)
			in(after, c.To, cur, c.toPos, cp+".to", true)
		case c.Op == Add && c.Require:
			switch {
			case !in(before, c.Field, prev, c.fieldPos, cp+".field", true) || !in(after, c.Field, cur, c.fieldPos, cp+".field", true):
			case requiredBefore[c.Field]:
				l.d.add(c.fieldPos, cp+".field", "field %q is already required in version %d: nothing to require", c.Field, prev.Number)
			case !requiredAfter[c.Field]:
				l.d.add(c.fieldPos, cp+".field", "version %d does not list %q under required: add it there, or drop this change", cur.Number, c.Field)
			default:
				if msg := cur.Schema.CheckValue(after[c.Field], c.Default); msg != "" {
					l.d.add(c.defaultPos, cp+".default", "default %s does not match field %q of version %d: %s", jsonText(c.Default), c.Field, cur.Number, msg)
				}
			}
		case c.Op == Add:
			if _, optional := before[c.Field]; optional && !requiredBefore[c.Field] {
				l.d.add(c.fieldPos, cp+".field", "version %d already has an optional field %q: to make it required with a default, write require: {field: %s, default: ...}", prev.Number, c.Field, c.Field)
				continue
			}
			if in(before, c.Field, prev, c.fieldPos, cp+".field", false) && in(after, c.Field, cur, c.fieldPos, cp+".field", true) {
				if msg := cur.Schema.CheckValue(after[c.Field], c.Default); msg != "" {
					l.d.add(c.defaultPos, cp+".default", "default %s does not match field %q of version %d: %s", jsonText(c.Default), c.Field, cur.Number, msg)
				}
			}
		case c.Op == Remove:
			if in(before, c.Field, prev, c.fieldPos, cp, true) {
				in(after, c.Field, cur, c.fieldPos, cp, false)
			}
		case c.Op == Widen:
			if in(before, c.Field, prev, c.fieldPos, cp, true) {
				in(after, c.Field, cur, c.fieldPos, cp, true)
			}
		}
	}
}

// topLevel returns the properties and required names of a payload schema.
func topLevel(s *Schema) (props map[string]*yaml.Node, required map[string]bool) {
	props, required = map[string]*yaml.Node{}, map[string]bool{}
	if s == nil {
		return
	}
	n := s.Root()
	if p := mapGet(n, "properties"); p != nil && p.Kind == yaml.MappingNode {
		for j := 0; j+1 < len(p.Content); j += 2 {
			props[p.Content[j].Value] = resolveAlias(p.Content[j+1])
		}
	}
	if r := mapGet(n, "required"); r != nil && r.Kind == yaml.SequenceNode {
		for _, c := range r.Content {
			required[resolveAlias(c).Value] = true
		}
	}
	return
}

func (l *loader) checkUnique(j *Job, w *Version) {
	props, _ := topLevel(w.Schema)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	for i, k := range j.Unique.Key {
		if _, ok := props[k]; ok {
			continue
		}
		path, at := "jobs."+j.Kind+".unique.key."+strconv.Itoa(i), j.Unique.Pos
		if i < len(j.Unique.keyPos) {
			at = j.Unique.keyPos[i]
		}
		if s := Suggest(k, names); s != "" {
			l.d.add(at, path, "payload version %d has no field %q; did you mean %q?", w.Number, k, s)
		} else {
			l.d.add(at, path, "payload version %d has no field %q", w.Number, k)
		}
	}
}

func (l *loader) checkSchedule(j *Job, w *Version) {
	path := "jobs." + j.Kind + ".schedule"
	if _, err := cron.ParseStandard(j.Schedule.Cron); err != nil {
		l.d.add(j.Schedule.cronPos, path+".cron", "invalid cron expression %q: %v", j.Schedule.Cron, err)
	}
	if _, err := time.LoadLocation(j.Schedule.Timezone); err != nil || j.Schedule.Timezone == "" || j.Schedule.Timezone == "Local" {
		l.d.add(j.Schedule.timezonePos, path+".timezone", "unknown time zone %q: want an IANA name such as Europe/Paris", j.Schedule.Timezone)
	}
	props, required := topLevel(w.Schema)
	for _, name := range sortedSet(required) {
		if p, ok := props[name]; ok && mapGet(p, "default") != nil {
			continue
		}
		l.d.add(j.Schedule.Pos, path, "a scheduled job is enqueued with an empty payload, but required field %q of version %d has no default", name, w.Number)
	}
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
