package schema

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth bounds how deeply a payload's objects and arrays nest: a payload may hold
// at most MaxDepth of them one inside the other ([[1]] nests two). encoding/json stops
// at 10000 and PostgreSQL at its stack depth; a bound both producers enforce (the SQL
// producers with jobc_payload_too_deep, schema/library) keeps a payload that one
// accepts from failing in the other or in a worker, and keeps every recursive walk of
// a payload (validation, defaults, upcasts, the SQL checks) short.
const MaxDepth = 64

// The rules Exact applies, worded as the SQL producers word them (schema/library).
const (
	msgTooDeep       = "nested deeper than 64 levels"
	msgInvalidUTF8   = "invalid UTF-8"
	msgInvalidKey    = "invalid UTF-8 in the property name"
	msgNUL           = `NUL character (\u0000), which PostgreSQL cannot store`
	msgSurrogate     = "lone UTF-16 surrogate in a \\u escape"
	msgIntFraction   = "integer written with a fractional part, which Go's int64 does not decode"
	msgIntRange      = "integer out of int64 range"
	msgFloatRange    = "number out of float64 range"
	msgFloatTiny     = "number too small for float64, which would round it to 0"
	msgNumericRange  = "number out of PostgreSQL's numeric range"
	numericMaxDigits = 131072 // PostgreSQL's numeric: digits before the decimal point
	numericMaxScale  = 16383  // and after it
)

// Exact returns what keeps a document from reaching a worker exactly as it was given,
// sorted by field: a string or property name that is not UTF-8 (encoding/json would
// replace it with U+FFFD, so two different values would become one) or holds a NUL or
// a lone surrogate (PostgreSQL's jsonb refuses both); nesting deeper than MaxDepth;
// and a number the Go type generated for its place cannot hold as PostgreSQL stores
// it. PostgreSQL stores a number as a numeric, which drops the exponent and keeps the
// scale (1e2 is stored 100, 1.0 stays 1.0, 100e-2 becomes 1.00), so an integer
// (int64) must have no digit after the decimal point once stored and fit int64, and a
// number (float64) must neither overflow float64 nor round to 0. A number in a place
// the schema does not type (an open object's members) is kept exact as a json.Number
// and only needs to fit PostgreSQL's numeric. A number that is not an integer where
// the schema wants one is left to Validate, which names the type. When the nesting is
// too deep, that is the one problem returned, at the smallest pointer (byte order) of
// a container nested too deep.
//
// Malformed JSON is left to Decode: Exact stops at it. s may be nil (no schema:
// metadata).
func (s *Schema) Exact(data []byte) []Problem {
	e := exacter{data: data, path: make([]token, 0, 8)}
	var root *node
	if s != nil {
		root = s.root
	}
	e.value(root, 0)
	if e.deep != nil {
		return []Problem{{Field: *e.deep, Message: msgTooDeep}}
	}
	sort.SliceStable(e.problems, func(i, j int) bool { return e.problems[i].Field < e.problems[j].Field })
	return e.problems
}

type exacter struct {
	data     []byte
	pos      int
	bad      bool    // malformed JSON: stop
	path     []token // of the JSON pointer to the value being read
	problems []Problem
	deep     *string // the smallest pointer of a container nested too deep
}

// token is one token of a JSON pointer: a property name, or an array index. The
// pointer is only written out for a problem, so reading a document costs no string.
type token struct {
	key   []byte // nil: index
	index int
}

func (e *exacter) pointer() string {
	var b strings.Builder
	for _, t := range e.path {
		b.WriteByte('/')
		if t.key != nil {
			b.Write(t.key)
		} else {
			b.WriteString(strconv.Itoa(t.index))
		}
	}
	return b.String()
}

func (e *exacter) add(field, msg string) {
	e.problems = append(e.problems, Problem{Field: field, Message: msg})
}

func (e *exacter) space() {
	for e.pos < len(e.data) {
		switch e.data[e.pos] {
		case ' ', '\t', '\n', '\r':
			e.pos++
		default:
			return
		}
	}
}

func (e *exacter) value(n *node, depth int) {
	e.space()
	if e.bad || e.pos >= len(e.data) {
		e.bad = true
		return
	}
	switch c := e.data[e.pos]; {
	case c == '{' || c == '[':
		if depth >= MaxDepth {
			if p := e.pointer(); e.deep == nil || p < *e.deep {
				e.deep = &p
			}
			e.skip()
			return
		}
		if c == '{' {
			e.object(n, depth)
		} else {
			e.array(n, depth)
		}
	case c == '"':
		if _, msg := e.string(false); msg != "" {
			e.add(e.pointer(), msg)
		}
	case c == 't' || c == 'f' || c == 'n':
		for e.pos < len(e.data) && 'a' <= e.data[e.pos] && e.data[e.pos] <= 'z' {
			e.pos++
		}
	case isNumberStart(c):
		start := e.pos
		for e.pos < len(e.data) && strings.IndexByte("+-.eE0123456789", e.data[e.pos]) >= 0 {
			e.pos++
		}
		if msg := numberProblem(typesOf(n), e.data[start:e.pos]); msg != "" {
			e.add(e.pointer(), msg)
		}
	default:
		e.bad = true
	}
}

// skip passes over a container without looking inside, strings and all.
func (e *exacter) skip() {
	open := 0
	for e.pos < len(e.data) {
		switch e.data[e.pos] {
		case '"':
			e.string(false)
			continue
		case '{', '[':
			open++
		case '}', ']':
			open--
		}
		e.pos++
		if open == 0 {
			return
		}
	}
	e.bad = true
}

// string reads a string and returns the first rule it breaks, or "", and with
// decoded, the string as encoding/json decodes it (invalid UTF-8 replaced): a slice
// of the document when it has no escape.
func (e *exacter) string(decoded bool) ([]byte, string) {
	e.pos++ // the opening quote
	start := e.pos
	msg := ""
	escaped := false
	for e.pos < len(e.data) {
		c := e.data[e.pos]
		switch {
		case c == '"':
			e.pos++
			text := e.data[start-1 : e.pos]
			if !decoded {
				return nil, msg
			}
			if !escaped && msg == "" {
				return text[1 : len(text)-1], msg
			}
			var str string
			_ = json.Unmarshal(text, &str)
			return []byte(str), msg
		case c == '\\':
			escaped = true
			if e.pos+1 >= len(e.data) {
				e.bad = true
				return nil, msg
			}
			if e.data[e.pos+1] != 'u' {
				e.pos += 2
				continue
			}
			r, ok := e.hex4(e.pos + 2)
			e.pos += 6
			if !ok {
				e.bad = true
				return nil, msg
			}
			switch {
			case r == 0:
				msg = first(msg, msgNUL)
			case utf16.IsSurrogate(r):
				low, ok := e.hex4(e.pos + 2)
				if r >= 0xdc00 || !bytes.HasPrefix(e.data[e.pos:], []byte(`\u`)) || !ok || low < 0xdc00 || low > 0xdfff {
					msg = first(msg, msgSurrogate)
					continue
				}
				e.pos += 6
			}
		case c < utf8.RuneSelf:
			e.pos++
		default:
			r, size := utf8.DecodeRune(e.data[e.pos:])
			if r == utf8.RuneError && size == 1 {
				msg = first(msg, msgInvalidUTF8)
			}
			e.pos += size
		}
	}
	e.bad = true
	return nil, msg
}

func first(msg, next string) string {
	if msg != "" {
		return msg
	}
	return next
}

func (e *exacter) hex4(at int) (rune, bool) {
	if at+4 > len(e.data) {
		return 0, false
	}
	r, err := strconv.ParseUint(string(e.data[at:at+4]), 16, 32)
	return rune(r), err == nil
}

func (e *exacter) object(n *node, depth int) {
	if t := typesOf(n); t != 0 && t&tObject == 0 {
		n = nil // Validate reports the type; nothing inside is typed
	}
	e.pos++ // the {
	for !e.bad {
		e.space()
		if e.pos < len(e.data) && e.data[e.pos] == '}' {
			e.pos++
			return
		}
		if e.pos >= len(e.data) || e.data[e.pos] != '"' {
			e.bad = true
			return
		}
		key, msg := e.string(true)
		e.path = append(e.path, token{key: key})
		if msg != "" {
			if msg == msgInvalidUTF8 {
				msg = msgInvalidKey
			}
			e.add(e.pointer(), msg)
		}
		e.space()
		if e.pos >= len(e.data) || e.data[e.pos] != ':' {
			e.bad = true
			return
		}
		e.pos++
		e.value(member(n, key), depth+1)
		e.path = e.path[:len(e.path)-1]
		e.space()
		if e.pos < len(e.data) && e.data[e.pos] == ',' {
			e.pos++
		}
	}
}

func (e *exacter) array(n *node, depth int) {
	if t := typesOf(n); t != 0 && t&tArray == 0 {
		n = nil
	}
	items := itemsOf(n)
	e.pos++ // the [
	for i := 0; !e.bad; i++ {
		e.space()
		if e.pos < len(e.data) && e.data[e.pos] == ']' {
			e.pos++
			return
		}
		e.path = append(e.path, token{index: i})
		e.value(items, depth+1)
		e.path = e.path[:len(e.path)-1]
		e.space()
		if e.pos < len(e.data) && e.data[e.pos] == ',' {
			e.pos++
		}
	}
}

// typesOf is the types n declares, or those of what it refers to (0: untyped).
func typesOf(n *node) typeSet {
	for hops := 0; n != nil && hops < maxRefs; hops++ {
		if n.boolean != nil {
			return 0
		}
		if n.types != 0 || n.ref == nil {
			return n.types
		}
		n = n.ref
	}
	return 0
}

// member is the subschema of the property key of an object checked against n.
func member(n *node, key []byte) *node {
	for hops := 0; n != nil && n.boolean == nil && hops < maxRefs; hops++ {
		if c, ok := n.properties[string(key)]; ok {
			return c
		}
		if n.additional != nil {
			return n.additional
		}
		if n.properties != nil {
			return nil
		}
		n = n.ref
	}
	return nil
}

// itemsOf is the subschema of the items of an array checked against n.
func itemsOf(n *node) *node {
	for hops := 0; n != nil && n.boolean == nil && hops < maxRefs; hops++ {
		if n.items != nil {
			return n.items
		}
		n = n.ref
	}
	return nil
}

// numberProblem is the rule a number, as written, breaks in a place of types t, or "".
func numberProblem(t typeSet, text []byte) string {
	// The common numbers, without an exponent and short, fit float64 and numeric
	// without rounding to 0, and an int64 as written is one.
	if len(text) <= 300 && !hasExponent(text) {
		if t&(tNumber|tInteger) != tInteger {
			return ""
		}
		if _, err := strconv.ParseInt(string(text), 10, 64); err == nil {
			return ""
		}
	}
	parts, ok := splitNumber(text)
	if !ok {
		return "" // malformed: Decode says so
	}
	if parts.magnitude > numericMaxDigits || parts.scale > numericMaxScale || parts.hugeExponent {
		return msgNumericRange
	}
	switch {
	case t&tNumber != 0:
		f, err := strconv.ParseFloat(string(text), 64)
		if err != nil && math.IsInf(f, 0) {
			return msgFloatRange
		}
		if f == 0 && !parts.zero {
			return msgFloatTiny
		}
	case t&tInteger != 0:
		r, ok := new(big.Rat).SetString(string(text))
		if !ok || !r.IsInt() {
			return "" // not an integer: Validate names the type
		}
		if parts.scale > 0 {
			return msgIntFraction
		}
		if !r.Num().IsInt64() {
			return msgIntRange
		}
	}
	return ""
}

// numberParts is what PostgreSQL's numeric makes of a number's text.
type numberParts struct {
	zero      bool
	magnitude int // the value is below 10^magnitude (digits before the point, once stored)
	scale     int // digits after the decimal point, once stored
	// hugeExponent: an exponent numeric_in refuses whatever the digits, even 0's
	// (|exponent| >= INT_MAX/2: "value overflows numeric format").
	hugeExponent bool
}

// splitNumber reads -?int(.frac)?([eE][+-]?exp)? as numeric_in does: the scale is
// the fraction's digits less the exponent (at least 0).
func splitNumber(text []byte) (numberParts, bool) {
	s := string(text)
	s = strings.TrimPrefix(s, "-")
	mant, exp, hasExp := strings.Cut(s, "e")
	if !hasExp {
		mant, exp, hasExp = strings.Cut(s, "E")
	}
	x := 0
	if hasExp {
		var err error
		if x, err = strconv.Atoi(exp); err != nil {
			// An exponent beyond int: far out of numeric's range either way.
			if strings.HasPrefix(exp, "-") {
				x = math.MinInt32
			} else {
				x = math.MaxInt32
			}
		}
		x = max(min(x, math.MaxInt32), math.MinInt32)
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	if intPart == "" {
		return numberParts{}, false
	}
	digits := intPart + frac
	trimmed := strings.TrimLeft(digits, "0")
	p := numberParts{zero: trimmed == "", scale: max(0, len(frac)-x), hugeExponent: x >= math.MaxInt32/2 || x <= -(math.MaxInt32/2)}
	if !p.zero {
		p.magnitude = len(intPart) + x - (len(digits) - len(trimmed))
	}
	return p, true
}
