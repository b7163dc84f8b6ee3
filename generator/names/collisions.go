package names

import (
	"fmt"

	"github.com/jobc-dev/jobc/generator/spec"
)

// Owned is an identifier together with the job type that declares it; Kind is "" for
// the catalogue.
type Owned struct {
	Ident
	Kind string
	Pos  spec.Pos // the job's kind in the spec
}

// Collisions reports every identifier declared more than once in the generated
// package, which would not compile. Each report is at the later declaration (in the
// order given, which the caller keeps deterministic) and names the first, with its
// job and position, so the user can pick which one to rename.
func Collisions(ids []Owned) spec.Diagnostics {
	first := map[string]Owned{}
	var ds spec.Diagnostics
	for _, id := range ids {
		prev, taken := first[id.Name]
		if !taken {
			first[id.Name] = id
			continue
		}
		var other, fix string
		switch {
		case id.Kind == "":
			continue // the catalogue's names are distinct constants, listed first
		case prev.Kind == "":
			other, fix = prev.What, "rename the job"
		case prev.Kind == id.Kind:
			other, fix = prev.What+" of the same job", "rename the field or value"
		default:
			other, fix = fmt.Sprintf("%s of job %s (declared at %s)", prev.What, prev.Kind, prev.Pos), "rename one of the jobs"
		}
		ds = append(ds, spec.Diagnostic{Pos: id.Pos, Path: "jobs." + id.Kind,
			Message: fmt.Sprintf("generated name %s, %s, is also %s: %s", id.Name, id.What, other, fix)})
	}
	return ds
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
		out[i] = Owned{Ident: id, Kind: j.Kind, Pos: j.Pos}
	}
	return out
}
