package compat

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// doc is one of the two schema documents; every $ref is resolved against the
// document it appears in.
type doc struct {
	root  any
	views map[string]*view // by canonical pointer of the (ref-resolved) schema
}

// escapeToken escapes one JSON-pointer reference token (RFC 6901).
func escapeToken(s string) string {
	s = strings.ReplaceAll(s, "~", "~0")
	return strings.ReplaceAll(s, "/", "~1")
}

// child returns the pointer ptr extended by the given raw tokens.
func child(ptr string, tokens ...string) string {
	var b strings.Builder
	b.WriteString(ptr)
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escapeToken(t))
	}
	return b.String()
}

// resolve follows a local reference ("#", "#/$defs/x", "#/definitions/x" or
// any other JSON pointer fragment) within d. It returns the target value and
// its canonical pointer.
func (d *doc) resolve(ref string) (any, string, error) {
	if !strings.HasPrefix(ref, "#") {
		return nil, "", fmt.Errorf("$ref %q is not a local reference (only \"#/...\" references within the same document are supported)", ref)
	}
	frag, err := url.PathUnescape(ref[1:])
	if err != nil {
		return nil, "", fmt.Errorf("$ref %q has an invalid fragment", ref)
	}
	if frag == "" {
		return d.root, "", nil
	}
	if !strings.HasPrefix(frag, "/") {
		return nil, "", fmt.Errorf("$ref %q uses a plain-name fragment ($anchor), which is not supported", ref)
	}
	cur := d.root
	ptr := ""
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			next, ok := c[tok]
			if !ok {
				return nil, "", fmt.Errorf("$ref %q does not resolve: no member %q", ref, tok)
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) || strconv.Itoa(i) != tok {
				return nil, "", fmt.Errorf("$ref %q does not resolve: bad array index %q", ref, tok)
			}
			cur = c[i]
		default:
			return nil, "", fmt.Errorf("$ref %q does not resolve", ref)
		}
		ptr = child(ptr, tok)
	}
	return cur, ptr, nil
}

// kwVal is one keyword value of a view, with the pointer of the schema
// object it comes from (views of the old schema may merge several objects).
type kwVal struct {
	v   any
	ptr string
	// entryPtr, for a merged "properties", gives the owning schema object of
	// each property when it differs from ptr.
	entryPtr map[string]string
}

// branchInfo records that an old view is one branch of an anyOf/oneOf.
type branchInfo struct {
	kw   string // "anyOf" or "oneOf"
	idx  int
	raws []any  // all branches, raw
	ptr  string // pointer of the branch
	list string // pointer of the anyOf/oneOf array
}

// view is a schema as the checker sees it: pure references followed, its
// keywords with their origin, and whether it is the boolean schema.
type view struct {
	d      *doc
	ptr    string // pointer of the primary schema object
	key    string // identity for memoisation and cycle detection
	raw    any    // the schema value when the view is not synthetic
	rawOK  bool
	isBool bool
	b      bool
	kw     map[string]kwVal
	// invalid explains why the schema cannot be interpreted (not an object or
	// boolean, unresolvable or circular $ref); empty when valid.
	invalid string
	branch  *branchInfo
}

// has reports whether the view carries keyword k.
func (v *view) has(k string) bool {
	_, ok := v.kw[k]
	return ok
}

// kwPtr is the pointer of keyword k in the view's document, or the view's
// pointer when the keyword is absent.
func (v *view) kwPtr(k string) string {
	if kv, ok := v.kw[k]; ok {
		return child(kv.ptr, k)
	}
	return v.ptr
}

// isFalse reports whether the view is the schema that accepts nothing.
func (v *view) isFalse() bool { return v.invalid == "" && v.isBool && !v.b }

// trivial reports whether the view accepts every document: true, {} or only
// annotations.
func (v *view) trivial() bool {
	if v.invalid != "" {
		return false
	}
	if v.isBool {
		return v.b
	}
	for k, kv := range v.kw {
		if isConstraint(k, kv.ptr) {
			return false
		}
	}
	return true
}

// constraintKeys returns the view's constraint keywords, sorted.
func (v *view) constraintKeys() []string {
	var out []string
	for _, k := range sortedKeys(v.kw) {
		if isConstraint(k, v.kw[k].ptr) {
			out = append(out, k)
		}
	}
	return out
}

// siblingConstraints reports whether map m (located at ptr) has constraint
// keywords besides $ref.
func siblingConstraints(m map[string]any, ptr string) bool {
	for k := range m {
		if k != "$ref" && isConstraint(k, ptr) {
			return true
		}
	}
	return false
}

// makeView builds the view of schema value v found at ptr in d, following
// pure references ({"$ref": ...} with no sibling constraints).
func (d *doc) makeView(v any, ptr string) *view {
	seen := map[string]bool{}
	for {
		m, ok := v.(map[string]any)
		if !ok {
			break
		}
		ref, hasRef := m["$ref"]
		if !hasRef || siblingConstraints(m, ptr) {
			break
		}
		s, ok := ref.(string)
		if !ok {
			return &view{d: d, ptr: ptr, key: "invalid:" + ptr, raw: v, rawOK: true, invalid: "$ref is not a string"}
		}
		if seen[ptr] {
			return &view{d: d, ptr: ptr, key: "invalid:" + ptr, raw: v, rawOK: true, invalid: fmt.Sprintf("$ref %q is circular without any schema in between", s)}
		}
		seen[ptr] = true
		target, tptr, err := d.resolve(s)
		if err != nil {
			return &view{d: d, ptr: ptr, key: "invalid:" + ptr, raw: v, rawOK: true, invalid: err.Error()}
		}
		v, ptr = target, tptr
	}
	if cached, ok := d.views[ptr]; ok && cached.rawOK {
		return cached
	}
	out := &view{d: d, ptr: ptr, key: ptr, raw: v, rawOK: true}
	switch x := v.(type) {
	case bool:
		out.isBool, out.b = true, x
	case map[string]any:
		out.kw = make(map[string]kwVal, len(x))
		for k, e := range x {
			out.kw[k] = kwVal{v: e, ptr: ptr}
		}
	default:
		out.invalid = "a schema must be a JSON object or a boolean"
		out.key = "invalid:" + ptr
	}
	d.views[ptr] = out
	return out
}

// trueView is a synthetic "accepts everything" view standing for an absent
// keyword (e.g. no "items") at ptr.
func (d *doc) trueView(ptr, what string) *view {
	return &view{d: d, ptr: ptr, key: "true:" + what + ":" + ptr, isBool: true, b: true}
}

// mergeDepth bounds how deep allOf/$ref conjunctions of the old schema are
// flattened; deeper conjuncts are dropped, which only widens the old schema.
const mergeDepth = 8

// mergeOld flattens the conjunctions of an old view (allOf branches and a
// $ref with sibling keywords) into one keyword map. The result accepts a
// superset of what the old schema accepts: conflicting keywords keep the
// first value (either conjunct alone is weaker than both), "type" is
// intersected, "required" united and "properties" merged by name. A superset
// of the old documents is the safe direction: anything the new schema must
// accept is over-approximated, never missed.
func (c *checker) mergeOld(o *view, depth int) *view {
	return c.mergeOldSeen(o, depth, map[string]bool{o.key: true})
}

// mergeOldSeen is mergeOld sharing one set of already merged conjuncts, so
// that a conjunct reached twice (A ∧ A = A) or through a cycle is merged once.
func (c *checker) mergeOldSeen(o *view, depth int, seen map[string]bool) *view {
	if o.invalid != "" || o.isBool {
		return o
	}
	_, hasAll := o.kw["allOf"]
	_, hasRef := o.kw["$ref"]
	if !hasAll && !hasRef {
		return o
	}
	m := &view{d: o.d, ptr: o.ptr, key: o.key + "|merged", kw: map[string]kwVal{}, branch: o.branch}
	for k, kv := range o.kw {
		if k != "allOf" && k != "$ref" {
			m.kw[k] = kv
		}
	}
	var parts []*view
	if kv, ok := o.kw["allOf"]; ok && wellFormed("allOf", kv.v) {
		for i, b := range kv.v.([]any) {
			parts = append(parts, o.d.makeView(b, child(kv.ptr, "allOf", strconv.Itoa(i))))
		}
	}
	if kv, ok := o.kw["$ref"]; ok {
		if s, ok := kv.v.(string); ok {
			if t, tptr, err := o.d.resolve(s); err == nil {
				parts = append(parts, o.d.makeView(t, tptr))
			}
		}
	}
	for _, p := range parts {
		if seen[p.key] {
			continue
		}
		seen[p.key] = true
		if depth < mergeDepth {
			p = c.mergeOldSeen(p, depth+1, seen)
		}
		if p.invalid != "" || p.trivial() {
			continue
		}
		if p.isFalse() {
			return &view{d: o.d, ptr: o.ptr, key: o.key + "|false", isBool: true, b: false}
		}
		if !mergeInto(m, p) {
			return &view{d: o.d, ptr: o.ptr, key: o.key + "|false", isBool: true, b: false}
		}
	}
	return m
}

// mergeInto adds the constraint keywords of p to m (see mergeOld). It
// returns false when the conjunction is unsatisfiable (disjoint types).
func mergeInto(m, p *view) bool {
	for _, k := range sortedKeys(p.kw) {
		kv := p.kw[k]
		if !isConstraint(k, kv.ptr) || k == "allOf" || k == "$ref" {
			// Conjunctions left unflattened past mergeDepth are dropped,
			// which only widens the old schema.
			continue
		}
		cur, ok := m.kw[k]
		if !ok {
			m.kw[k] = kv
			continue
		}
		switch k {
		case "type":
			if wellFormed("type", cur.v) && wellFormed("type", kv.v) {
				both := intersectTypes(typeList(cur.v), typeList(kv.v))
				if len(both) == 0 {
					return false // no type satisfies both conjuncts
				}
				m.kw[k] = kwVal{v: both, ptr: cur.ptr}
			}
		case "required":
			a, aok := cur.v.([]any)
			b, bok := kv.v.([]any)
			if aok && bok {
				u := append([]any{}, a...)
				for _, r := range b {
					if !containsValue(u, r) {
						u = append(u, r)
					}
				}
				m.kw[k] = kwVal{v: u, ptr: cur.ptr}
			}
		case "properties":
			a, aok := cur.v.(map[string]any)
			b, bok := kv.v.(map[string]any)
			if aok && bok {
				u := make(map[string]any, len(a)+len(b))
				owners := map[string]string{}
				for n, s := range a {
					u[n] = s
					if cur.entryPtr != nil {
						if op, ok := cur.entryPtr[n]; ok {
							owners[n] = op
						}
					}
				}
				for n, s := range b {
					if _, dup := u[n]; !dup {
						u[n] = s
						owners[n] = kv.ptr
					}
				}
				m.kw[k] = kwVal{v: u, ptr: cur.ptr, entryPtr: owners}
			}
		}
	}
	return true
}

// propPtr is the pointer of property name's schema under keyword kw
// ("properties" or "patternProperties") of view v.
func (v *view) propPtr(kw, name string) string {
	kv := v.kw[kw]
	owner := kv.ptr
	if kv.entryPtr != nil {
		if p, ok := kv.entryPtr[name]; ok {
			owner = p
		}
	}
	return child(owner, kw, name)
}

// sub returns the view of a subschema of v stored under keyword kw (and, for
// keywords holding maps or lists of schemas, under the member name or index).
func (v *view) sub(kw string, member ...string) *view {
	kv, ok := v.kw[kw]
	if !ok {
		return v.d.trueView(v.ptr, kw)
	}
	val := kv.v
	ptr := child(kv.ptr, kw)
	if len(member) == 1 {
		switch c := val.(type) {
		case map[string]any:
			val = c[member[0]]
			if kw == "properties" || kw == "patternProperties" {
				ptr = v.propPtr(kw, member[0])
			} else {
				ptr = child(ptr, member[0])
			}
		case []any:
			i, _ := strconv.Atoi(member[0])
			if i < 0 || i >= len(c) {
				return v.d.trueView(v.ptr, kw+"/"+member[0])
			}
			val = c[i]
			ptr = child(ptr, member[0])
		default:
			return v.d.trueView(v.ptr, kw+"/"+member[0])
		}
	}
	return v.d.makeView(val, ptr)
}
