package compat

import (
	"strconv"

	"github.com/jobc-dev/jobc/internal/dialect"
)

// eqState memoises the reference pairs of one top-level equality check.
// Equality is purely conjunctive, so assuming a pair equal while it is being
// compared (and caching the outcome) is sound within a single call: any
// difference found anywhere makes the whole call false.
type eqState struct {
	memo map[string]bool
}

// schemasEqual reports whether schema a (in da, at pa) and schema b (in db,
// at pb) are identical constraints: structurally equal apart from
// annotations and $defs, with every $ref compared by its target.
func (c *checker) schemasEqual(a any, da *doc, pa string, b any, db *doc, pb string) bool {
	return c.eqSchema(&eqState{memo: map[string]bool{}}, a, da, pa, b, db, pb)
}

// keywordsEqual compares the values of keyword k taken from two views.
func (c *checker) keywordsEqual(k string, a kwVal, da *doc, b kwVal, db *doc) bool {
	return c.eqKeyword(&eqState{memo: map[string]bool{}}, k, a.v, da, child(a.ptr, k), b.v, db, child(b.ptr, k))
}

func (c *checker) eqSchema(st *eqState, a any, da *doc, pa string, b any, db *doc, pb string) bool {
	c.eqSteps++
	if c.eqSteps > maxEqSteps {
		return false // too expensive: "not equal" is the safe answer
	}
	ma, aok := a.(map[string]any)
	mb, bok := b.(map[string]any)
	if !aok || !bok {
		return aok == bok && valueEqual(a, b)
	}
	ra, aHas := ma["$ref"]
	rb, bHas := mb["$ref"]
	if aHas != bHas {
		return false
	}
	if aHas && !c.eqRef(st, ra, da, rb, db) {
		return false
	}
	for k := range ma {
		if k == "$ref" || (!isConstraint(k, pa) && !isConstraint(k, pb)) {
			continue
		}
		if _, ok := mb[k]; !ok {
			return false
		}
	}
	for _, k := range sortedKeys(mb) {
		if k == "$ref" || (!isConstraint(k, pa) && !isConstraint(k, pb)) {
			continue
		}
		va, ok := ma[k]
		if !ok {
			return false
		}
		if !c.eqKeyword(st, k, va, da, child(pa, k), mb[k], db, child(pb, k)) {
			return false
		}
	}
	return true
}

// eqRef compares two $ref values by what they point at.
func (c *checker) eqRef(st *eqState, ra any, da *doc, rb any, db *doc) bool {
	sa, ok1 := ra.(string)
	sb, ok2 := rb.(string)
	if !ok1 || !ok2 {
		return valueEqual(ra, rb)
	}
	ta, tpa, ea := da.resolve(sa)
	tb, tpb, eb := db.resolve(sb)
	if ea != nil || eb != nil {
		// Unresolvable (e.g. remote) references are equal only when they are
		// the very same reference on both sides.
		return ea != nil && eb != nil && sa == sb
	}
	key := tpa + "\x00" + tpb
	if r, ok := st.memo[key]; ok {
		return r
	}
	st.memo[key] = true // coinductive assumption while comparing
	r := c.eqSchema(st, ta, da, tpa, tb, db, tpb)
	st.memo[key] = r
	return r
}

// eqKeyword compares the values of keyword k, treating subschemas as schemas
// (references resolved) and everything else as plain JSON.
func (c *checker) eqKeyword(st *eqState, k string, a any, da *doc, pa string, b any, db *doc, pb string) bool {
	switch {
	case valueForm(k) == dialect.SchemaMap || k == "dependencies":
		ma, ok1 := a.(map[string]any)
		mb, ok2 := b.(map[string]any)
		if !ok1 || !ok2 {
			return valueEqual(a, b)
		}
		if len(ma) != len(mb) {
			return false
		}
		for _, name := range sortedKeys(ma) {
			vb, ok := mb[name]
			if !ok {
				return false
			}
			va := ma[name]
			if k == "dependencies" && (!isSchemaValue(va) || !isSchemaValue(vb)) {
				if !valueEqual(va, vb) {
					return false
				}
				continue
			}
			if !c.eqSchema(st, va, da, child(pa, name), vb, db, child(pb, name)) {
				return false
			}
		}
		return true
	case valueForm(k) == dialect.SchemaList || k == "items":
		la, ok1 := a.([]any)
		lb, ok2 := b.([]any)
		if !ok1 || !ok2 {
			if k == "items" && !ok1 && !ok2 {
				return c.eqSchema(st, a, da, pa, b, db, pb)
			}
			return valueEqual(a, b)
		}
		if len(la) != len(lb) {
			return false
		}
		for i := range la {
			if !c.eqSchema(st, la[i], da, child(pa, strconv.Itoa(i)), lb[i], db, child(pb, strconv.Itoa(i))) {
				return false
			}
		}
		return true
	case valueForm(k) == dialect.Schema:
		return c.eqSchema(st, a, da, pa, b, db, pb)
	}
	return valueEqual(a, b)
}
