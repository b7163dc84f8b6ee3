package compat

import "math/big"

// arrayRules follows Confluent's ArraySchemaDiff for the single-schema form
// of "items" (the tuple form is unsupported and reported as such), minItems,
// maxItems and uniqueItems.
func (c *checker) arrayRules(oe, n *view, label string) []Finding {
	var f []Finding
	itemsLabel := label + "[]"
	if nkv, ok := n.kw["items"]; ok && isSchemaValue(nkv.v) {
		okv, oHas := oe.kw["items"]
		if !oHas || isSchemaValue(okv.v) {
			// A missing old "items" accepted anything: compare from true.
			f = append(f, c.compare(oe.sub("items"), n.sub("items"), itemsLabel)...)
		}
	}
	f = append(f, minRule(oe, n, "minItems", RuleMinItemsAdded, RuleMinItemsIncreased, label, nil)...)
	f = append(f, maxRule(oe, n, "maxItems", RuleMaxItemsAdded, RuleMaxItemsDecreased, label, nil)...)
	if nu, _ := n.kw["uniqueItems"].v.(bool); nu {
		ou, _ := oe.kw["uniqueItems"].v.(bool)
		// Arrays of at most one item are always unique.
		if max, ok := intKw(oe, "maxItems"); !ou && (!ok || max.Cmp(big.NewInt(1)) > 0) {
			f = append(f, mk(RuleUniqueItemsAdded, n.kwPtr("uniqueItems"), oe.kwPtr("uniqueItems"), label,
				"uniqueItems added; old arrays with duplicate items are rejected"))
		}
	}
	return f
}
