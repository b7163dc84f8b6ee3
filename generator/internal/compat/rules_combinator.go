package compat

import (
	"fmt"
	"strconv"
	"strings"
)

// hasDisjunction reports whether an old view has a well-formed anyOf or oneOf.
func hasDisjunction(v *view) bool {
	for _, k := range []string{"anyOf", "oneOf"} {
		if kv, ok := v.kw[k]; ok && wellFormed(k, kv.v) {
			return true
		}
	}
	return false
}

// branches splits an old view on its anyOf (or else oneOf): one view per
// branch, each merged with the view's other keywords, which is a superset of
// "this schema and this branch". Branches that accept nothing are dropped.
func (c *checker) branches(oe *view) []*view {
	kw := "anyOf"
	if kv, ok := oe.kw[kw]; !ok || !wellFormed(kw, kv.v) {
		kw = "oneOf"
	}
	kv := oe.kw[kw]
	raws := kv.v.([]any)
	// Nested disjunctions are distributed too, up to maxBranchDepth levels
	// (a branch may even refer back to its own schema); deeper ones are
	// dropped, which only widens the old schema.
	nested := strings.Count(oe.key, "|anyOf/")+strings.Count(oe.key, "|oneOf/") < maxBranchDepth
	var out []*view
	for i, r := range raws {
		bp := child(kv.ptr, kw, strconv.Itoa(i))
		bv := c.mergeOld(oe.d.makeView(r, bp), 1)
		if bv.isFalse() {
			continue
		}
		m := &view{d: oe.d, ptr: oe.ptr, key: oe.key + "|" + kw + "/" + strconv.Itoa(i), kw: map[string]kwVal{},
			branch: &branchInfo{kw: kw, idx: i, raws: raws, ptr: bp, list: child(kv.ptr, kw)}}
		for k, x := range oe.kw {
			if k != kw {
				m.kw[k] = x
			}
		}
		if bv.invalid == "" && !bv.isBool {
			if !nested {
				bv = withoutDisjunctions(bv)
			}
			if !mergeInto(m, bv) {
				continue
			}
		}
		out = append(out, m)
	}
	return out
}

// maxBranchDepth bounds the distribution of nested anyOf/oneOf.
const maxBranchDepth = 3

// withoutDisjunctions returns v without its anyOf and oneOf.
func withoutDisjunctions(v *view) *view {
	m := &view{d: v.d, ptr: v.ptr, key: v.key + "|nodisj", kw: map[string]kwVal{}, branch: v.branch}
	for k, x := range v.kw {
		if k != "anyOf" && k != "oneOf" {
			m.kw[k] = x
		}
	}
	return m
}

// containsSchema reports whether one of the old schemas in list (at
// listPtr) is identical to new schema s (at sPtr).
func (c *checker) containsSchema(list []any, listPtr string, s any, sPtr string) bool {
	for i, x := range list {
		if c.schemasEqual(x, c.old, child(listPtr, strconv.Itoa(i)), s, c.new, sPtr) {
			return true
		}
	}
	return false
}

// compareNewConjuncts checks the conjunctions of the new schema: every allOf
// branch, and the target of a $ref that has sibling keywords, must accept
// every old document. o is the old view before merging (for its allOf).
func (c *checker) compareNewConjuncts(o, oe, n *view, label string) []Finding {
	var f []Finding
	if kv, ok := n.kw["allOf"]; ok && wellFormed("allOf", kv.v) {
		nb := kv.v.([]any)
		var ob []any
		obPtr := ""
		if okv, ok := o.kw["allOf"]; ok && wellFormed("allOf", okv.v) {
			ob, obPtr = okv.v.([]any), child(okv.ptr, "allOf")
		}
		for j, b := range nb {
			bp := child(kv.ptr, "allOf", strconv.Itoa(j))
			if c.containsSchema(ob, obPtr, b, bp) {
				continue // an identical old conjunct already held
			}
			r := c.compare(oe, n.sub("allOf", strconv.Itoa(j)), label)
			if len(r) == 0 {
				continue
			}
			if j >= len(ob) {
				// PRODUCT_TYPE_EXTENDED: a new conjunct old documents need not
				// satisfy. (PRODUCT_TYPE_NARROWED, dropping one, is compatible.)
				f = append(f, mk(RuleProductTypeExtended, bp, o.kwPtr("allOf"), label,
					fmt.Sprintf("allOf branch %d added and old documents need not satisfy it (%s)", j, r[0].Message)))
				continue
			}
			f = append(f, r...)
		}
	}
	if kv, ok := n.kw["$ref"]; ok {
		s, _ := kv.v.(string)
		t, tptr, err := n.d.resolve(s)
		if err != nil {
			f = append(f, mk(RuleUnsupportedKeyword, n.kwPtr("$ref"), oe.kwPtr("$ref"), label, err.Error()))
		} else {
			f = append(f, c.compare(oe, n.d.makeView(t, tptr), label)...)
		}
	}
	return f
}

// compareNewDisjunctions checks the new schema's anyOf and oneOf: some
// branch must accept the old documents (the old view is a single old branch
// when the old schema had a disjunction, see branches). For oneOf the other
// branches must also be provably disjoint from those documents.
func (c *checker) compareNewDisjunctions(oe, n *view, label string) []Finding {
	var f []Finding
	for _, kw := range []string{"anyOf", "oneOf"} {
		kv, ok := n.kw[kw]
		if !ok || !wellFormed(kw, kv.v) {
			continue
		}
		nb := kv.v.([]any)
		bi := oe.branch
		branchPtr := func(j int) string { return child(kv.ptr, kw, strconv.Itoa(j)) }
		try := func(j int) bool {
			if bi != nil && c.schemasEqual(bi.raws[bi.idx], c.old, bi.ptr, nb[j], c.new, branchPtr(j)) {
				return true
			}
			return len(c.compare(oe, n.sub(kw, strconv.Itoa(j)), label)) == 0
		}
		matched := -1
		if bi != nil && bi.idx < len(nb) && try(bi.idx) {
			matched = bi.idx
		}
		for j := 0; matched < 0 && j < len(nb); j++ {
			if try(j) {
				matched = j
			}
		}
		path := n.kwPtr(kw)
		if matched < 0 {
			switch {
			case bi == nil:
				// A plain old schema accepted by no branch: explain with the
				// closest branch.
				var best []Finding
				bestScore := -1
				for j := range nb {
					r := c.compare(oe, n.sub(kw, strconv.Itoa(j)), label)
					if s := closeness(r); bestScore < 0 || s < bestScore {
						best, bestScore = r, s
					}
				}
				f = append(f, best...)
			case len(nb) < len(bi.raws):
				f = append(f, mk(RuleSumTypeNarrowed, path, bi.ptr, label,
					fmt.Sprintf("%s branch %d of the old schema is accepted by no branch of the new %s (%d branches, was %d)",
						bi.kw, bi.idx, kw, len(nb), len(bi.raws))))
			case len(nb) == len(bi.raws):
				f = append(f, c.compare(oe, n.sub(kw, strconv.Itoa(bi.idx)), label)...)
			default:
				f = append(f, mk(RuleCombinedTypeSubschemasChanged, path, bi.ptr, label,
					fmt.Sprintf("%s branch %d of the old schema is accepted by no branch of the new %s", bi.kw, bi.idx, kw)))
			}
			continue
		}
		if kw != "oneOf" {
			continue
		}
		for l := range nb {
			if l == matched {
				continue
			}
			if bi != nil && bi.kw == "oneOf" {
				// The old oneOf guaranteed its documents match no other old
				// branch; an unchanged one stays excluded.
				same := false
				for m := range bi.raws {
					if m != bi.idx && c.schemasEqual(bi.raws[m], c.old, child(bi.list, strconv.Itoa(m)), nb[l], c.new, branchPtr(l)) {
						same = true
						break
					}
				}
				if same {
					continue
				}
			}
			if c.disjoint(oe, n.sub(kw, strconv.Itoa(l))) {
				continue
			}
			// Confluent treats SUM_TYPE_EXTENDED as compatible, which holds for
			// anyOf. For oneOf a document that matched exactly one old branch
			// may also match the added branch and then fail "exactly one", so
			// in our direction it is incompatible unless provably disjoint.
			// From anyOf to oneOf the same overlap is a COMBINED_TYPE_CHANGED.
			rule := RuleSumTypeExtended
			if bi != nil && bi.kw == "anyOf" {
				rule = RuleCombinedTypeChanged
			}
			oldPath := oe.ptr
			if bi != nil {
				oldPath = bi.ptr
			}
			f = append(f, mk(rule, branchPtr(l), oldPath, label,
				fmt.Sprintf("oneOf branch %d is not provably disjoint from branch %d, which accepts the old documents; a document matching both fails oneOf", l, matched)))
		}
	}
	return f
}

// disjoint reports whether no document can satisfy both views, decided only
// in simple cases: disjoint types, enum/const values the other schema's
// type or enum rejects, or a property both require whose const/enum values
// do not meet (a discriminator). Over-approximating either side keeps the
// answer sound, so the new view may be merged like an old one.
func (c *checker) disjoint(a, b *view) bool {
	b = c.mergeOld(b, 0)
	if a.isFalse() || b.isFalse() {
		return true
	}
	if a.invalid != "" || b.invalid != "" || a.isBool || b.isBool {
		return false
	}
	va, fa := enumConst(a)
	vb, fb := enumConst(b)
	ta := effectiveTypes(a, filterByType(va, typesOf(a)), fa)
	tb := effectiveTypes(b, filterByType(vb, typesOf(b)), fb)
	inter := intersectTypes(ta, tb)
	if len(inter) == 0 {
		return true
	}
	if fa && fb {
		common := false
		for _, x := range va {
			if containsValue(vb, x) {
				common = true
				break
			}
		}
		if !common {
			return true
		}
	}
	if len(inter) != 1 || inter[0] != "object" {
		return false
	}
	bReq := toSet(requiredList(b))
	aProps, bProps := schemaMap(a, "properties"), schemaMap(b, "properties")
	for _, p := range requiredList(a) {
		if !bReq[p] {
			continue
		}
		if _, ok := aProps[p]; !ok {
			continue
		}
		if _, ok := bProps[p]; !ok {
			continue
		}
		pa, pb := c.mergeOld(a.sub("properties", p), 0), c.mergeOld(b.sub("properties", p), 0)
		xa, ok1 := finiteValues(pa)
		xb, ok2 := finiteValues(pb)
		if !ok1 || !ok2 {
			continue
		}
		common := false
		for _, x := range xa {
			if containsValue(xb, x) {
				common = true
				break
			}
		}
		if !common {
			return true
		}
	}
	return false
}

// filterByType keeps the values a type set admits.
func filterByType(vals []any, t typeSet) []any {
	var out []any
	for _, v := range vals {
		if admits(t, jsonType(v)) {
			out = append(out, v)
		}
	}
	return out
}

// closeness scores how far a branch is from accepting the old documents:
// a type mismatch weighs more than any number of finer differences.
func closeness(r []Finding) int {
	s := 0
	for _, x := range r {
		if x.Rule == RuleTypeChanged || x.Rule == RuleTypeNarrowed {
			s += 1000
		} else {
			s++
		}
	}
	return s
}
