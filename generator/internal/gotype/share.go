package gotype

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Share returns the payloads of one job's or event's versions, oldest first, as the Go
// package declares them: a nested type of a version (a struct or an enum) that an
// earlier version declares identically is not declared again, and the version's types
// refer to the earlier one. Identical means at the same place in the payload (Decl.Of:
// the same $defs entry or property path), with the same doc, fields (names, JSON names,
// types, defaults, constants) or enum values. So when versions 1, 2 and 3 share a
// $defs money, the package declares one SendReceiptV1Money, not three copies. A
// schema's validation keywords (minLength, ...) need not match: they are not part of
// the Go type, and each version is validated against its own schema.
//
// The naming rule: a nested type is named after the oldest version that declares it,
// and a later version that shares it lists its root in Decl.SharedBy. A version's Go
// names depend only on the versions before it, so adding a version never renames a
// type; only retiring the version that names a type renames it, after the next version
// that still declares it. Types within one version are not merged, and root payload
// structs are never shared: each version keeps its own (SendReceiptV2).
//
// The payloads given are not changed: other producers (TypeScript) declare every
// version's types on their own.
func Share(versions []*Payload) []*Payload {
	out := make([]*Payload, len(versions))
	declared := map[string]*Decl{} // the key of a nested type (Decl.shape) → the one declaring it
	rename := map[string]string{}  // the name of a type not declared again → the declared one
	for i, p := range versions {
		// A type is shared once its fields' types are; a parent is declared before
		// its fields' types, so repeat until nothing more is found.
		for found := true; found; {
			found = false
			for _, d := range p.Decls[1:] {
				if _, done := rename[d.Name]; done {
					continue
				}
				if earlier := declared[d.shape(rename)]; earlier != nil {
					rename[d.Name] = earlier.Name
					earlier.SharedBy = append(earlier.SharedBy, p.Root)
					found = true
				}
			}
		}
		q := &Payload{Root: p.Root}
		for _, d := range p.Decls {
			if _, shared := rename[d.Name]; !shared {
				q.Decls = append(q.Decls, d.renamed(rename))
			}
		}
		// Only now: the types of one version are not merged with each other.
		for _, d := range q.Decls[1:] {
			if k := d.shape(nil); declared[k] == nil {
				declared[k] = d
			}
		}
		out[i] = q
	}
	return out
}

// shape is what makes two declarations one Go type, all but their names, with the
// named types they refer to as rename maps them.
func (d *Decl) shape(rename map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "of %q doc %q", d.Of, d.Doc)
	if d.Struct != nil {
		b.WriteString(" struct")
		for _, f := range d.Struct.Fields {
			fmt.Fprintf(&b, " {%q %q %s required=%t omit=%t", f.Name, f.JSON, typeShape(f.Type, rename), f.Required, f.OmitEmpty)
			fmt.Fprintf(&b, " doc %q", f.Doc)
			if f.HasDefault {
				fmt.Fprintf(&b, " default %s", jsonShape(f.Default))
			}
			if f.HasConst {
				fmt.Fprintf(&b, " const %s", jsonShape(f.Const))
			}
			b.WriteString("}")
		}
	}
	if d.Enum != nil {
		fmt.Fprintf(&b, " enum %s", d.Enum.Base.Name)
		for _, v := range d.Enum.Values {
			// The constants' names are the type's and the value's: the values decide.
			fmt.Fprintf(&b, " %T %s", v.Value, jsonShape(v.Value))
		}
	}
	return b.String()
}

func typeShape(t Type, rename map[string]string) string {
	switch t := t.(type) {
	case Builtin:
		return t.Name
	case Ref:
		if to, ok := rename[t.Name]; ok && t.Import == "" {
			return "." + to
		}
		return t.Import + "." + t.Name
	case Pointer:
		return "*" + typeShape(t.Elem, rename)
	case Slice:
		return "[]" + typeShape(t.Elem, rename)
	case Map:
		return "map[string]" + typeShape(t.Elem, rename)
	}
	panic(fmt.Sprintf("gotype: unknown type %T", t))
}

// jsonShape is v as JSON (object keys sorted), or as Go syntax if it has none.
func jsonShape(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

// renamed returns a copy of d whose fields refer to the types rename maps.
func (d *Decl) renamed(rename map[string]string) *Decl {
	c := *d
	c.SharedBy = nil
	if d.Struct != nil {
		s := &Struct{Fields: make([]Field, len(d.Struct.Fields))}
		for i, f := range d.Struct.Fields {
			f.Type = renameType(f.Type, rename)
			s.Fields[i] = f
		}
		c.Struct = s
	}
	return &c
}

func renameType(t Type, rename map[string]string) Type {
	switch t := t.(type) {
	case Ref:
		if to, ok := rename[t.Name]; ok && t.Import == "" {
			return Ref{Name: to}
		}
	case Pointer:
		return Pointer{renameType(t.Elem, rename)}
	case Slice:
		return Slice{renameType(t.Elem, rename)}
	case Map:
		return Map{renameType(t.Elem, rename)}
	}
	return t
}
