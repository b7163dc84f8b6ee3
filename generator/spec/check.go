package spec

import (
	"strconv"
	"time"

	"github.com/robfig/cron/v3"
	"go.yaml.in/yaml/v3"
)

// check reports problems that span fields: references between jobs, classes and
// payloads, and settings that contradict each other.
func (l *loader) check(p *Project) {
	classNames := make([]string, len(p.Classes))
	for i, c := range p.Classes {
		classNames[i] = c.Name
	}
	for _, j := range p.Jobs {
		path := "jobs." + j.Kind
		seen := map[string]bool{}
		for i, e := range j.Errors {
			ep := path + ".errors." + strconv.Itoa(i)
			switch {
			case seen[e]:
				l.d.add(j.Pos, ep, "error class %q is listed twice", e)
			case !contains(classNames, e):
				if s := Suggest(e, classNames); s != "" {
					l.d.add(j.Pos, ep, "undeclared error class %q; did you mean %q?", e, s)
				} else {
					l.d.add(j.Pos, ep, "undeclared error class %q: declare it under error_classes in %s", e, p.File)
				}
			}
			seen[e] = true
		}
		if j.DefaultError != "" && !contains(j.Errors, j.DefaultError) {
			l.d.add(j.Pos, path+".default_error", "default_error %q is not one of the job's errors %v", j.DefaultError, j.Errors)
		}
		l.checkVersions(j)
		if w := j.Payload.Version(j.Payload.WriteVersion); w != nil {
			if j.Unique != nil {
				l.checkUnique(j, w)
			}
			if j.Schedule != nil {
				l.checkSchedule(j, w)
			}
		}
	}
}

func (l *loader) checkVersions(j *Job) {
	for i, v := range j.Payload.Versions {
		if i == 0 {
			if v.From != 0 {
				l.d.add(v.Pos, "jobs."+j.Kind+".payload.versions."+strconv.Itoa(v.Number)+".from", "the first version has nothing to upcast from")
			}
			continue
		}
		if v.From == 0 {
			v.From = v.Number - 1
		}
		if v.From != v.Number-1 {
			l.d.add(v.Pos, "jobs."+j.Kind+".payload.versions."+strconv.Itoa(v.Number)+".from",
				"from %d skips a version: each version upcasts from the one before it (%d)", v.From, v.Number-1)
		}
	}
}

// topLevel returns the properties mapping and required list of an object schema.
func topLevel(s *Schema) (props map[string]*yaml.Node, required map[string]bool) {
	props, required = map[string]*yaml.Node{}, map[string]bool{}
	n := resolveAlias(s.Node)
	if n == nil || n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, resolveAlias(n.Content[i+1])
		switch {
		case k == "properties" && v.Kind == yaml.MappingNode:
			for j := 0; j+1 < len(v.Content); j += 2 {
				props[v.Content[j].Value] = resolveAlias(v.Content[j+1])
			}
		case k == "required" && v.Kind == yaml.SequenceNode:
			for _, r := range v.Content {
				required[r.Value] = true
			}
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
		path := "jobs." + j.Kind + ".unique.key." + strconv.Itoa(i)
		if s := Suggest(k, names); s != "" {
			l.d.add(j.Unique.Pos, path, "payload version %d has no field %q; did you mean %q?", w.Number, k, s)
		} else {
			l.d.add(j.Unique.Pos, path, "payload version %d has no field %q", w.Number, k)
		}
	}
}

func (l *loader) checkSchedule(j *Job, w *Version) {
	path := "jobs." + j.Kind + ".schedule"
	if _, err := cron.ParseStandard(j.Schedule.Cron); err != nil {
		l.d.add(j.Schedule.Pos, path+".cron", "invalid cron expression %q: %v", j.Schedule.Cron, err)
	}
	if _, err := time.LoadLocation(j.Schedule.Timezone); err != nil {
		l.d.add(j.Schedule.Pos, path+".timezone", "unknown time zone %q: want an IANA name such as Europe/Paris", j.Schedule.Timezone)
	}
	props, required := topLevel(w.Schema)
	for name := range required {
		if p, ok := props[name]; ok && hasKey(p, "default") {
			continue
		}
		l.d.add(j.Schedule.Pos, path, "a scheduled job is enqueued with an empty payload, but required field %q of version %d has no default", name, w.Number)
	}
}

func hasKey(n *yaml.Node, key string) bool {
	if n == nil || n.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}
