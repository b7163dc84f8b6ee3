package spec

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Flow is fleet-wide flow control, which workers enforce when they claim
// (runtime.Flow): a job's own (concurrency, rate, fairness and sequence under the job)
// or its queue's (under queues:). The spec's numbers are defaults an operator may
// change at run time.
type Flow struct {
	Pos Pos
	// By names the top-level payload fields whose values make the key the limits apply
	// to; nil makes the whole kind (or queue) one key. A queue's Flow has none.
	By []string
	// ByPos and ByPath are where By is written (a job's first by), for diagnostics.
	ByPos       Pos
	ByPath      string
	Concurrency int // jobs of one key running at once; 0: no limit
	Rate        Rate
	Fair        bool // claims take keys in turn
	Sequence    bool // one job of a key at a time, in enqueue order

	byPos []Pos // of each entry of By
}

// Rate is at most Limit starts in any window of Per; the zero Rate limits nothing.
type Rate struct {
	Limit int
	Per   time.Duration
}

// Queue is a queue declared under queues:, whose limits every job of the queue gets
// (Job.QueueFlow).
type Queue struct {
	Name string
	Pos  Pos
	Flow *Flow
}

// Queue returns the queue declared as name under queues:, or nil.
func (p *Project) Queue(name string) *Queue {
	for _, q := range p.Queues {
		if q.Name == name {
			return q
		}
	}
	return nil
}

// flowFields returns the handlers of the keys of a job that make its Flow, which
// collect them, in file order, into keys for jobFlow.
func flowFields(keys *[]node) map[string]field {
	add := func(v node) { *keys = append(*keys, v) }
	return map[string]field{"concurrency": add, "rate": add, "fairness": add, "sequence": add}
}

// byList is one by of a job's flow control, as written.
type byList struct {
	fields []string
	node   node
}

// jobFlow reads a job's flow control keys (flowFields) into its Flow, and reports what
// contradicts itself within the job: by lists that differ, a limit without the by the
// others give, a sequence with a concurrency. Its by fields are checked against the
// payload versions later (checkFlow), once every job is loaded.
func (l *loader) jobFlow(j *Job, keys []node) {
	if len(keys) == 0 {
		return
	}
	f := &Flow{Pos: keys[0].pos()}
	var bys []byList
	var concurrency, sequence node
	var unkeyed []node // a concurrency or rate without by
	for _, n := range keys {
		key := relPath(n.path, j.Kind)
		var by node
		switch key {
		case "concurrency":
			f.Concurrency, by = l.concurrency(n, true)
			concurrency = n
			if by.Node == nil && f.Concurrency > 0 {
				unkeyed = append(unkeyed, n)
			}
		case "rate":
			f.Rate, by = l.rate(n, true)
			if by.Node == nil && f.Rate.Limit > 0 {
				unkeyed = append(unkeyed, n)
			}
		case "fairness", "sequence":
			var ok bool
			if by, ok = l.byOnly(n); ok {
				f.Fair = f.Fair || key == "fairness"
				f.Sequence = f.Sequence || key == "sequence"
			}
			if key == "sequence" {
				sequence = n
			}
		}
		if by.Node == nil {
			continue
		}
		fields, ok := l.byFields(by)
		if !ok {
			continue
		}
		if len(bys) > 0 && !slices.Equal(fields, bys[0].fields) {
			first := bys[0]
			l.d.add(by.pos(), by.path, "by [%s] differs from %s [%s] at %s: a job has one flow key, so every by it gives lists the same fields in the same order",
				strings.Join(fields, ", "), relPath(first.node.path, j.Kind), strings.Join(first.fields, ", "), first.node.pos())
			continue
		}
		bys = append(bys, byList{fields: fields, node: by})
	}
	if concurrency.Node != nil && sequence.Node != nil {
		l.d.add(concurrency.pos(), concurrency.path, "a sequence already runs one job per key at a time: drop concurrency, or sequence")
	}
	if len(bys) > 0 {
		first := bys[0]
		for _, n := range unkeyed {
			// It would count per key all the same: say so rather than limit otherwise
			// than written.
			l.d.add(n.pos(), n.path, "has no by, but %s is [%s]: a job has one flow key, which its concurrency and rate count by too; write {limit: ..., by: [%[2]s]}",
				relPath(first.node.path, j.Kind), strings.Join(first.fields, ", "))
		}
		f.By, f.ByPos, f.ByPath, f.byPos = first.fields, first.node.pos(), first.node.path, positions(first.node)
	}
	j.Flow = f
}

// relPath is a job's field path without the job's own prefix: concurrency.by.
func relPath(path, kind string) string { return strings.TrimPrefix(path, "jobs."+kind+".") }

// concurrency reads a concurrency: N, or {limit: N} and, for a job, {limit: N, by:
// [...]}. It returns the limit (0 when it is not valid) and the by node, if any.
func (l *loader) concurrency(n node, job bool) (int, node) {
	if n.Kind == yaml.ScalarNode {
		c, ok := l.integer(n)
		if !ok {
			return 0, node{}
		}
		if c < 1 {
			l.d.add(n.pos(), n.path, "concurrency must be at least 1, got %d", c)
			return 0, node{}
		}
		return c, node{}
	}
	var limit int
	var by node
	present := l.mapping(n, map[string]field{
		"limit": func(v node) { limit = l.atLeastOne(v) },
		"by":    l.byField(job, &by),
	})
	if present == nil {
		return 0, node{}
	}
	if _, ok := present["limit"]; !ok {
		l.d.add(n.pos(), n.path, "missing required key %q", "limit")
	}
	return limit, by
}

// rate reads a rate: {limit: N, per: duration} and, for a job, by.
func (l *loader) rate(n node, job bool) (Rate, node) {
	var r Rate
	var by node
	present := l.mapping(n, map[string]field{
		"limit": func(v node) { r.Limit = l.atLeastOne(v) },
		"per":   func(v node) { r.Per, _ = l.duration(v) },
		"by":    l.byField(job, &by),
	})
	if present == nil {
		return Rate{}, node{}
	}
	for _, key := range []string{"limit", "per"} {
		if _, ok := present[key]; !ok {
			l.d.add(n.pos(), n.path, "missing required key %q", key)
		}
	}
	if r.Limit == 0 || r.Per == 0 {
		return Rate{}, by
	}
	return r, by
}

// byField handles the by of a concurrency or rate: a job's is kept in by, for its
// flow key; a queue's is refused, with the reason.
func (l *loader) byField(job bool, by *node) field {
	if job {
		return func(v node) { *by = v }
	}
	return func(v node) {
		l.d.add(v.pos(), v.path, "a queue's limits apply to the queue as a whole: by belongs to a job's concurrency, rate, fairness or sequence")
	}
}

// byOnly reads fairness: {by: [...]} or sequence: {by: [...]}.
func (l *loader) byOnly(n node) (node, bool) {
	var by node
	present := l.mapping(n, map[string]field{"by": func(v node) { by = v }})
	if present == nil {
		return node{}, false
	}
	if by.Node == nil {
		l.d.add(n.pos(), n.path, "missing required key %q: it names the payload fields whose values make the keys", "by")
		return node{}, false
	}
	return by, true
}

// byFields reads a by list: payload field names, at least one, none twice.
func (l *loader) byFields(n node) ([]string, bool) {
	fields, ok := l.strings(n)
	if !ok {
		return nil, false
	}
	if len(fields) == 0 {
		l.d.add(n.pos(), n.path, "want at least one payload field")
		return nil, false
	}
	for i, f := range fields {
		for _, g := range fields[:i] {
			if f == g {
				fn := n.at(strconv.Itoa(i), n.Content[i])
				l.d.add(fn.pos(), fn.path, "field %q is listed twice", f)
				return nil, false
			}
		}
	}
	return fields, true
}

// atLeastOne reads a limit: an integer of at least 1, or 0 when it is not.
func (l *loader) atLeastOne(v node) int {
	n, ok := l.integer(v)
	if !ok {
		return 0
	}
	if n < 1 {
		l.d.add(v.pos(), v.path, "limit must be at least 1, got %d", n)
		return 0
	}
	return n
}

// queues reads the queues section: the flow control of queues, by name.
func (l *loader) queues(n node, p *Project) {
	l.entries(n, func(k, v node) {
		if !l.checkName(k, k.Value, "queue") {
			return
		}
		f := &Flow{Pos: k.pos()}
		present := l.mapping(v, map[string]field{
			"concurrency": func(v node) { f.Concurrency, _ = l.concurrency(v, false) },
			"rate":        func(v node) { f.Rate, _ = l.rate(v, false) },
		})
		if present == nil {
			return
		}
		if len(present) == 0 {
			l.d.add(v.pos(), v.path, "limits nothing: give the queue a concurrency, a rate or both")
		}
		p.Queues = append(p.Queues, &Queue{Name: k.Value, Pos: k.pos(), Flow: f})
	})
}

// checkFlow gives each job its queue's limits, reports a declared queue no job runs
// in, and checks each job's by fields against its payload versions.
func (l *loader) checkFlow(p *Project) {
	used := map[string]bool{}
	for _, j := range p.Jobs {
		used[j.Queue] = true
		if q := p.Queue(j.Queue); q != nil {
			j.QueueFlow = q.Flow
		}
		if j.Flow != nil && len(j.Flow.By) > 0 {
			l.checkKeyFields(j.Flow.By, j.Flow.byPos, j.Flow.ByPath, j.Payload.Versions, "a flow key")
		}
	}
	for _, q := range p.Queues {
		if !used[q.Name] {
			l.d.add(q.Pos, "queues."+q.Name, "queue %s is unused: no job runs in it (a job names its queue with queue:, or takes defaults.queue, %q)", q.Name, p.Defaults.Queue)
		}
	}
}

// checkKeyFields checks that each field of a key (an event's ordering key, a job's
// flow key) is a required scalar field of every payload version; keyPos holds each
// field's position, path is the key's. what names the key in messages: "a flow key".
func (l *loader) checkKeyFields(fields []string, keyPos []Pos, path string, versions []*Version, what string) {
	for i, k := range fields {
		at := keyPos[i]
		kp := path + "." + strconv.Itoa(i)
		for _, v := range versions {
			props, required := topLevel(v.Schema)
			prop, ok := props[k]
			switch {
			case !ok:
				l.d.add(at, kp, "payload version %d has no field %q%s", v.Number, k, didYouMean(k, sortedNames(props)))
			case !required[k]:
				l.d.add(at, kp, "field %q of payload version %d is optional: %s field must be required", k, v.Number, what)
			case !scalarSchema(v.Schema, prop):
				l.d.add(at, kp, "field %q of payload version %d is not a string, number, integer or boolean: %s is made of scalars", k, v.Number, what)
			}
		}
	}
}

// String describes the flow control in a few words, for comments: "concurrency 2,
// rate 100 per 1m, fairness; by account_id".
func (f *Flow) String() string {
	var parts []string
	if f.Concurrency > 0 {
		parts = append(parts, "concurrency "+strconv.Itoa(f.Concurrency))
	}
	if f.Rate.Limit > 0 {
		parts = append(parts, fmt.Sprintf("rate %d per %s", f.Rate.Limit, formatDuration(f.Rate.Per)))
	}
	if f.Fair {
		parts = append(parts, "fairness")
	}
	if f.Sequence {
		parts = append(parts, "sequence")
	}
	s := strings.Join(parts, ", ")
	if len(f.By) > 0 {
		s += "; by " + strings.Join(f.By, ", ")
	}
	return s
}
