package gotype

import (
	"net/url"
	"strings"
)

// lookup finds the definition a local $ref ("#/$defs/Name" or "#/definitions/Name")
// names in the root schema. A definition that spec.Load inlined from another file is
// reported at its place in that file.
func (c *conv) lookup(at snode) (def snode, name string, st *defState, ok bool) {
	ref := scalarValue(at.n)
	var section string
	switch {
	case strings.HasPrefix(ref, "#/$defs/"):
		section, name = "$defs", strings.TrimPrefix(ref, "#/$defs/")
	case strings.HasPrefix(ref, "#/definitions/"):
		section, name = "definitions", strings.TrimPrefix(ref, "#/definitions/")
	default:
		c.errorf(at, "unsupported $ref %q: refer to #/$defs/<name> or to a schema file", ref)
		return snode{}, "", nil, false
	}
	if unescaped, err := url.PathUnescape(name); err == nil {
		name = unescaped
	}
	if strings.Contains(name, "/") {
		c.errorf(at, "unsupported $ref %q: refer to a definition directly under %s", ref, section)
		return snode{}, "", nil, false
	}
	name = strings.ReplaceAll(strings.ReplaceAll(name, "~1", "/"), "~0", "~")
	defs := c.root.child(section)
	def = defs.child(name)
	def.of = "$defs." + name
	if src, ok := c.schema.Inlined[name]; ok && section == "$defs" {
		def.file, def.path = src.File, src.Path
		def.of = src.String()
	}
	if def.n == nil {
		c.errorf(at, "$ref %q: no such definition", ref)
		return snode{}, "", nil, false
	}
	key := section + "/" + name
	st = c.defs[key]
	if st == nil {
		st = &defState{}
		c.defs[key] = st
	}
	if st.busy {
		c.errorf(at, "$ref %q refers to a schema that contains it: recursive schemas have no Go type", ref)
		return snode{}, "", nil, false
	}
	return def, name, st, true
}

// ref resolves a local reference to the named type of its definition, converting the
// definition on first use: every $ref to it shares one Go type.
func (c *conv) ref(at snode) (Type, bool) {
	def, name, st, ok := c.lookup(at)
	if !ok {
		return nil, false
	}
	if st.resolved {
		return st.typ, st.nullable
	}
	st.busy = true
	t, nullable := c.typeOf(def, c.name+GoName(name))
	st.busy = false
	st.typ, st.nullable, st.resolved = t, nullable, true
	return t, nullable
}
