package schema

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Verdict is what Check says of a document.
type Verdict uint8

const (
	// Unsure: Check does not vouch for the document. It may be invalid JSON or break
	// the schema, or use something Check leaves to Decode and Validate, which then give
	// the reasons.
	Unsure Verdict = iota
	// Valid: Decode accepts the document, Validate finds no problem in it, and
	// FillDefaults would change nothing.
	Valid
	// ValidNeedsDefaults is Valid, except that FillDefaults would set some absent
	// property.
	ValidNeedsDefaults
)

// Check reads a document in place, in one pass over its bytes, with the compiled tree:
// it is the fast path in front of Decode and Validate for the payloads that pass.
//
// It never says Valid (or ValidNeedsDefaults) of a document that Decode, Validate or
// Exact rejects. It says Unsure of every other document it does not follow to the end,
// which includes, beyond invalid JSON and broken rules, whatever Exact looks at more
// closely (nesting beyond MaxDepth, a NUL escape, a number with an exponent or longer
// than 300 characters, one that is not an int64 where only an integer goes), and:
// duplicate object keys (Decode keeps
// the last), invalid UTF-8 (Decode replaces it), a lone UTF-16 surrogate in an escape,
// an unknown key with an escape, const and enum on an object or array, uniqueItems
// over objects or arrays, a $ref beside other keywords, more than 64 declared
// properties, and more than maxSpans unknown keys or uniqueItems items in one object
// or array.
//
// Most documents cost no allocation. What does: a string with a format (the check
// takes a copy), a number that is not an int64 (1.5, 1e2) and must be compared or
// typed (a big.Rat, as in the tree validator), the first string with escapes, and the
// first unknown key or uniqueItems item (a buffer each).
func (s *Schema) Check(data []byte) Verdict {
	sc := scanner{data: data, defaults: s.defaults}
	if !sc.value(s.root, 0) {
		return Unsure
	}
	sc.space()
	if sc.pos != len(data) { // Decode rejects trailing data
		return Unsure
	}
	if sc.missing {
		return ValidNeedsDefaults
	}
	return Valid
}

// maxRefs bounds the chain of references Check follows from one subschema.
const maxRefs = 32

// maxSpans bounds the unknown keys of one object, and the items of one uniqueItems
// array, that Check compares pairwise.
const maxSpans = 64

type scanner struct {
	data     []byte
	pos      int
	defaults bool   // the schema declares defaults: look for absent defaulted properties
	missing  bool   // some absent property has a default
	buf      []byte // the unescaped string, for strings with escapes
	unique   []byte // unescaped items of uniqueItems arrays, which spans point into
	// spans are the unknown keys of the objects, and the items of the uniqueItems
	// arrays, being read: each object or array pushes its own and pops them at its end.
	// Most documents need none, and allocate nothing.
	spans []span
}

func (s *scanner) push(sp span) {
	if s.spans == nil {
		s.spans = make([]span, 0, 16)
	}
	s.spans = append(s.spans, sp)
}

// span is an unknown key, or an item of a uniqueItems array: its text is a key or a
// string unescaped, or a number or a literal as written.
type span struct {
	text   []byte
	string bool
	i      int64 // a number's value, when it is an int64
	isInt  bool
}

// separator reads what follows a member or an element: a comma (end false) or the
// closing bracket (end true); anything else is not JSON (ok false).
func (s *scanner) separator(closing byte) (end, ok bool) {
	s.space()
	if s.pos == len(s.data) {
		return false, false
	}
	c := s.data[s.pos]
	s.pos++
	return c == closing, c == closing || c == ','
}

func (s *scanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// value reads one value, with the leading space, and checks it against n. A nil n
// allows anything (an undeclared property, an array without items). It reports whether
// the value is well formed and valid.
func (s *scanner) value(n *node, depth int) bool {
	n, ok := target(n)
	if !ok {
		return false
	}
	s.space()
	if s.pos == len(s.data) {
		return false
	}
	switch c := s.data[s.pos]; c {
	case '{':
		return depth < MaxDepth && s.object(n, depth)
	case '[':
		return depth < MaxDepth && s.array(n, depth)
	case '"':
		return s.string(n)
	case 't':
		return s.literal("true", true, n)
	case 'f':
		return s.literal("false", false, n)
	case 'n':
		return s.literal("null", nil, n)
	default:
		return isNumberStart(c) && s.number(n)
	}
}

// target is the node whose rules a value must meet: n, or what n refers to when it
// checks nothing itself (the tree validator checks both; FillDefaults follows the
// reference). nil means anything goes; false, that Check cannot tell.
func target(n *node) (*node, bool) {
	for hops := 0; n != nil && n.ref != nil; hops++ {
		if hops == maxRefs || !n.onlyRef() {
			return nil, false
		}
		n = n.ref
	}
	if n != nil && n.boolean != nil {
		return nil, *n.boolean
	}
	return n, true
}

// onlyRef says whether n has no rule beside its reference.
func (n *node) onlyRef() bool {
	return n.types == 0 && !n.hasConstant && !n.hasEnum && n.checkFormat == nil &&
		n.minLength < 0 && n.maxLength < 0 && n.pattern == nil && !n.boundsNumbers() &&
		n.minItems < 0 && n.maxItems < 0 && !n.uniqueItems && n.items == nil &&
		n.minProperties < 0 && n.maxProperties < 0 && n.required == nil &&
		n.properties == nil && n.additional == nil
}

func (s *scanner) literal(word string, v any, n *node) bool {
	if !bytes.HasPrefix(s.data[s.pos:], []byte(word)) {
		return false
	}
	s.pos += len(word)
	if n == nil {
		return true
	}
	return (n.types == 0 || n.types.matches(v)) &&
		(!n.hasConstant || equal(v, n.constant)) && (!n.hasEnum || n.inEnum(v))
}

func (s *scanner) number(n *node) bool {
	text, ok := s.numberText()
	// What Exact has something to say of is left to it: a long number, an exponent,
	// and where only an integer goes, anything but an int64.
	if !ok || len(text) > 300 || hasExponent(text) {
		return false
	}
	if n == nil {
		return true
	}
	if n.types&(tNumber|tInteger) == tInteger {
		if _, err := strconv.ParseInt(string(text), 10, 64); err != nil {
			return false
		}
	} else if n.types != 0 && !matchesNumber(n.types, text) {
		return false
	}
	// const and enum of numbers are rare: they compare as the tree validator does.
	if n.hasConstant && !equal(json.Number(text), n.constant) || n.hasEnum && !n.inEnum(json.Number(text)) {
		return false
	}
	if n.boundsNumbers() {
		num, ok := readNumber(text)
		return ok && n.numberBreaks(&num) == 0
	}
	return true
}

// hasExponent says whether a number's text has an exponent.
func hasExponent(text []byte) bool {
	for _, c := range text {
		if c|0x20 == 'e' {
			return true
		}
	}
	return false
}

// numberText reads a number as JSON writes it: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) numberText() ([]byte, bool) {
	start := s.pos
	if s.data[s.pos] == '-' {
		s.pos++
	}
	switch {
	case s.pos < len(s.data) && s.data[s.pos] == '0':
		s.pos++
	case !s.digits():
		return nil, false
	}
	if s.pos < len(s.data) && s.data[s.pos] == '.' {
		s.pos++
		if !s.digits() {
			return nil, false
		}
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.data) && (s.data[s.pos] == '+' || s.data[s.pos] == '-') {
			s.pos++
		}
		if !s.digits() {
			return nil, false
		}
	}
	return s.data[start:s.pos], true
}

// digits reads one or more decimal digits.
func (s *scanner) digits() bool {
	start := s.pos
	for s.pos < len(s.data) && '0' <= s.data[s.pos] && s.data[s.pos] <= '9' {
		s.pos++
	}
	return s.pos > start
}

func (s *scanner) string(n *node) bool {
	str, _, ok := s.stringText()
	if !ok || n == nil {
		return ok
	}
	if n.types != 0 && n.types&tString == 0 {
		return false
	}
	if n.hasConstant {
		if c, ok := n.constant.(string); !ok || c != string(str) {
			return false
		}
	}
	if n.hasEnum && !n.enumHas(str) {
		return false
	}
	// The format checks take any; a string is copied for them.
	if n.checkFormat != nil && n.checkFormat(string(str)) != nil {
		return false
	}
	if n.minLength >= 0 || n.maxLength >= 0 {
		// In code points, as the tree validator counts.
		l := utf8.RuneCount(str)
		if n.minLength >= 0 && l < n.minLength || n.maxLength >= 0 && l > n.maxLength {
			return false
		}
	}
	return n.pattern == nil || n.pattern.Match(str)
}

// enumHas says whether the string str is one of n's enum values (equal compares strings
// as Go does).
func (n *node) enumHas(str []byte) bool {
	for _, e := range n.enum {
		if e, ok := e.(string); ok && e == string(str) {
			return true
		}
	}
	return false
}

// stringText reads a string and returns it unescaped, as encoding/json decodes it, and
// whether it had escapes. Without escapes the result is a slice of the document, else
// of s.buf, valid until the next string. Invalid UTF-8 and lone surrogates, which
// encoding/json replaces with U+FFFD, are left to it.
func (s *scanner) stringText() ([]byte, bool, bool) {
	s.pos++ // the opening quote
	start := s.pos
	from := start // the text not yet copied to s.buf, once there is an escape
	escaped := false
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			if !escaped {
				return s.data[start : s.pos-1], false, true
			}
			s.buf = append(s.buf, s.data[from:s.pos-1]...)
			return s.buf, true, true
		case c < 0x20:
			return nil, false, false
		case c == '\\':
			if !escaped {
				s.buf = s.buf[:0]
				escaped = true
			}
			s.buf = append(s.buf, s.data[from:s.pos]...)
			if !s.escape() {
				return nil, false, false
			}
			from = s.pos
		case c < utf8.RuneSelf:
			s.pos++
		default:
			r, size := utf8.DecodeRune(s.data[s.pos:])
			if r == utf8.RuneError && size == 1 {
				return nil, false, false
			}
			s.pos += size
		}
	}
	return nil, false, false
}

// escape reads one escape sequence, at s.pos, and appends what it stands for to s.buf.
func (s *scanner) escape() bool {
	if s.pos+1 >= len(s.data) {
		return false
	}
	c := s.data[s.pos+1]
	s.pos += 2
	switch c {
	case '"', '\\', '/':
		s.buf = append(s.buf, c)
	case 'b':
		s.buf = append(s.buf, '\b')
	case 'f':
		s.buf = append(s.buf, '\f')
	case 'n':
		s.buf = append(s.buf, '\n')
	case 'r':
		s.buf = append(s.buf, '\r')
	case 't':
		s.buf = append(s.buf, '\t')
	case 'u':
		r, ok := s.hex4()
		if !ok || r == 0 { // a NUL is left to Exact, which names it
			return false
		}
		if utf16.IsSurrogate(r) {
			// Only a high surrogate followed by an escaped low one makes a rune.
			if r >= 0xdc00 || !bytes.HasPrefix(s.data[s.pos:], []byte(`\u`)) {
				return false
			}
			s.pos += 2
			low, ok := s.hex4()
			if !ok || low < 0xdc00 || low > 0xdfff {
				return false
			}
			r = utf16.DecodeRune(r, low)
		}
		s.buf = utf8.AppendRune(s.buf, r)
	default:
		return false
	}
	return true
}

// hex4 reads the four hex digits of a \u escape.
func (s *scanner) hex4() (rune, bool) {
	if s.pos+4 > len(s.data) {
		return 0, false
	}
	var r rune
	for _, c := range s.data[s.pos : s.pos+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	s.pos += 4
	return r, true
}

func (s *scanner) object(n *node, depth int) bool {
	if n != nil && (n.types != 0 && n.types&tObject == 0 || n.hasConstant || n.hasEnum || len(n.names) > 64) {
		return false
	}
	s.pos++ // the {
	count := 0
	// seen holds the declared properties present, by index into n.names, and
	// s.spans[unknown:] the other keys.
	var seen uint64
	unknown := len(s.spans)
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
	} else {
		for {
			s.space()
			if s.pos == len(s.data) || s.data[s.pos] != '"' {
				return false
			}
			key, escaped, ok := s.stringText()
			if !ok {
				return false
			}
			var child *node
			if i := nameIndex(n, key); i >= 0 {
				if seen&(1<<i) != 0 {
					return false // a duplicate key
				}
				seen |= 1 << i
				child = n.children[i]
			} else {
				if escaped || written(s.spans[unknown:], key) || len(s.spans)-unknown == maxSpans {
					return false
				}
				s.push(span{text: key, string: true})
				if n != nil {
					if child = n.additional; child != nil && child.boolean != nil && !*child.boolean {
						return false // additionalProperties false
					}
				}
			}
			count++
			s.space()
			if s.pos == len(s.data) || s.data[s.pos] != ':' {
				return false
			}
			s.pos++
			if !s.value(child, depth+1) {
				return false
			}
			if end, ok := s.separator('}'); !ok {
				return false
			} else if end {
				break
			}
		}
	}
	keys := s.spans[unknown:]
	s.spans = s.spans[:unknown]
	if n == nil {
		return true
	}
	if n.minProperties >= 0 && count < n.minProperties || n.maxProperties >= 0 && count > n.maxProperties {
		return false
	}
	if seen&n.requiredSeen != n.requiredSeen {
		return false
	}
	for _, r := range n.requiredOther {
		if !written(keys, r) {
			return false
		}
	}
	if s.defaults && !s.missing {
		for i, child := range n.children {
			if seen&(1<<i) == 0 {
				if _, ok := defaultOf(child); ok {
					s.missing = true
					break
				}
			}
		}
	}
	return true
}

// nameIndex is the index of key in n.names, or -1.
func nameIndex[T string | []byte](n *node, key T) int {
	if n == nil {
		return -1
	}
	lo, hi := 0, len(n.names)
	for lo < hi {
		if m := int(uint(lo+hi) >> 1); n.names[m] < string(key) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(n.names) && n.names[lo] == string(key) {
		return lo
	}
	return -1
}

// written says whether key is the text of one of spans.
func written[T string | []byte](spans []span, key T) bool {
	for _, sp := range spans {
		if string(sp.text) == string(key) {
			return true
		}
	}
	return false
}

func (s *scanner) array(n *node, depth int) bool {
	if n != nil && (n.types != 0 && n.types&tArray == 0 || n.hasConstant || n.hasEnum) {
		return false
	}
	unique := n != nil && n.uniqueItems
	var items *node
	if n != nil {
		items = n.items
	}
	s.pos++ // the [
	count := 0
	first := len(s.spans) // s.spans[first:] are this array's items, for uniqueItems
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
	} else {
		for {
			s.space()
			start := s.pos
			if !s.value(items, depth+1) {
				return false
			}
			if unique && !s.addItem(first, start) {
				return false
			}
			count++
			if end, ok := s.separator(']'); !ok {
				return false
			} else if end {
				break
			}
		}
	}
	s.spans = s.spans[:first]
	if n == nil {
		return true
	}
	return (n.minItems < 0 || count >= n.minItems) && (n.maxItems < 0 || count <= n.maxItems)
}

// addItem records the item just read, from start, for uniqueItems, and reports false if
// it equals an earlier one or Check cannot tell: objects and arrays are left to the
// tree validator; strings compare unescaped, numbers by value (1 equals 1.0).
func (s *scanner) addItem(first, start int) bool {
	if len(s.spans)-first == maxSpans {
		return false
	}
	item := span{text: s.data[start:s.pos]}
	switch c := item.text[0]; {
	case c == '{' || c == '[':
		return false
	case c == '"':
		item.string = true
		if bytes.IndexByte(item.text, '\\') < 0 {
			item.text = item.text[1 : len(item.text)-1]
		} else { // s.buf holds it unescaped, until the next string
			from := len(s.unique)
			s.unique = append(s.unique, s.buf...)
			item.text = s.unique[from:]
		}
	case isNumberStart(c):
		i, err := strconv.ParseInt(string(item.text), 10, 64)
		item.i, item.isInt = i, err == nil
	}
	for _, e := range s.spans[first:] {
		switch {
		case item.string != e.string:
		case bytes.Equal(item.text, e.text):
			return false
		case item.string || !isNumberStart(item.text[0]) || !isNumberStart(e.text[0]):
		case item.isInt && e.isInt:
			if item.i == e.i { // 0 and -0
				return false
			}
		case equal(json.Number(item.text), json.Number(e.text)): // 1 and 1.0, say
			return false
		}
	}
	s.push(item)
	return true
}

func isNumberStart(c byte) bool { return c == '-' || '0' <= c && c <= '9' }
