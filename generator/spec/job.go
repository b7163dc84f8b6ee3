package spec

import (
	"maps"
	"sort"
	"strconv"

	"go.yaml.in/yaml/v3"
)

func (l *loader) job(k, v node, p *Project) *Job {
	j := &Job{
		Kind:        k.Value,
		Pos:         k.pos(),
		Queue:       p.Defaults.Queue,
		Priority:    DefaultPriority,
		Timeout:     p.Defaults.Timeout,
		MaxAttempts: DefaultMaxAttempts,
		Backoff:     DefaultBackoff(),
	}
	var flowKeys []node
	fields := map[string]field{
		"description": func(v node) { j.Description, _ = l.str(v) },
		"queue": func(v node) {
			if s, ok := l.str(v); ok && l.checkName(v, s, "queue") {
				j.Queue = s
			}
		},
		"priority": func(v node) {
			if n, ok := l.integer(v); ok {
				if n < 1 || n > 9 {
					l.d.add(v.pos(), v.path, "priority must be between 1 (most urgent) and 9 (least urgent), got %d", n)
				}
				j.Priority = n
			}
		},
		"timeout": func(v node) { j.Timeout, _ = l.duration(v) },
		"retry":   func(v node) { l.retry(v, j) },
		"errors": func(v node) {
			if s, ok := l.strings(v); ok {
				j.Errors = s
				j.errorsPos = positions(v)
			}
		},
		"default_error": func(v node) { j.DefaultError, _ = l.str(v); j.defaultErrorPos = v.pos() },
		"unique":        func(v node) { j.Unique = l.unique(v) },
		"schedule":      func(v node) { j.Schedule = l.schedule(v) },
		"payload":       func(v node) { j.Payload = l.payload(v) },
		"result": func(v node) {
			r := l.payload(v)
			j.Result = &r
		},
		"deprecated": func(v node) {
			if v.Kind == yaml.ScalarNode && v.Tag == "!!bool" {
				if b, _ := l.boolean(v); b {
					j.Deprecated = "do not enqueue new " + k.Value + " jobs."
				}
				return
			}
			if s, ok := l.str(v); ok {
				if s == "" {
					l.d.add(v.pos(), v.path, "want true or a reason, got an empty string")
				}
				j.Deprecated = s
			}
		},
		"aliases": func(v node) {
			if s, ok := l.strings(v); ok {
				for i, a := range s {
					an := v.at(strconv.Itoa(i), v.Content[i])
					if !l.checkName(an, a, "alias") {
						continue
					}
					if l.claimKind(an, a, k.Value) {
						j.Aliases = append(j.Aliases, a)
					}
				}
			}
		},
		"transactional": func(v node) { j.Transactional, _ = l.boolean(v) },
	}
	maps.Copy(fields, flowFields(&flowKeys))
	present := l.mapping(v, fields)
	if present == nil {
		return nil
	}
	l.jobFlow(j, flowKeys)
	if _, ok := present["payload"]; !ok {
		l.d.add(k.pos(), k.path, "missing required key %q", "payload")
		return nil
	}
	return j
}

func (l *loader) retry(n node, j *Job) {
	present := l.mapping(n, map[string]field{
		"max_attempts": func(v node) {
			if a, ok := l.integer(v); ok {
				if a < 1 {
					l.d.add(v.pos(), v.path, "max_attempts must be at least 1, got %d", a)
				}
				j.MaxAttempts = a
			}
		},
		"backoff": func(v node) { l.backoffKind(v, &j.Backoff) },
		"initial": func(v node) { j.Backoff.Initial, _ = l.duration(v) },
		"max":     func(v node) { j.Backoff.Max, _ = l.duration(v) },
		"jitter":  func(v node) { l.jitter(v, &j.Backoff) },
	})
	l.checkBackoff(n, present, &j.Backoff)
}

// checkBackoff reports a max shorter than the initial delay. Without an explicit max,
// the default cap rises to the initial delay: `retry: {backoff: constant, initial: 2h}`
// means what it says.
func (l *loader) checkBackoff(n node, present map[string]node, b *Backoff) {
	if b.Max <= 0 || b.Initial <= 0 || b.Max >= b.Initial {
		return
	}
	if m, ok := present["max"]; ok {
		l.d.add(m.pos(), m.path, "max %s is shorter than initial %s", formatDuration(b.Max), formatDuration(b.Initial))
		return
	}
	b.Max = b.Initial
}

// JobStates are the states a unique constraint may hold in.
func JobStates() []string {
	return []string{"available", "scheduled", "running", "completed", "failed", "cancelled"}
}

// On_conflict values: what an enqueue does when a job holds its unique key.
const (
	OnConflictSkip    = "skip"    // insert nothing, return the holder (the default)
	OnConflictReplace = "replace" // write the payload and run time into the waiting holder
)

// OnConflicts are the values of unique.on_conflict.
func OnConflicts() []string { return []string{OnConflictSkip, OnConflictReplace} }

// sameStates says whether states holds exactly want, in any order and with repeats.
func sameStates(states []string, want ...string) bool {
	for _, s := range states {
		if !contains(want, s) {
			return false
		}
	}
	for _, w := range want {
		if !contains(states, w) {
			return false
		}
	}
	return true
}

func (l *loader) unique(n node) *Unique {
	u := &Unique{Pos: n.pos(), While: []string{"available", "scheduled", "running"}, OnConflict: OnConflictSkip}
	misspelt := false // an unknown state was reported already
	present := l.mapping(n, map[string]field{
		"key": func(v node) {
			if s, ok := l.strings(v); ok {
				if len(s) == 0 {
					l.d.add(v.pos(), v.path, "want at least one payload field")
				}
				u.Key = s
				u.keyPos = positions(v)
			}
		},
		"while": func(v node) {
			s, ok := l.strings(v)
			if !ok {
				return
			}
			states := JobStates()
			for i, st := range s {
				if !contains(states, st) {
					misspelt = true
					sv := v.at(strconv.Itoa(i), v.Content[i])
					if sg := Suggest(st, states); sg != "" {
						l.d.add(sv.pos(), sv.path, "unknown job state %q; did you mean %q?", st, sg)
					} else {
						l.d.add(sv.pos(), sv.path, "unknown job state %q (states: available, scheduled, running, completed, failed, cancelled)", st)
					}
				}
			}
			u.While = s
		},
		"period": func(v node) { u.Period, _ = l.duration(v) },
		"on_conflict": func(v node) {
			s, ok := l.str(v)
			if !ok {
				return
			}
			if !contains(OnConflicts(), s) {
				if sg := Suggest(s, OnConflicts()); sg != "" {
					l.d.add(v.pos(), v.path, "unknown on_conflict %q; did you mean %q?", s, sg)
				} else {
					l.d.add(v.pos(), v.path, "unknown on_conflict %q (values: skip, the default, and replace)", s)
				}
				return
			}
			u.OnConflict = s
		},
	})
	if present == nil {
		return nil
	}
	if _, ok := present["key"]; !ok {
		l.d.add(n.pos(), n.path, "missing required key %q", "key")
	}
	if u.OnConflict == OnConflictReplace {
		w, ok := present["while"]
		if !ok {
			u.While = []string{"available", "scheduled"}
		} else if !misspelt && !sameStates(u.While, "available", "scheduled") {
			l.d.add(w.pos(), w.path, "with on_conflict: replace, while must be [available, scheduled]: only a waiting job's payload can be replaced, never a running or finished one's")
		}
		return u
	}
	if w, ok := present["while"]; ok && !misspelt {
		for _, st := range []string{"available", "scheduled", "running"} {
			if !contains(u.While, st) {
				l.d.add(w.pos(), w.path, "while must include available, scheduled and running: a unique key is held from insert until the job finishes (add completed, failed or cancelled to hold it after)")
				break
			}
		}
	}
	return u
}

func (l *loader) schedule(n node) *Schedule {
	s := &Schedule{Pos: n.pos(), Timezone: "UTC", cronPos: n.pos(), timezonePos: n.pos()}
	if n.Kind == yaml.ScalarNode {
		var ok bool
		if s.Cron, ok = l.str(n); !ok {
			return nil
		}
		return s
	}
	present := l.mapping(n, map[string]field{
		"cron":     func(v node) { s.Cron, _ = l.str(v); s.cronPos = v.pos() },
		"timezone": func(v node) { s.Timezone, _ = l.str(v); s.timezonePos = v.pos() },
	})
	if present == nil {
		return nil
	}
	if _, ok := present["cron"]; !ok {
		l.d.add(n.pos(), n.path, "missing required key %q", "cron")
	}
	return s
}

func (l *loader) payload(n node) Payload {
	p := Payload{Pos: n.pos()}
	var versions node
	present := l.mapping(n, map[string]field{
		"write_version": func(v node) { p.WriteVersion, _ = l.integer(v); p.WriteVersionPos = v.pos() },
		"versions":      func(v node) { versions = v },
	})
	if present == nil {
		return p
	}
	if versions.Node == nil {
		l.d.add(n.pos(), n.path, "missing required key %q", "versions")
		return p
	}
	before := len(l.d.list)
	seen := map[int]Pos{}
	l.entries(versions, func(k, v node) {
		num, err := strconv.Atoi(k.Value)
		if err != nil || num < 1 || k.Tag != "!!int" {
			if err == nil && k.Tag == "!!str" {
				l.d.add(k.pos(), k.path, "version must be an integer, got the string %q: remove the quotes", k.Value)
			} else {
				l.d.add(k.pos(), k.path, "version must be a positive integer, got %s", kindName(k.Node))
			}
			return
		}
		if prev, dup := seen[num]; dup {
			l.d.add(k.pos(), k.path, "version %d is already declared at %s", num, prev)
			return
		}
		seen[num] = k.pos()
		if ver := l.version(num, k, v); ver != nil {
			p.Versions = append(p.Versions, ver)
		}
	})
	if len(p.Versions) == 0 {
		if len(l.d.list) == before {
			l.d.add(versions.pos(), versions.path, "declare at least one version")
		}
		return p
	}
	sort.Slice(p.Versions, func(i, j int) bool { return p.Versions[i].Number < p.Versions[j].Number })
	for i, v := range p.Versions {
		if i > 0 && v.Number != p.Versions[i-1].Number+1 {
			prev := p.Versions[i-1].Number
			missing := strconv.Itoa(prev + 1)
			if v.Number > prev+2 {
				missing += ".." + strconv.Itoa(v.Number-1)
			}
			l.d.add(v.Pos, versions.path+"."+strconv.Itoa(v.Number), "version %d follows version %d: versions must be consecutive (missing %s)", v.Number, prev, missing)
		}
	}
	if _, ok := present["write_version"]; !ok {
		p.WriteVersion = p.Newest().Number
	} else if p.Version(p.WriteVersion) == nil {
		wv := present["write_version"]
		l.d.add(wv.pos(), wv.path, "write_version %d is not a declared version", p.WriteVersion)
	}
	return p
}

func (l *loader) version(num int, k, n node) *Version {
	v := &Version{Number: num, Pos: k.pos()}
	present := l.mapping(n, map[string]field{
		"schema": func(s node) { v.Schema = l.schema(s) },
		"from": func(f node) {
			if i, ok := l.integer(f); ok {
				if i >= num || i < 1 {
					l.d.add(f.pos(), f.path, "from must name an earlier version, got %d", i)
				}
				v.From = i
			}
		},
		"changes": func(c node) { v.Changes = l.changes(c) },
	})
	if present == nil {
		return nil
	}
	if v.Schema == nil {
		l.d.add(k.pos(), k.path, "missing required key %q", "schema")
		return nil
	}
	return v
}

func (l *loader) changes(n node) []Change {
	if n.Kind != yaml.SequenceNode {
		l.d.add(n.pos(), n.path, "want a list of changes, got %s", kindName(n.Node))
		return nil
	}
	var out []Change
	for i, c := range n.Content {
		cn := n.at(strconv.Itoa(i), c)
		if cn.Kind != yaml.MappingNode || len(cn.Content) != 2 {
			l.d.add(cn.pos(), cn.path, "want one of {rename: {from, to}}, {add: {field, default}}, {require: {field, default}}, {remove: field}, {widen: field}")
			continue
		}
		op, arg := cn.Content[0].Value, cn.at(cn.Content[0].Value, cn.Content[1])
		ch := Change{Pos: cn.pos(), Op: ChangeOp(op)}
		if op == "require" {
			ch.Op, ch.Require = Add, true
		}
		switch ch.Op {
		case Rename:
			l.mapping(arg, map[string]field{
				"from": func(v node) { ch.From, _ = l.str(v); ch.fromPos = v.pos() },
				"to":   func(v node) { ch.To, _ = l.str(v); ch.toPos = v.pos() },
			})
			if ch.From == "" || ch.To == "" {
				l.d.add(arg.pos(), arg.path, "rename needs from and to")
				continue
			}
		case Add:
			hasDefault := false
			l.mapping(arg, map[string]field{
				"field": func(v node) { ch.Field, _ = l.str(v); ch.fieldPos = v.pos() },
				"default": func(v node) {
					ch.Default, _ = l.toJSON(v)
					hasDefault, ch.defaultPos = true, v.pos()
				},
			})
			if ch.Field == "" || !hasDefault {
				l.d.add(arg.pos(), arg.path, "%s needs field and default", op)
				continue
			}
		case Remove, Widen:
			ch.fieldPos = arg.pos()
			if arg.Kind == yaml.ScalarNode {
				ch.Field, _ = l.str(arg)
			} else {
				l.mapping(arg, map[string]field{"field": func(v node) { ch.Field, _ = l.str(v); ch.fieldPos = v.pos() }})
			}
			if ch.Field == "" {
				l.d.add(arg.pos(), arg.path, "%s needs a field", op)
				continue
			}
		default:
			ops := []string{"rename", "add", "require", "remove", "widen"}
			if s := Suggest(op, ops); s != "" {
				l.d.add(cn.pos(), cn.path, "unknown change %q; did you mean %q?", op, s)
			} else {
				l.d.add(cn.pos(), cn.path, "unknown change %q: want rename, add, require, remove or widen", op)
			}
			continue
		}
		out = append(out, ch)
	}
	return out
}

// positions returns the position of each element of a list node.
func positions(n node) []Pos {
	out := make([]Pos, len(n.Content))
	for i, c := range n.Content {
		out[i] = n.at(strconv.Itoa(i), c).pos()
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
