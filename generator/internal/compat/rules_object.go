package compat

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// schemaMap returns a well-formed map-of-schemas keyword of v
// ("properties", "patternProperties").
func schemaMap(v *view, k string) map[string]any {
	kv, ok := v.kw[k]
	if !ok || !wellFormed(k, kv.v) {
		return nil
	}
	return kv.v.(map[string]any)
}

// requiredList returns the well-formed "required" names of v, in order.
func requiredList(v *view) []string {
	kv, ok := v.kw["required"]
	if !ok || !wellFormed("required", kv.v) {
		return nil
	}
	var out []string
	for _, r := range kv.v.([]any) {
		out = append(out, r.(string))
	}
	return out
}

func toSet(names []string) map[string]bool {
	s := make(map[string]bool, len(names))
	for _, n := range names {
		s[n] = true
	}
	return s
}

// contentModel is what a schema says about a property name it does not list
// in "properties".
type contentModel int

const (
	modelOpen    contentModel = iota // anything is allowed under the name
	modelClosed                      // the name is not allowed
	modelPartial                     // the value must satisfy the given schemas
	modelUnknown                     // a patternProperties regex cannot be evaluated
)

// fallback returns the content model that applies to an unlisted property
// name in v: the schemas of every matching patternProperties entry, else
// additionalProperties, else anything (JSON Schema's rules). ptr is the
// pointer of the deciding keyword.
func (c *checker) fallback(v *view, name string) (model contentModel, schemas []*view, ptr string) {
	pats := schemaMap(v, "patternProperties")
	var matched []*view
	for _, p := range sortedKeys(pats) {
		re, err := c.regex(p)
		if err != nil {
			return modelUnknown, nil, v.propPtr("patternProperties", p)
		}
		if re.MatchString(name) {
			matched = append(matched, v.sub("patternProperties", p))
		}
	}
	if len(matched) == 0 {
		kv, ok := v.kw["additionalProperties"]
		if !ok || !wellFormed("additionalProperties", kv.v) {
			return modelOpen, nil, v.ptr
		}
		matched = []*view{v.sub("additionalProperties")}
	}
	var partial []*view
	for _, m := range matched {
		if m.isFalse() {
			return modelClosed, nil, m.ptr
		}
		if !m.trivial() {
			partial = append(partial, m)
		}
	}
	if len(partial) == 0 {
		return modelOpen, nil, v.ptr
	}
	return modelPartial, partial, partial[0].ptr
}

// defaultBlind are the keywords under which the worker does not fill in defaults
// (runtime.fillDefaults follows properties, additionalProperties, items and $ref
// only): a required property with a default below one of them stays incompatible.
var defaultBlind = map[string]bool{
	"allOf": true, "anyOf": true, "oneOf": true, "not": true, "if": true, "then": true, "else": true,
	"prefixItems": true, "patternProperties": true, "dependentSchemas": true, "contains": true,
}

// filled reports whether the worker fills defaults into the object schema at ptr of
// the new schema, so that a property required there with a default may be absent
// from an old document.
func filled(ptr string) bool { return notFilledUnder(ptr) == "" }

// notFilledUnder names the first keyword on the way to ptr under which defaults are
// not filled in, or "" when there is none.
func notFilledUnder(ptr string) string {
	toks := strings.Split(ptr, "/")
	for i, tok := range toks {
		named := i > 0 && (toks[i-1] == "properties" || toks[i-1] == "$defs" || toks[i-1] == "definitions")
		if defaultBlind[tok] && !named {
			return tok
		}
	}
	return ""
}

// rawHasDefault reports whether property name of v declares a "default".
func rawHasDefault(v *view, name string) bool {
	props := schemaMap(v, "properties")
	m, ok := props[name].(map[string]any)
	if !ok {
		return false
	}
	_, has := m["default"]
	return has
}

// objectRules follows Confluent's ObjectSchemaDiff: properties under the
// three content models, required, patternProperties, additionalProperties
// and the property counts.
func (c *checker) objectRules(oe, n *view, label string) []Finding {
	oProps, nProps := schemaMap(oe, "properties"), schemaMap(n, "properties")
	oReq, nReq := toSet(requiredList(oe)), requiredList(n)
	nReqSet := toSet(nReq)
	names := map[string]bool{}
	for k := range oProps {
		names[k] = true
	}
	for k := range nProps {
		names[k] = true
	}
	var f []Finding
	for _, name := range sortedKeys(names) {
		_, inO := oProps[name]
		_, inN := nProps[name]
		switch {
		case inO && inN:
			f = append(f, c.compare(oe.sub("properties", name), n.sub("properties", name), join(label, name))...)
		case inN:
			f = append(f, c.propertyAdded(oe, n, name, nReqSet[name] && !oReq[name], label)...)
		default:
			f = append(f, c.propertyRemoved(oe, n, name, label)...)
		}
	}
	// REQUIRED_ATTRIBUTE_ADDED: an old document may lack the property.
	// REQUIRED_ATTRIBUTE_REMOVED is compatible.
	seen := map[string]bool{}
	for i, r := range nReq {
		if oReq[r] || seen[r] {
			continue
		}
		seen[r] = true
		_, inO := oProps[r]
		_, inN := nProps[r]
		if inN && !inO {
			continue // reported with the added property's content model
		}
		path := child(n.kw["required"].ptr, "required", strconv.Itoa(i))
		if rawHasDefault(n, r) {
			// REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED is compatible, as for
			// Confluent: the worker fills the default into an old document
			// before validating it as the new version.
			if filled(n.ptr) {
				continue
			}
			f = append(f, mk(RuleRequiredAttributeWithDefaultAdded, path, oe.kwPtr("required"), join(label, r),
				"now required; old documents without it are rejected (its default is not filled in under "+notFilledUnder(n.ptr)+")"))
			continue
		}
		f = append(f, mk(RuleRequiredAttributeAdded, path, oe.kwPtr("required"), join(label, r),
			"now required; old documents without it are rejected"))
	}
	f = append(f, c.patternRules(oe, n, label)...)
	f = append(f, c.additionalPropertiesRule(oe, n, label)...)
	f = append(f, minRule(oe, n, "minProperties", RuleMinPropertiesAdded, RuleMinPropertiesIncreased, label, nil)...)
	f = append(f, maxRule(oe, n, "maxProperties", RuleMaxPropertiesAdded, RuleMaxPropertiesDecreased, label, nil)...)
	return f
}

// propertyAdded judges a property listed only in the new schema against what
// the old schema allowed under that name.
func (c *checker) propertyAdded(oe, n *view, name string, newlyRequired bool, label string) []Finding {
	np := n.sub("properties", name)
	path := n.propPtr("properties", name)
	lbl := join(label, name)
	withDefault := rawHasDefault(n, name)
	model, schemas, ptr := c.fallback(oe, name)
	var f []Finding
	switch model {
	case modelOpen:
		// The old open content model allowed any value under this name.
		switch {
		case newlyRequired && withDefault:
			f = append(f, mk(RuleRequiredPropertyWithDefaultAddedToOpenContentModel, path, oe.ptr, lbl,
				"required property added to an open content model; old documents without it are rejected (a default is not applied by validation)"))
		case newlyRequired:
			f = append(f, mk(RuleRequiredPropertyAddedToOpenContentModel, path, oe.ptr, lbl,
				"required property added to an open content model; old documents without it are rejected"))
		case !np.trivial():
			// PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL (np
			// trivial) is the compatible case.
			f = append(f, mk(RuleOptionalPropertyAddedToOpenContentModel, path, oe.ptr, lbl,
				"property added to an open content model; old documents may hold any value under this name"))
		}
	case modelClosed:
		// OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL is compatible: no old
		// document had the property.
		if newlyRequired {
			rule := RuleRequiredPropertyAddedToUnopenContentModel
			msg := "required property added; old documents never contained it"
			if withDefault {
				// Compatible, as for Confluent, where the worker fills the
				// default in (see filled).
				if filled(n.ptr) {
					break
				}
				rule = RuleRequiredPropertyWithDefaultAddedToUnopenContentModel
				msg += " (its default is not filled in under " + notFilledUnder(n.ptr) + ")"
			}
			f = append(f, mk(rule, path, ptr, lbl, msg))
		}
	case modelPartial:
		// PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL when one
		// of the schemas that applied to the name implies the new one.
		var first []Finding
		covered := false
		for _, s := range schemas {
			r := c.compare(s, np, lbl)
			if len(r) == 0 {
				covered = true
				break
			}
			if first == nil {
				first = r
			}
		}
		if !covered {
			f = append(f, mk(RulePropertyAddedNotCoveredByPartiallyOpenContentModel, path, ptr, lbl,
				"property added, but old documents could hold values under this name that the new property schema rejects ("+reason(first, lbl)+")"))
		}
		if newlyRequired && !(withDefault && filled(n.ptr)) {
			rule := RuleRequiredPropertyAddedToUnopenContentModel
			if withDefault {
				rule = RuleRequiredPropertyWithDefaultAddedToUnopenContentModel
			}
			f = append(f, mk(rule, path, ptr, lbl, "required property added; old documents without it are rejected"))
		}
	default:
		f = append(f, mk(RuleUnsupportedKeyword, path, ptr, lbl,
			"cannot tell which old patternProperties apply: a regex is not supported by the checker"))
	}
	return f
}

// propertyRemoved judges a property listed only in the old schema against
// what the new schema allows under that name.
func (c *checker) propertyRemoved(oe, n *view, name string, label string) []Finding {
	op := oe.sub("properties", name)
	oldPath := oe.propPtr("properties", name)
	lbl := join(label, name)
	closest := n.ptr
	if n.has("properties") {
		closest = n.kwPtr("properties")
	}
	model, schemas, _ := c.fallback(n, name)
	switch model {
	case modelOpen:
		return nil // PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL: compatible
	case modelClosed:
		if op.isFalse() {
			return nil // PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL
		}
		return []Finding{mk(RulePropertyRemovedFromClosedContentModel, closest, oldPath, lbl,
			"property removed from a closed content model; old documents containing it are rejected")}
	case modelPartial:
		for _, s := range schemas {
			if r := c.compare(op, s, lbl); len(r) > 0 {
				return []Finding{mk(RulePropertyRemovedNotCoveredByPartiallyOpenContentModel, closest, oldPath, lbl,
					"property removed and its old values are not all accepted by the partially open content model at "+s.ptr+" ("+reason(r, lbl)+")")}
			}
		}
		return nil // PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
	}
	return []Finding{mk(RuleUnsupportedKeyword, closest, oldPath, lbl,
		"cannot tell which new patternProperties apply: a regex is not supported by the checker")}
}

// literalPrefix returns the literal prefix of an anchored pattern "^abc",
// or false when the pattern is anything more complex.
func literalPrefix(p string) (string, bool) {
	if !strings.HasPrefix(p, "^") {
		return "", false
	}
	rest := p[1:]
	if rest == "" || regexp.QuoteMeta(rest) != rest {
		return "", false
	}
	return rest, true
}

// disjointPatterns reports whether no property name can match both
// patterns; only anchored literal prefixes are decided.
func disjointPatterns(p, q string) bool {
	a, ok1 := literalPrefix(p)
	b, ok2 := literalPrefix(q)
	return ok1 && ok2 && !strings.HasPrefix(a, b) && !strings.HasPrefix(b, a)
}

// patternRules compares patternProperties (the partially open content
// model). A pattern in both schemas is compared recursively. A pattern added
// by the new schema must accept every old value a matching name could hold
// (ADDITIONAL_PROPERTIES_NARROWED otherwise). A removed pattern hands its
// names over to the new additionalProperties, which must accept them.
func (c *checker) patternRules(oe, n *view, label string) []Finding {
	oPats, nPats := schemaMap(oe, "patternProperties"), schemaMap(n, "patternProperties")
	oProps := schemaMap(oe, "properties")
	all := map[string]bool{}
	for p := range oPats {
		all[p] = true
	}
	for p := range nPats {
		all[p] = true
	}
	var f []Finding
	for _, p := range sortedKeys(all) {
		_, inO := oPats[p]
		_, inN := nPats[p]
		lbl := join(label, "/"+p+"/")
		switch {
		case inO && inN:
			f = append(f, c.compare(oe.sub("patternProperties", p), n.sub("patternProperties", p), lbl)...)
		case inN:
			np := n.sub("patternProperties", p)
			if np.trivial() {
				continue
			}
			path := n.propPtr("patternProperties", p)
			re, err := c.regex(p)
			if err != nil {
				f = append(f, mk(RuleUnsupportedKeyword, path, oe.ptr, lbl,
					fmt.Sprintf("patternProperties regex %q is not supported by the checker", p)))
				continue
			}
			why := ""
			for _, name := range sortedKeys(oProps) {
				if re.MatchString(name) {
					if r := c.compare(oe.sub("properties", name), np, join(label, name)); len(r) > 0 {
						why = r[0].Message
						break
					}
				}
			}
			for _, q := range sortedKeys(oPats) {
				if why != "" {
					break
				}
				if disjointPatterns(p, q) {
					continue
				}
				if r := c.compare(oe.sub("patternProperties", q), np, lbl); len(r) > 0 {
					why = reason(r, lbl)
				}
			}
			if why == "" {
				ap := oe.sub("additionalProperties")
				if !ap.isFalse() {
					if r := c.compare(ap, np, lbl); len(r) > 0 {
						why = reason(r, lbl)
					}
				}
			}
			if why != "" {
				f = append(f, mk(RuleAdditionalPropertiesNarrowed, path, oe.ptr, lbl,
					fmt.Sprintf("patternProperties %q added and old documents may hold matching properties it rejects (%s)", p, why)))
			}
		default:
			op := oe.sub("patternProperties", p)
			if op.isFalse() {
				continue
			}
			ap := n.sub("additionalProperties")
			if r := c.compare(op, ap, lbl); len(r) > 0 {
				f = append(f, mk(RuleAdditionalPropertiesNarrowed, n.kwPtr("additionalProperties"), oe.propPtr("patternProperties", p), lbl,
					fmt.Sprintf("patternProperties %q removed and the new additionalProperties does not accept the properties it allowed (%s)", p, reason(r, lbl))))
			}
		}
	}
	return f
}

// additionalPropertiesRule follows Confluent: ADDITIONAL_PROPERTIES_ADDED
// and ADDITIONAL_PROPERTIES_EXTENDED are compatible,
// ADDITIONAL_PROPERTIES_REMOVED (open → closed) and
// ADDITIONAL_PROPERTIES_NARROWED (open → a schema) are not; schema → schema
// is compared recursively.
func (c *checker) additionalPropertiesRule(oe, n *view, label string) []Finding {
	oAP, nAP := oe.sub("additionalProperties"), n.sub("additionalProperties")
	if oAP.isFalse() || nAP.trivial() {
		return nil
	}
	path, oldPath := n.kwPtr("additionalProperties"), oe.kwPtr("additionalProperties")
	switch {
	case nAP.isFalse():
		return []Finding{mk(RuleAdditionalPropertiesRemoved, path, oldPath, label,
			"additionalProperties is now false; old documents with properties the new schema does not list are rejected")}
	case oAP.trivial():
		return []Finding{mk(RuleAdditionalPropertiesNarrowed, path, oldPath, label,
			"additionalProperties now constrains properties that were unconstrained")}
	}
	return c.compare(oAP, nAP, join(label, "*"))
}
