package names

import (
	"strconv"

	"github.com/jobc-dev/jobc/generator/internal/gotype"
)

// Ident is one identifier of the generated package and what it is, in words for an
// error message ("the Enqueue function").
type Ident struct {
	Name string
	What string
	// HandWritten says the user declares it, in a file of their own in the package;
	// generated code only refers to it.
	HandWritten bool
}

// Version is what the identifiers of one payload version depend on.
type Version struct {
	Number int
	// Payload is the version's converted schema; nil when it has no Go type, and then
	// only the root struct's name is known.
	Payload *gotype.Payload
	// Declared is Payload less the nested types an earlier version declares
	// identically (gotype.Share): what the Go package declares for this version. The
	// TypeScript producers declare every type of Payload.
	Declared *gotype.Payload
	// HandWritten says the package must also declare the hand-written upcast into
	// this version.
	HandWritten bool
}

// Catalogue lists the package-level identifiers of the catalogue file.
func Catalogue() []Ident {
	return []Ident{
		{Name: Handlers, What: "the catalogue's Handlers interface"},
		{Name: Register, What: "the catalogue's Register function"},
		{Name: JobTypes, What: "the catalogue's JobTypes function"},
	}
}

// EventCatalogue lists the catalogue's identifiers that only a project with events
// declares.
func EventCatalogue() []Ident {
	return []Ident{{Name: EventTypes, What: "the catalogue's EventTypes function"}}
}

// WorkflowCatalogue lists the catalogue's identifiers that only a project with
// workflows declares.
func WorkflowCatalogue() []Ident {
	return []Ident{{Name: WorkflowTypes, What: "the catalogue's WorkflowTypes function"}}
}

// Idents lists every package-level identifier the job type declares, or makes the
// package declare (a hand-written upcast), given its payload versions.
func (n Job) Idents(versions []Version) []Ident {
	ids := []Ident{
		{Name: n.KindConst(), What: "the kind constant"},
		{Name: n.Payload(), What: "the newest payload's alias"},
		{Name: n.Handle(), What: "the handle type"},
		{Name: n.Handler(), What: "the handler interface"},
		{Name: n.Enqueue(), What: "the Enqueue function"},
		{Name: n.EnqueueMany(), What: "the EnqueueMany function"},
		{Name: n.RegisterFunc(), What: "the Register function"},
		{Name: n.TypeVar(), What: "the job type variable"},
	}
	for _, v := range versions {
		num := strconv.Itoa(v.Number)
		root := n.Version(v.Number)
		ids = append(ids, Ident{Name: root, What: "the version " + num + " payload struct"})
		if v.HandWritten {
			ids = append(ids, Ident{Name: n.Upcast(v.Number), What: "the hand-written upcast into version " + num, HandWritten: true})
		}
		ids = append(ids, payloadIdents(v, root, num, "payload")...)
	}
	return ids
}

// Idents lists every package-level identifier the job type's result contract
// declares, or makes the package declare (a hand-written upcast), given its versions.
func (n Result) Idents(versions []Version) []Ident {
	ids := []Ident{
		{Name: n.Payload(), What: "the newest result's alias"},
		{Name: n.Get(), What: "the function that reads a job's result"},
	}
	for _, v := range versions {
		num := strconv.Itoa(v.Number)
		root := n.Version(v.Number)
		ids = append(ids, Ident{Name: root, What: "the version " + num + " result struct"})
		if v.HandWritten {
			ids = append(ids, Ident{Name: n.Upcast(v.Number), What: "the hand-written upcast into result version " + num, HandWritten: true})
		}
		ids = append(ids, payloadIdents(v, root, num, "result")...)
	}
	return ids
}

// payloadIdents lists the nested types and enum constants of a payload version whose
// root struct is root.
func payloadIdents(v Version, root, num, noun string) []Ident {
	p := v.Declared
	if p == nil {
		p = v.Payload // a version that converted while another did not: not shared
	}
	if p == nil {
		return nil
	}
	var ids []Ident
	for _, d := range p.Decls {
		if d.Name != root {
			what := "a nested type of the version " + num + " " + noun
			if d.Of != "" {
				what = "the type of " + d.Of + " in the version " + num + " " + noun
			}
			ids = append(ids, Ident{Name: d.Name, What: what})
		}
		if d.Enum != nil {
			for _, e := range d.Enum.Values {
				ids = append(ids, Ident{Name: e.Name, What: "a constant of " + d.Name})
			}
		}
	}
	return ids
}
