package compat

import (
	"fmt"
	"math/big"
	"strings"
)

// allTypes is the JSON Schema type universe with "integer" folded into "number".
var allTypes = []string{"array", "boolean", "null", "number", "object", "string"}

// typeSet is a set of type names; nil means "any type".
type typeSet map[string]bool

// typeList parses a well-formed "type" value.
func typeList(v any) typeSet {
	switch t := v.(type) {
	case string:
		return typeSet{t: true}
	case []any:
		s := typeSet{}
		for _, e := range t {
			if name, ok := e.(string); ok {
				s[name] = true
			}
		}
		return s
	}
	return nil
}

// typesOf returns the "type" of a view, or nil when absent or malformed.
func typesOf(v *view) typeSet {
	kv, ok := v.kw["type"]
	if !ok || !wellFormed("type", kv.v) {
		return nil
	}
	return typeList(kv.v)
}

// admits reports whether type set s accepts values of JSON type t.
func admits(s typeSet, t string) bool {
	return s == nil || s[t] || (t == "integer" && s["number"])
}

// admitsNum reports whether s accepts some numbers.
func admitsNum(s typeSet) bool { return admits(s, "integer") }

// intersectTypes returns the type names accepted by both sets.
func intersectTypes(a, b typeSet) []any {
	var out []any
	for _, t := range allTypes {
		if t == "number" {
			if admits(a, "number") && admits(b, "number") {
				out = append(out, "number")
			} else if admits(a, "integer") && admits(b, "integer") {
				out = append(out, "integer")
			}
			continue
		}
		if admits(a, t) && admits(b, t) {
			out = append(out, t)
		}
	}
	return out
}

// renderTypes renders a type set for messages.
func renderTypes(s typeSet) string {
	if s == nil {
		return "any type"
	}
	names := sortedKeys(s)
	if len(names) == 1 {
		return fmt.Sprintf("%q", names[0])
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// enumConst returns the values allowed by the enum and const keywords of v;
// ok is false when v has neither.
func enumConst(v *view) (vals []any, ok bool) {
	ekv, hasEnum := v.kw["enum"]
	ckv, hasConst := v.kw["const"]
	if hasEnum && !wellFormed("enum", ekv.v) {
		hasEnum = false
	}
	switch {
	case hasEnum && hasConst:
		for _, x := range ekv.v.([]any) {
			if valueEqual(x, ckv.v) {
				return []any{ckv.v}, true
			}
		}
		return []any{}, true
	case hasEnum:
		return ekv.v.([]any), true
	case hasConst:
		return []any{ckv.v}, true
	}
	return nil, false
}

// finiteValues returns the complete list of values the (old) view can
// accept when it is finite: its enum/const, or the values of a "type" made
// only of "null" and "boolean". Values the view's type rejects are dropped.
func finiteValues(v *view) ([]any, bool) {
	types := typesOf(v)
	vals, ok := enumConst(v)
	if !ok {
		if types == nil {
			return nil, false
		}
		for t := range types {
			if t != "null" && t != "boolean" {
				return nil, false
			}
		}
		if types["null"] {
			vals = append(vals, nil)
		}
		if types["boolean"] {
			vals = append(vals, false, true)
		}
		return vals, true
	}
	var out []any
	for _, x := range vals {
		if admits(types, jsonType(x)) {
			out = append(out, x)
		}
	}
	return out, true
}

// effectiveTypes are the types of the documents a view can accept: its
// "type", narrowed to the types of its values when those are finite.
func effectiveTypes(v *view, vals []any, finite bool) typeSet {
	if !finite {
		return typesOf(v)
	}
	s := typeSet{}
	for _, x := range vals {
		s[jsonType(x)] = true
	}
	return s
}

// compareGroups compares the keyword groups of an old view without
// combinators against a new view. Each group only applies when both schemas
// accept instances of its type.
func (c *checker) compareGroups(oe, n *view, label string) []Finding {
	oVals, oFin := finiteValues(oe)
	if oFin && len(oVals) == 0 {
		return nil // the old schema accepts nothing
	}
	oTypes := effectiveTypes(oe, oVals, oFin)
	nTypes := typesOf(n)
	var f []Finding
	f = append(f, c.typeRule(oe, oTypes, n, label)...)
	f = append(f, c.enumRule(oe, oVals, oFin, n, label)...)
	if admits(oTypes, "string") && admits(nTypes, "string") {
		f = append(f, c.stringRules(oe, oVals, oFin, n, label)...)
	}
	if admitsNum(oTypes) && admitsNum(nTypes) {
		f = append(f, c.numberRules(oe, oTypes, oVals, oFin, n, label)...)
	}
	if admits(oTypes, "object") && admits(nTypes, "object") {
		f = append(f, c.objectRules(oe, n, label)...)
	}
	if admits(oTypes, "array") && admits(nTypes, "array") {
		f = append(f, c.arrayRules(oe, n, label)...)
	}
	return f
}

// typeRule: TYPE_EXTENDED (no finding) when every old type is still
// accepted; otherwise TYPE_NARROWED when the new types are a subset of the
// old ones, TYPE_CHANGED when not.
func (c *checker) typeRule(oe *view, oTypes typeSet, n *view, label string) []Finding {
	nTypes := typesOf(n)
	if nTypes == nil {
		return nil
	}
	candidates := allTypes
	if oTypes != nil {
		candidates = sortedKeys(oTypes)
	}
	var lost []string
	for _, t := range candidates {
		if !admits(nTypes, t) {
			lost = append(lost, t)
		}
	}
	if len(lost) == 0 {
		return nil
	}
	narrowed := true
	for t := range nTypes {
		if !admits(oTypes, t) {
			narrowed = false
		}
	}
	rule, verb := RuleTypeChanged, "changed"
	if narrowed {
		rule, verb = RuleTypeNarrowed, "narrowed"
	}
	return []Finding{mk(rule, n.kwPtr("type"), oe.kwPtr("type"), label,
		fmt.Sprintf("type %s from %s to %s", verb, renderTypes(oTypes), renderTypes(nTypes)))}
}

// enumRule compares enum/const (Confluent's EnumSchemaDiff and
// ConstSchemaDiff): ENUM_ARRAY_EXTENDED is compatible, ENUM_ARRAY_NARROWED
// and ENUM_ARRAY_CHANGED are not. An enum or const added where the old
// schema allowed unboundedly many values is ENUM_ARRAY_NARROWED.
func (c *checker) enumRule(oe *view, oVals []any, oFin bool, n *view, label string) []Finding {
	nVals, nFin := enumConst(n)
	if !nFin {
		return nil
	}
	kw := "enum"
	if n.has("const") {
		kw = "const"
	}
	oldKw := "enum"
	if oe.has("const") {
		oldKw = "const"
	}
	path, oldPath := n.kwPtr(kw), oe.kwPtr(oldKw)
	if !oFin {
		return []Finding{mk(RuleEnumArrayNarrowed, path, oldPath, label,
			fmt.Sprintf("%s added: only %s accepted now", kw, renderValues(nVals)))}
	}
	var missing []any
	for _, v := range oVals {
		if !containsValue(nVals, v) {
			missing = append(missing, v)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	subset := true
	for _, v := range nVals {
		if !containsValue(oVals, v) {
			subset = false
		}
	}
	rule := RuleEnumArrayChanged
	if subset {
		rule = RuleEnumArrayNarrowed
	}
	if kw == "const" && oe.has("const") {
		return []Finding{mk(rule, path, oldPath, label,
			fmt.Sprintf("const changed from %s to %s", renderValue(oe.kw["const"].v), renderValue(n.kw["const"].v)))}
	}
	return []Finding{mk(rule, path, oldPath, label,
		fmt.Sprintf("%s no longer accepts %s", kw, renderValues(missing)))}
}

// intKw returns a well-formed non-negative integer keyword of v.
func intKw(v *view, k string) (*big.Int, bool) {
	kv, ok := v.kw[k]
	if !ok {
		return nil, false
	}
	return nonNegInt(kv.v)
}

// strKw returns a string keyword of v.
func strKw(v *view, k string) (string, bool) {
	kv, ok := v.kw[k]
	if !ok {
		return "", false
	}
	s, ok := kv.v.(string)
	return s, ok
}

// numKw returns a numeric keyword of v.
func numKw(v *view, k string) (*big.Rat, bool) {
	kv, ok := v.kw[k]
	if !ok {
		return nil, false
	}
	return toRat(kv.v)
}

// minRule reports a lower limit (minLength, minItems, minProperties) that
// the new schema added or raised. violates, when not nil, tells whether a
// known old value breaks the new limit.
func minRule(oe, n *view, k, added, increased, label string, violates func(*big.Int) bool) []Finding {
	nv, ok := intKw(n, k)
	if !ok {
		return nil
	}
	ov, oHas := intKw(oe, k)
	if !oHas {
		ov = new(big.Int)
	}
	if nv.Cmp(ov) <= 0 || (violates != nil && !violates(nv)) {
		return nil
	}
	if oHas {
		return []Finding{mk(increased, n.kwPtr(k), oe.kwPtr(k), label, fmt.Sprintf("%s increased from %s to %s", k, ov, nv))}
	}
	return []Finding{mk(added, n.kwPtr(k), oe.kwPtr(k), label, fmt.Sprintf("%s %s added", k, nv))}
}

// maxRule reports an upper limit (maxLength, maxItems, maxProperties) that
// the new schema added or lowered.
func maxRule(oe, n *view, k, added, decreased, label string, violates func(*big.Int) bool) []Finding {
	nv, ok := intKw(n, k)
	if !ok {
		return nil
	}
	ov, oHas := intKw(oe, k)
	if (oHas && nv.Cmp(ov) >= 0) || (violates != nil && !violates(nv)) {
		return nil
	}
	if oHas {
		return []Finding{mk(decreased, n.kwPtr(k), oe.kwPtr(k), label, fmt.Sprintf("%s decreased from %s to %s", k, ov, nv))}
	}
	return []Finding{mk(added, n.kwPtr(k), oe.kwPtr(k), label, fmt.Sprintf("%s %s added", k, nv))}
}

// stringRules follows Confluent's StringSchemaDiff, plus format. When the old
// schema only accepts a known list of strings (enum/const), a tightened
// constraint is reported only if one of those strings breaks it.
func (c *checker) stringRules(oe *view, oVals []any, oFin bool, n *view, label string) []Finding {
	var strs []string
	for _, v := range oVals {
		if s, ok := v.(string); ok {
			strs = append(strs, s)
		}
	}
	anyOld := func(pred func(string) bool) bool {
		if !oFin {
			return true
		}
		for _, s := range strs {
			if pred(s) {
				return true
			}
		}
		return false
	}
	var f []Finding
	f = append(f, minRule(oe, n, "minLength", RuleMinLengthAdded, RuleMinLengthIncreased, label, func(lim *big.Int) bool {
		return anyOld(func(s string) bool { return big.NewInt(strLen(s)).Cmp(lim) < 0 })
	})...)
	f = append(f, maxRule(oe, n, "maxLength", RuleMaxLengthAdded, RuleMaxLengthDecreased, label, func(lim *big.Int) bool {
		return anyOld(func(s string) bool { return big.NewInt(strLen(s)).Cmp(lim) > 0 })
	})...)
	if np, ok := strKw(n, "pattern"); ok {
		op, oHas := strKw(oe, "pattern")
		if !oHas || op != np {
			re, err := c.regex(np)
			if anyOld(func(s string) bool { return err != nil || !re.MatchString(s) }) {
				if oHas {
					f = append(f, mk(RulePatternChanged, n.kwPtr("pattern"), oe.kwPtr("pattern"), label,
						fmt.Sprintf("pattern changed from %q to %q", op, np)))
				} else {
					f = append(f, mk(RulePatternAdded, n.kwPtr("pattern"), oe.kwPtr("pattern"), label,
						fmt.Sprintf("pattern %q added", np)))
				}
			}
		}
	}
	// format: Confluent does not compare it; jobc treats it as an assertion
	// (validators may enforce it), so adding or changing it may reject old
	// strings. Removing it is compatible.
	if nf, ok := strKw(n, "format"); ok {
		of, oHas := strKw(oe, "format")
		if !oHas || of != nf {
			if oHas {
				f = append(f, mk(RuleFormatChanged, n.kwPtr("format"), oe.kwPtr("format"), label,
					fmt.Sprintf("format changed from %q to %q", of, nf)))
			} else {
				f = append(f, mk(RuleFormatAdded, n.kwPtr("format"), oe.kwPtr("format"), label,
					fmt.Sprintf("format %q added", nf)))
			}
		}
	}
	return f
}

// bound is an effective lower or upper numeric limit.
type bound struct {
	val  *big.Rat
	excl bool
	kw   string // keyword that holds the number
}

// numBound returns the tightest lower (lower=true) or upper limit of v from
// minimum/exclusiveMinimum (or maximum/exclusiveMaximum), accepting both the
// numeric (draft 6+) and the boolean (draft 4) form of the exclusive keyword.
// With intOnly the limit is rounded to the integers it admits.
func numBound(v *view, lower, intOnly bool) *bound {
	incKw, excKw := "maximum", "exclusiveMaximum"
	if lower {
		incKw, excKw = "minimum", "exclusiveMinimum"
	}
	var cands []*bound
	inc, hasInc := numKw(v, incKw)
	draft4Excl := false
	if kv, ok := v.kw[excKw]; ok {
		if b, isBool := kv.v.(bool); isBool {
			draft4Excl = b
		} else if r, ok := toRat(kv.v); ok {
			cands = append(cands, &bound{val: r, excl: true, kw: excKw})
		}
	}
	if hasInc {
		kw := incKw
		if draft4Excl {
			kw = excKw // draft 4: {"maximum": 10, "exclusiveMaximum": true}
		}
		cands = append(cands, &bound{val: inc, excl: draft4Excl, kw: kw})
	}
	var best *bound
	for _, b := range cands {
		if best == nil {
			best = b
			continue
		}
		cmp := b.val.Cmp(best.val)
		if !lower {
			cmp = -cmp
		}
		if cmp > 0 || (cmp == 0 && b.excl && !best.excl) {
			best = b
		}
	}
	if best == nil || !intOnly {
		return best
	}
	// Round to the admitted integers: x > 2.5 → x ≥ 3, x < 3 → x ≤ 2, ...
	q := new(big.Int).Quo(best.val.Num(), best.val.Denom()) // truncates toward zero
	fl := new(big.Int).Set(q)
	if best.val.Sign() < 0 && !best.val.IsInt() {
		fl.Sub(fl, big.NewInt(1))
	}
	var r *big.Int
	switch {
	case lower && best.excl:
		r = new(big.Int).Add(fl, big.NewInt(1))
	case lower:
		r = fl
		if !best.val.IsInt() {
			r = new(big.Int).Add(fl, big.NewInt(1))
		}
	case best.excl:
		r = fl
		if best.val.IsInt() {
			r = new(big.Int).Sub(fl, big.NewInt(1))
		}
	default:
		r = fl
	}
	return &bound{val: new(big.Rat).SetInt(r), kw: best.kw}
}

// numberRules follows Confluent's NumberSchemaDiff, comparing effective
// bounds rather than keywords one by one, so that e.g. minimum 5 →
// exclusiveMinimum 4 is recognised as compatible.
func (c *checker) numberRules(oe *view, oTypes typeSet, oVals []any, oFin bool, n *view, label string) []Finding {
	intOnly := !admits(oTypes, "number")
	var nums []*big.Rat
	for _, v := range oVals {
		if r, ok := toRat(v); ok {
			nums = append(nums, r)
		}
	}
	anyOld := func(pred func(*big.Rat) bool) bool {
		if !oFin {
			return true
		}
		for _, x := range nums {
			if pred(x) {
				return true
			}
		}
		return false
	}
	var f []Finding
	for _, lower := range []bool{true, false} {
		nb := numBound(n, lower, false)
		if nb == nil {
			continue
		}
		ob := numBound(oe, lower, intOnly)
		sign := 1
		if !lower {
			sign = -1
		}
		stricter := ob == nil || nb.val.Cmp(ob.val)*sign > 0 || (nb.val.Cmp(ob.val) == 0 && nb.excl && !ob.excl)
		if !stricter || !anyOld(func(x *big.Rat) bool {
			cmp := x.Cmp(nb.val) * sign
			return cmp < 0 || (cmp == 0 && nb.excl)
		}) {
			continue
		}
		f = append(f, boundFinding(oe, n, nb, lower, label))
	}
	if nm, ok := numKw(n, "multipleOf"); ok && nm.Sign() > 0 {
		om, oHas := numKw(oe, "multipleOf")
		var cands []*big.Rat
		if oHas && om.Sign() > 0 {
			cands = append(cands, om)
		}
		if intOnly {
			cands = append(cands, big.NewRat(1, 1))
		}
		divides := func(x *big.Rat) bool { return new(big.Rat).Quo(x, nm).IsInt() }
		ok := false
		for _, cnd := range cands {
			if divides(cnd) {
				ok = true
			}
		}
		if !ok && anyOld(func(x *big.Rat) bool { return !divides(x) }) {
			path, oldPath := n.kwPtr("multipleOf"), oe.kwPtr("multipleOf")
			switch {
			case !oHas || om.Sign() <= 0:
				f = append(f, mk(RuleMultipleOfAdded, path, oldPath, label, fmt.Sprintf("multipleOf %s added", ratString(nm))))
			case new(big.Rat).Quo(nm, om).IsInt():
				f = append(f, mk(RuleMultipleOfExpanded, path, oldPath, label,
					fmt.Sprintf("multipleOf expanded from %s to %s", ratString(om), ratString(nm))))
			default:
				f = append(f, mk(RuleMultipleOfChanged, path, oldPath, label,
					fmt.Sprintf("multipleOf changed from %s to %s", ratString(om), ratString(nm))))
			}
		}
	}
	return f
}

// boundFinding names a tightened numeric bound after the keyword holding it.
func boundFinding(oe, n *view, nb *bound, lower bool, label string) Finding {
	var added, tightened, verb string
	switch nb.kw {
	case "minimum":
		added, tightened, verb = RuleMinimumAdded, RuleMinimumIncreased, "increased"
	case "exclusiveMinimum":
		added, tightened, verb = RuleExclusiveMinimumAdded, RuleExclusiveMinimumIncreased, "increased"
	case "maximum":
		added, tightened, verb = RuleMaximumAdded, RuleMaximumDecreased, "decreased"
	default:
		added, tightened, verb = RuleExclusiveMaximumAdded, RuleExclusiveMaximumDecreased, "decreased"
	}
	path, oldPath := n.kwPtr(nb.kw), oe.kwPtr(nb.kw)
	ob := numBound(oe, lower, false)
	switch {
	case ob != nil && ob.kw == nb.kw:
		return mk(tightened, path, oldPath, label, fmt.Sprintf("%s %s from %s to %s", nb.kw, verb, ratString(ob.val), ratString(nb.val)))
	case ob != nil:
		if ov, ok := numKw(oe, nb.kw); ok {
			return mk(tightened, path, oldPath, label, fmt.Sprintf("%s %s from %s to %s", nb.kw, verb, ratString(ov), ratString(nb.val)))
		}
		oldPath = oe.kwPtr(ob.kw)
	}
	return mk(added, path, oldPath, label, fmt.Sprintf("%s %s added", nb.kw, ratString(nb.val)))
}
