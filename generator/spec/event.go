package spec

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Event is one declared event: a fact the application publishes, with a versioned
// payload contract like a job's.
type Event struct {
	Name        string
	Pos         Pos
	Description string
	Subject     string   // the broker's subject, routing key or topic
	Key         []string // ordering key: top-level payload fields; empty for unordered
	Relay       bool     // written to the outbox, for a relay to deliver to a broker
	Payload     Payload
	Subscribers []*Subscriber

	keyPos []Pos // of each entry of Key
}

// Subscriber is a job created from every published event, in its transaction.
type Subscriber struct {
	Job string // the job's kind
	Pos Pos
	// Map, when set, builds the job's payload from the event's, field by field, in
	// the order written; nil: the job is typed as the event.
	Map []FieldMap
}

// FieldMap copies the event's field From into the job's field To.
type FieldMap struct {
	From, To       string
	FromPos, ToPos Pos
}

// Contract is one versioned contract: a job's payload, a job's result or an event's
// payload. The contract checker, the lock file and the upcasts work on contracts, so
// that all three share one machinery.
type Contract struct {
	Section string // "jobs", "events" or "workflows": the spec section
	Name    string // the job's kind, the event's or the workflow's name
	Pos     Pos
	Payload *Payload // the versions: of the payload, the result or the input (Key)
	Aliases []string // former kinds (job payloads only)
	// Key is the spec key that holds the versions: "payload" (also when empty),
	// "result" (a job's result contract, which handlers write and readers of the
	// job's result decode), "input" (a workflow's) or "signal" (a workflow's signal,
	// Name being <workflow>.<signal>).
	Key string
}

// IsSignal reports whether the contract is a workflow's signal.
func (c Contract) IsSignal() bool { return c.Key == "signal" }

// WorkflowSignal splits the name of a signal's contract into the workflow's and the
// signal's.
func (c Contract) WorkflowSignal() (workflow, signal string) {
	workflow, signal, _ = strings.Cut(c.Name, ".")
	return workflow, signal
}

// IsResult reports whether the contract is a job's result contract.
func (c Contract) IsResult() bool { return c.Key == "result" }

// Path names the contract in the spec and in findings: jobs.send_email,
// events.order_paid, jobs.charge_card.result, workflows.fulfil_order.
func (c Contract) Path() string {
	if c.IsResult() {
		return c.Section + "." + c.Name + ".result"
	}
	if c.IsSignal() {
		w, g := c.WorkflowSignal()
		return c.Section + "." + w + ".signals." + g
	}
	return c.Section + "." + c.Name
}

// At is the spec path of the key that holds the contract's versions and
// write_version: jobs.send_email.payload, jobs.charge_card.result,
// workflows.fulfil_order.input.
func (c Contract) At() string {
	switch c.Key {
	case "result", "signal":
		return c.Path()
	case "":
		return c.Path() + ".payload"
	}
	return c.Path() + "." + c.Key
}

// LockSection is the section of the lock file that records the contract: jobs,
// events, results, workflows or signals.
func (c Contract) LockSection() string {
	if c.IsResult() {
		return "results"
	}
	if c.IsSignal() {
		return "signals"
	}
	return c.Section
}

// IsWorkflow reports whether the contract is a workflow's input.
func (c Contract) IsWorkflow() bool { return c.Key == "input" }

// IsEvent reports whether the contract is an event's.
func (c Contract) IsEvent() bool { return c.Section == "events" }

// Contracts returns the payload contracts of every job, by kind, each followed by its
// result contract if it has one, then those of every event, by name, then the input
// contracts of every workflow, by name, each followed by its signals' contracts.
func (p *Project) Contracts() []Contract {
	out := make([]Contract, 0, len(p.Jobs)+len(p.Events))
	for _, j := range p.Jobs {
		out = append(out, j.Contract())
		if j.Result != nil {
			out = append(out, j.ResultContract())
		}
	}
	for _, e := range p.Events {
		out = append(out, e.Contract())
	}
	for _, w := range p.Workflows {
		out = append(out, w.Contract())
		for _, g := range w.Signals {
			out = append(out, w.SignalContract(g))
		}
	}
	return out
}

// Contract returns the job's payload contract.
func (j *Job) Contract() Contract {
	return Contract{Section: "jobs", Name: j.Kind, Pos: j.Pos, Payload: &j.Payload, Aliases: j.Aliases}
}

// ResultContract returns the job's result contract; the zero Contract when it has
// none.
func (j *Job) ResultContract() Contract {
	if j.Result == nil {
		return Contract{}
	}
	return Contract{Section: "jobs", Name: j.Kind, Pos: j.Result.Pos, Payload: j.Result, Key: "result"}
}

// Contract returns the event's payload contract.
func (e *Event) Contract() Contract {
	return Contract{Section: "events", Name: e.Name, Pos: e.Pos, Payload: &e.Payload}
}

// Job returns the job of kind, or nil.
func (p *Project) Job(kind string) *Job {
	for _, j := range p.Jobs {
		if j.Kind == kind {
			return j
		}
	}
	return nil
}

func (l *loader) events(n node, p *Project) {
	l.entries(n, func(k, v node) {
		if !l.checkName(k, k.Value, "event") {
			return
		}
		if prev, dup := l.eventNames[k.Value]; dup {
			l.d.add(k.pos(), k.path, "event %q is already declared at %s", k.Value, prev)
			return
		}
		l.eventNames[k.Value] = k.pos()
		if e := l.event(k, v); e != nil {
			p.Events = append(p.Events, e)
		}
	})
}

func (l *loader) event(k, v node) *Event {
	e := &Event{Name: k.Value, Pos: k.pos()}
	var keyNode, relayNode node
	present := l.mapping(v, map[string]field{
		"description": func(v node) { e.Description, _ = l.str(v) },
		"subject": func(v node) {
			if s, ok := l.str(v); ok {
				if s == "" {
					l.d.add(v.pos(), v.path, "want the broker's subject, routing key or topic, got an empty string")
				}
				e.Subject = s
			}
		},
		"key": func(v node) {
			keyNode = v
			if s, ok := l.strings(v); ok {
				if len(s) == 0 {
					l.d.add(v.pos(), v.path, "want at least one payload field, or no key for unordered events")
				}
				e.Key = s
				e.keyPos = positions(v)
			}
		},
		"relay":       func(v node) { e.Relay, _ = l.boolean(v); relayNode = v },
		"payload":     func(v node) { e.Payload = l.payload(v) },
		"subscribers": func(v node) { e.Subscribers = l.subscribers(v) },
	})
	if present == nil {
		return nil
	}
	for _, key := range []string{"subject", "payload"} {
		if _, ok := present[key]; !ok {
			l.d.add(k.pos(), k.path, "missing required key %q", key)
		}
	}
	if _, ok := present["payload"]; !ok {
		return nil
	}
	if keyNode.Node != nil && !e.Relay {
		l.d.add(keyNode.pos(), keyNode.path, "has no effect: the key orders delivery through the relay, and the event is not relayed (relay: true)")
	}
	if _, ok := present["subscribers"]; !ok && !e.Relay {
		at := k
		if relayNode.Node != nil {
			at = relayNode
		}
		l.d.add(at.pos(), at.path, "event %s has no subscribers and is not relayed: publishing it would write nothing; add subscribers or relay: true", e.Name)
	}
	return e
}

// subscribers reads a list whose entries are a job kind (typed as the event) or
// {job: kind, map: {event_field: job_field, ...}}.
func (l *loader) subscribers(n node) []*Subscriber {
	if n.Kind != yaml.SequenceNode {
		l.d.add(n.pos(), n.path, "want a list of job kinds, or of {job, map}, got %s", kindName(n.Node))
		return nil
	}
	var out []*Subscriber
	for i, c := range n.Content {
		sn := n.at(strconv.Itoa(i), c)
		s := &Subscriber{Pos: sn.pos()}
		if sn.Kind == yaml.ScalarNode {
			job, ok := l.str(sn)
			if ok && job == "" {
				l.d.add(sn.pos(), sn.path, "is empty: name a job kind")
			}
			if s.Job = job; s.Job != "" {
				out = append(out, s)
			}
			continue
		}
		present := l.mapping(sn, map[string]field{
			"job": func(v node) { s.Job, _ = l.str(v); s.Pos = v.pos() },
			"map": func(v node) {
				s.Map = []FieldMap{}
				l.entries(v, func(k, v node) {
					if to, ok := l.str(v); ok {
						s.Map = append(s.Map, FieldMap{From: k.Value, To: to, FromPos: k.pos(), ToPos: v.pos()})
					}
				})
			},
		})
		if present == nil {
			continue
		}
		if _, ok := present["job"]; !ok {
			l.d.add(sn.pos(), sn.path, "missing required key %q", "job")
			continue
		}
		if m, ok := present["map"]; ok && len(s.Map) == 0 && m.Kind == yaml.MappingNode {
			l.d.add(m.pos(), m.path, "want at least one field mapping; without map, the job is typed as the event")
		}
		out = append(out, s)
	}
	return out
}

// checkEvent reports problems of an event that span fields: its versions and changes,
// its ordering key against every version, and its subscribers against their jobs.
// Whether a subscriber's payload accepts the event's is the contract checker's.
func (l *loader) checkEvent(p *Project, e *Event) {
	path := "events." + e.Name
	c := e.Contract()
	l.checkVersions(c)
	l.checkKeyFields(e.Key, e.keyPos, path+".key", e.Payload.Versions, "an ordering key")
	seen := map[string]Pos{}
	kinds := make([]string, 0, len(p.Jobs))
	for _, j := range p.Jobs {
		kinds = append(kinds, j.Kind)
	}
	for i, s := range e.Subscribers {
		sp := path + ".subscribers." + strconv.Itoa(i)
		if prev, dup := seen[s.Job]; dup {
			l.d.add(s.Pos, sp, "job %s already subscribes at %s", s.Job, prev)
			continue
		}
		seen[s.Job] = s.Pos
		j := p.Job(s.Job)
		if j == nil {
			if sg := Suggest(s.Job, kinds); sg != "" {
				l.d.add(s.Pos, sp, "no job kind %q; did you mean %q?", s.Job, sg)
			} else {
				l.d.add(s.Pos, sp, "no job kind %q: subscribers are jobs declared under jobs", s.Job)
			}
			continue
		}
		if s.Map != nil {
			l.checkMap(e, j, s, sp+".map")
		}
	}
}

// checkMap checks a subscriber's mapping: every event field exists in the event's
// write version, every job field in the job's write version, no job field is filled
// twice, and every required job field without a default is filled.
func (l *loader) checkMap(e *Event, j *Job, s *Subscriber, path string) {
	ev, jv := e.Payload.Version(e.Payload.WriteVersion), j.Payload.Version(j.Payload.WriteVersion)
	if ev == nil || jv == nil {
		return // reported with the payloads
	}
	from, _ := topLevel(ev.Schema)
	to, required := topLevel(jv.Schema)
	filled := map[string]Pos{}
	for _, m := range s.Map {
		if _, ok := from[m.From]; !ok {
			l.d.add(m.FromPos, path+"."+m.From, "event %s version %d has no field %q%s", e.Name, ev.Number, m.From, didYouMean(m.From, sortedNames(from)))
		}
		if _, ok := to[m.To]; !ok {
			l.d.add(m.ToPos, path+"."+m.From, "job %s version %d has no field %q%s", j.Kind, jv.Number, m.To, didYouMean(m.To, sortedNames(to)))
			continue
		}
		if prev, dup := filled[m.To]; dup {
			l.d.add(m.ToPos, path+"."+m.From, "job field %q is already filled at %s", m.To, prev)
			continue
		}
		filled[m.To] = m.ToPos
	}
	for _, name := range sortedSet(required) {
		if _, ok := filled[name]; ok {
			continue
		}
		if prop := to[name]; prop != nil && mapGet(prop, "default") != nil {
			continue
		}
		l.d.add(s.Pos, path, "required field %q of job %s version %d is not mapped from the event and has no default", name, j.Kind, jv.Number)
	}
}

func didYouMean(word string, candidates []string) string {
	if s := Suggest(word, candidates); s != "" {
		return "; did you mean \"" + s + "\"?"
	}
	return ""
}

func sortedNames(m map[string]*yaml.Node) []string {
	set := make(map[string]bool, len(m))
	for k := range m {
		set[k] = true
	}
	return sortedSet(set)
}

// scalarSchema reports whether every value a property schema accepts is a scalar
// (string, number, integer or boolean): by its type, or by its enum or const.
func scalarSchema(s *Schema, n *yaml.Node) bool {
	for range 10 {
		ref := mapGet(n, "$ref")
		if ref == nil || ref.Kind != yaml.ScalarNode {
			break
		}
		if n = s.Resolve(ref.Value); n == nil {
			return false
		}
	}
	scalarType := func(t string) bool { return t == "string" || t == "number" || t == "integer" || t == "boolean" }
	if ts := typeNames(n); len(ts) > 0 {
		for _, t := range ts {
			if !scalarType(t) {
				return false
			}
		}
		return true
	}
	if c := mapGet(n, "const"); c != nil {
		return resolveAlias(c).Kind == yaml.ScalarNode && resolveAlias(c).Tag != "!!null"
	}
	if en := mapGet(n, "enum"); en != nil && en.Kind == yaml.SequenceNode {
		for _, v := range en.Content {
			if v = resolveAlias(v); v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
				return false
			}
		}
		return len(en.Content) > 0
	}
	return false
}
