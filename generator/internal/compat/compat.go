package compat

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/jobc-dev/jobc/internal/dialect"
)

// Finding is one reason the new schema may reject a document the old one accepted.
type Finding struct {
	// Rule is a stable id: Confluent's Difference.Type name, e.g. "TYPE_NARROWED".
	Rule string
	// Path is a JSON pointer into the NEW schema where the difference is (e.g.
	// "/properties/email/maxLength"). When the difference only exists in the
	// old schema (a removed thing) it is the closest existing location in the
	// new schema, and OldPath says where the removed thing was.
	Path string
	// OldPath is a JSON pointer into the OLD schema.
	OldPath string
	// Message is one sentence naming the property, e.g.
	// `property "email": maxLength decreased from 200 to 100`.
	Message string
}

// Check compares two schemas given as decoded JSON (map[string]any, []any,
// string, float64 or json.Number, bool, nil) and returns the
// incompatibilities: the reasons the new schema may reject a document the old
// schema accepted. The result is sorted by Path, then Rule (then OldPath and
// Message). An empty result means compatible.
func Check(oldSchema, newSchema any) []Finding {
	c := &checker{
		old:        &doc{root: oldSchema, views: map[string]*view{}},
		new:        &doc{root: newSchema, views: map[string]*view{}},
		memo:       map[string][]Finding{},
		inProgress: map[string]int{},
		minHit:     noHit,
		regexps:    map[string]regexpResult{},
	}
	o := c.old.makeView(oldSchema, "")
	n := c.new.makeView(newSchema, "")
	return normalize(c.compare(o, n, ""))
}

// Compatible reports whether the new schema accepts every document the old
// schema accepted, i.e. len(Check(oldSchema, newSchema)) == 0.
func Compatible(oldSchema, newSchema any) bool {
	return len(Check(oldSchema, newSchema)) == 0
}

// Work limits. Real schemas stay far below them; when one is exceeded the
// checker stops proving and fails closed.
const (
	maxSteps   = 50000
	maxEqSteps = 2000000
	noHit      = int(^uint(0) >> 1)
)

type regexpResult struct {
	re  *regexp.Regexp
	err error
}

// checker holds the state of one Check call.
type checker struct {
	old, new *doc
	// memo caches finished comparisons by view pair. A result is cached only
	// if it did not rely on the coinductive assumption of a pair still being
	// compared further up the stack.
	memo       map[string][]Finding
	inProgress map[string]int // pair → stack depth
	depth      int
	minHit     int // shallowest in-progress depth assumed since the last reset
	steps      int
	eqSteps    int
	regexps    map[string]regexpResult
}

// regex compiles a JSON Schema pattern with Go's RE2 engine. ECMA-262
// features RE2 lacks (lookaround, backreferences) make it fail, and callers
// then fail closed.
func (c *checker) regex(p string) (*regexp.Regexp, error) {
	if r, ok := c.regexps[p]; ok {
		return r.re, r.err
	}
	re, err := regexp.Compile(p)
	c.regexps[p] = regexpResult{re, err}
	return re, err
}

// compare returns the reasons new view n may reject a document accepted by
// old view o. label names the location in document terms ("address.street").
func (c *checker) compare(o, n *view, label string) []Finding {
	key := o.key + "\x00" + n.key
	if r, ok := c.memo[key]; ok {
		return r
	}
	if d, ok := c.inProgress[key]; ok {
		// Revisited while still comparing it: a cycle through $ref. Assume
		// compatible (coinduction); the rest of the comparison decides.
		if d < c.minHit {
			c.minHit = d
		}
		return nil
	}
	c.steps++
	if c.steps > maxSteps {
		return []Finding{mk(RuleUnsupportedKeyword, n.ptr, o.ptr, label,
			fmt.Sprintf("the schemas are too complex to compare (more than %d subschema comparisons)", maxSteps))}
	}
	depth := c.depth
	c.depth++
	c.inProgress[key] = depth
	saved := c.minHit
	c.minHit = noHit
	res := dedupe(c.compareInner(o, n, label))
	delete(c.inProgress, key)
	c.depth--
	if c.minHit >= depth {
		c.memo[key] = res
		c.minHit = saved
	} else if saved < c.minHit {
		c.minHit = saved
	}
	return res
}

func (c *checker) compareInner(o, n *view, label string) []Finding {
	if o.rawOK && n.rawOK && c.schemasEqual(o.raw, o.d, o.ptr, n.raw, n.d, n.ptr) {
		return nil // identical constraints
	}
	if n.trivial() || o.isFalse() {
		return nil
	}
	if n.invalid != "" {
		return []Finding{mk(RuleUnsupportedKeyword, n.ptr, o.ptr, label, "new schema cannot be interpreted: "+n.invalid)}
	}
	if o.invalid != "" {
		return []Finding{mk(RuleUnsupportedKeyword, n.ptr, o.ptr, label, "old schema cannot be interpreted: "+o.invalid)}
	}
	if n.isFalse() {
		return []Finding{mk(RuleTypeChanged, n.ptr, o.ptr, label, "the new schema is false and rejects every document")}
	}
	oe := c.mergeOld(o, 0)
	if oe.isFalse() {
		return nil // the old schema accepts nothing
	}
	f := c.unsupported(oe, n, label)
	if hasDisjunction(oe) {
		// An old document satisfies at least one old branch: check each branch
		// (merged with the old schema's other keywords) on its own.
		for _, b := range c.branches(oe) {
			f = append(f, c.compare(b, n, label)...)
		}
		return f
	}
	f = append(f, c.compareGroups(oe, n, label)...)
	f = append(f, c.compareNewConjuncts(o, oe, n, label)...)
	f = append(f, c.compareNewDisjunctions(oe, n, label)...)
	return f
}

// unsupported reports the keywords of o or n that the checker cannot reason
// about and that differ between the two subschemas (fail closed).
func (c *checker) unsupported(o, n *view, label string) []Finding {
	keys := map[string]bool{}
	for _, k := range o.constraintKeys() {
		keys[k] = true
	}
	for _, k := range n.constraintKeys() {
		keys[k] = true
	}
	var f []Finding
	report := func(k, why string) {
		f = append(f, mk(RuleUnsupportedKeyword, n.kwPtr(k), o.kwPtr(k), label, why))
	}
	done := map[string]bool{}
	for _, k := range sortedKeys(keys) {
		ov, oIn := o.kw[k]
		nv, nIn := n.kw[k]
		row, _ := dialect.Lookup(k)
		if supported(k) {
			_, oArr := ov.v.([]any)
			_, nArr := nv.v.([]any)
			if k == "items" && ((oIn && oArr) || (nIn && nArr)) {
				// The tuple form is an independent assertion (additionalItems,
				// which depends on it, is checked on its own).
				if !(oIn && nIn && c.keywordsEqual(k, ov, o.d, nv, n.d)) {
					report(k, `keyword "items" in array (tuple) form is not supported and differs between the schemas`)
				}
				continue
			}
			if (oIn && !wellFormed(k, ov.v)) || (nIn && !wellFormed(k, nv.v)) {
				if oIn && nIn && c.keywordsEqual(k, ov, o.d, nv, n.d) {
					continue
				}
				report(k, fmt.Sprintf("keyword %q has a malformed value", k))
			}
			continue
		}
		// A context keyword's meaning depends on the rest of its schema object (or
		// the base URI): the same value on both sides does not make it equivalent.
		if row.Context {
			report(k, fmt.Sprintf("keyword %q is not supported by the compatibility checker and the subschemas holding it differ", k))
			continue
		}
		// Keywords that mean something only together (if/then/else) are compared
		// as a whole; any other is an independent assertion, so an identical value
		// on both sides is trivially compatible.
		g, members := k, []string{k}
		if row.Group != "" {
			g, members = "group "+row.Group, dialect.Members(row.Group)
		}
		if done[g] {
			continue
		}
		done[g] = true
		equal := true
		for _, m := range members {
			ov, oIn := o.kw[m]
			nv, nIn := n.kw[m]
			if oIn != nIn || (oIn && !c.keywordsEqual(m, ov, o.d, nv, n.d)) {
				equal = false
				break
			}
		}
		if !equal {
			report(k, fmt.Sprintf("keyword %q is not supported by the compatibility checker and differs between the schemas", k))
		}
	}
	return f
}

// mk builds a Finding whose message is prefixed by the location label.
func mk(rule, path, oldPath, label, msg string) Finding {
	return Finding{Rule: rule, Path: path, OldPath: oldPath, Message: where(label) + ": " + msg}
}

// reason returns the message of the first finding without its location
// prefix when that is the given label, for embedding in another message.
func reason(r []Finding, label string) string {
	if len(r) == 0 {
		return ""
	}
	return strings.TrimPrefix(r[0].Message, where(label)+": ")
}

// where renders a location label for messages.
func where(label string) string {
	switch label {
	case "":
		return "root schema"
	case "[]":
		return "root array items"
	}
	return fmt.Sprintf("property %q", label)
}

// join extends a location label by a property name.
func join(label, name string) string {
	if label == "" {
		return name
	}
	return label + "." + name
}

// dedupe drops repeated findings (same Path, Rule and OldPath), keeping the
// first. Shared subschemas (a $defs entry used twice) would otherwise repeat
// their findings at every level.
func dedupe(f []Finding) []Finding {
	if len(f) < 2 {
		return f
	}
	seen := make(map[[3]string]bool, len(f))
	out := make([]Finding, 0, len(f))
	for _, x := range f {
		k := [3]string{x.Path, x.Rule, x.OldPath}
		if !seen[k] {
			seen[k] = true
			out = append(out, x)
		}
	}
	return out
}

// normalize removes duplicate findings and sorts them deterministically.
func normalize(f []Finding) []Finding {
	if len(f) == 0 {
		return nil
	}
	out := dedupe(f)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		if a.OldPath != b.OldPath {
			return a.OldPath < b.OldPath
		}
		return a.Message < b.Message
	})
	return out
}
