package names

import (
	"fmt"

	"github.com/jobc-dev/jobc/generator/spec"
)

// Owned is an identifier together with the job type or event that declares it; Kind
// is "" for the catalogue.
type Owned struct {
	Ident
	Section string // "jobs" or "events"
	Kind    string // the job's kind or the event's name
	Pos     spec.Pos
}

// owner names the declaring job or event in a message: "job send_email".
func (o Owned) owner() string {
	switch o.Section {
	case "events":
		return "event " + o.Kind
	case "workflows":
		return "workflow " + o.Kind
	}
	return "job " + o.Kind
}

// key identifies the declaring job or event.
func (o Owned) key() string { return o.Section + "." + o.Kind }

// Collisions reports every identifier declared more than once in the generated
// package, which would not compile. Each report is at the later declaration (in the
// order given, which the caller keeps deterministic) and names the first, with its
// job and position, so the user can pick which one to rename. Two jobs whose base
// names are equal (x_1 and x1) collide in every name; that is one report, which
// counts the others.
func Collisions(ids []Owned) spec.Diagnostics {
	first := map[string]Owned{}
	type pair struct{ later, earlier string }
	reported := map[pair]*collision{}
	// pairs are of owner keys (Owned.key)
	var cs []*collision
	for _, id := range ids {
		prev, taken := first[id.Name]
		if !taken {
			first[id.Name] = id
			continue
		}
		if id.Kind == "" {
			continue // the catalogue's names are distinct constants, listed first
		}
		if c := reported[pair{id.key(), prev.key()}]; c != nil {
			c.more++
			continue
		}
		c := &collision{id: id, prev: prev}
		reported[pair{id.key(), prev.key()}] = c
		cs = append(cs, c)
	}
	ds := make(spec.Diagnostics, len(cs))
	for i, c := range cs {
		ds[i] = c.diagnostic()
	}
	return ds
}

// collision is a name of one job (id) already declared by another or the catalogue
// (prev), and how many more names the two share.
type collision struct {
	id, prev Owned
	more     int
}

func (c *collision) diagnostic() spec.Diagnostic {
	var other, fix string
	noun := "job"
	switch c.id.Section {
	case "events":
		noun = "event"
	case "workflows":
		noun = "workflow"
	}
	switch {
	case c.prev.Kind == "":
		other, fix = c.prev.What, "rename the "+noun
	case c.prev.key() == c.id.key():
		other, fix = c.prev.What+" of the same "+noun, "rename the property or value"
	default:
		other, fix = fmt.Sprintf("%s of %s (declared at %s)", c.prev.What, c.prev.owner(), c.prev.Pos), "rename one of the jobs"
		if c.prev.Section != c.id.Section || c.id.Section != "jobs" {
			fix = "rename one of them"
		}
	}
	msg := fmt.Sprintf("generated name %s, %s, is also %s", c.id.Name, c.id.What, other)
	switch c.more {
	case 0:
	case 1:
		msg += ", and 1 more name collides"
	default:
		msg += fmt.Sprintf(", and %d more names collide", c.more)
	}
	return spec.Diagnostic{Pos: c.id.Pos, Path: c.id.key(), Message: msg + ": " + fix}
}

// CatalogueOwned returns the catalogue's identifiers, to put before the jobs'.
func CatalogueOwned() []Owned {
	var out []Owned
	for _, id := range Catalogue() {
		out = append(out, Owned{Ident: id})
	}
	return out
}

// JobOwned returns the identifiers of one job type, owned by it.
func JobOwned(j *spec.Job, ids []Ident) []Owned {
	out := make([]Owned, len(ids))
	for i, id := range ids {
		out[i] = Owned{Ident: id, Section: "jobs", Kind: j.Kind, Pos: j.Pos}
	}
	return out
}

// EventOwned returns the identifiers of one event, owned by it.
func EventOwned(e *spec.Event, ids []Ident) []Owned {
	out := make([]Owned, len(ids))
	for i, id := range ids {
		out[i] = Owned{Ident: id, Section: "events", Kind: e.Name, Pos: e.Pos}
	}
	return out
}

// WorkflowOwned returns the identifiers of one workflow, owned by it.
func WorkflowOwned(w *spec.Workflow, ids []Ident) []Owned {
	out := make([]Owned, len(ids))
	for i, id := range ids {
		out[i] = Owned{Ident: id, Section: "workflows", Kind: w.Name, Pos: w.Pos}
	}
	return out
}
