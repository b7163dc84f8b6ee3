// Package schema validates decoded JSON against the subset of JSON Schema (draft
// 2020-12) that jobc's generator accepts, and fills in the defaults a schema declares.
//
// It replaces the general JSON Schema library in the runtime, so that an application
// importing the runtime does not import that library: a schema is compiled once into a
// tree of nodes (patterns compiled, bounds parsed, $refs resolved), and validation walks
// that tree over a value decoded with json.Number. Integers are compared as int64; only
// numbers with a fraction or out of int64's range go through big.Rat, which keeps
// comparisons exact without paying for big numbers on every payload.
//
// The library stays in this package's tests as the oracle: they check that both accept
// and reject the same documents, at the same JSON pointers.
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/jobc-dev/jobc/internal/dialect"
)

// Problem is one violation, at a JSON pointer into the document ("" for its root).
type Problem struct {
	Field   string
	Message string
}

// Schema is a compiled schema.
type Schema struct {
	root     *node
	defaults bool // some subschema declares a default
}

// Compile compiles a schema given as JSON. Keywords jobc does not support (oneOf,
// patternProperties, ...) are an error rather than silently ignored; references must
// point into the schema itself ("#/$defs/x"), as the generator inlines other files.
func Compile(schemaJSON []byte) (*Schema, error) {
	doc, err := Decode(schemaJSON)
	if err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	c := &compiler{doc: doc, nodes: map[string]*node{}}
	root, err := c.compile("", doc)
	if err != nil {
		return nil, err
	}
	return &Schema{root: root, defaults: c.defaults}, nil
}

// Decode decodes one JSON document, numbers as json.Number, rejecting trailing data.
func Decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid character after top-level value")
	}
	return v, nil
}

// HasDefaults says whether FillDefaults can change anything.
func (s *Schema) HasDefaults() bool { return s.defaults }

type typeSet uint8

const (
	tNull typeSet = 1 << iota
	tBoolean
	tObject
	tArray
	tString
	tNumber
	tInteger
)

var typeNames = []struct {
	t    typeSet
	name string
}{
	{tNull, "null"}, {tBoolean, "boolean"}, {tObject, "object"}, {tArray, "array"},
	{tString, "string"}, {tNumber, "number"}, {tInteger, "integer"},
}

func (t typeSet) String() string {
	var names []string
	for _, n := range typeNames {
		if t&n.t != 0 {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, " or ")
}

// node is one compiled subschema.
type node struct {
	boolean *bool // a schema that is just true or false
	ref     *node
	types   typeSet // 0: any

	constant    any
	hasConstant bool
	enum        []any
	hasEnum     bool

	format      string
	checkFormat func(any) error

	minLength, maxLength int // -1: none
	pattern              *regexp.Regexp

	minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf *number

	minItems, maxItems int // -1: none
	uniqueItems        bool
	items              *node

	minProperties, maxProperties int // -1: none
	required                     []string
	properties                   map[string]*node
	names                        []string // of properties, sorted
	children                     []*node  // children[i] = properties[names[i]]: the scan's lookup
	requiredSeen                 uint64   // bit i: names[i] is required (names[:64])
	requiredOther                []string // required names that are not among the first 64 properties
	additional                   *node    // nil: any additional property is allowed

	defaultValue any
	hasDefault   bool
}

type compiler struct {
	doc      any
	nodes    map[string]*node // by JSON pointer into doc, so refs and cycles resolve
	defaults bool
}

func (c *compiler) compile(ptr string, v any) (*node, error) {
	if n, ok := c.nodes[ptr]; ok {
		return n, nil
	}
	n := &node{minLength: -1, maxLength: -1, minItems: -1, maxItems: -1, minProperties: -1, maxProperties: -1}
	c.nodes[ptr] = n
	if b, ok := v.(bool); ok {
		n.boolean = &b
		return n, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema at %q: want an object or a boolean, got %s", "#"+ptr, typeOf(v))
	}
	if err := keywords(ptr, m); err != nil {
		return nil, err
	}
	var err error
	if r, ok := m["$ref"].(string); ok {
		if n.ref, err = c.resolve(r); err != nil {
			return nil, fmt.Errorf("schema at %q: %w", "#"+ptr, err)
		}
	}
	if n.types, err = types(m["type"]); err != nil {
		return nil, fmt.Errorf("schema at %q: %w", "#"+ptr, err)
	}
	n.constant, n.hasConstant = m["const"]
	if e, ok := m["enum"]; ok {
		list, ok := e.([]any)
		if !ok {
			return nil, fmt.Errorf("schema at %q: enum must be a list", "#"+ptr)
		}
		n.enum, n.hasEnum = list, true
	}
	if f, ok := m["format"].(string); ok {
		n.format = f
		if row, ok := dialect.LookupFormat(f); ok {
			n.checkFormat = row.Check
		}
	}
	if p, ok := m["pattern"].(string); ok {
		if n.pattern, err = regexp.Compile(p); err != nil {
			return nil, fmt.Errorf("schema at %q: pattern: %w", "#"+ptr, err)
		}
	}
	counts := []struct {
		key string
		to  *int
	}{
		{"minLength", &n.minLength}, {"maxLength", &n.maxLength}, {"minItems", &n.minItems},
		{"maxItems", &n.maxItems}, {"minProperties", &n.minProperties}, {"maxProperties", &n.maxProperties},
	}
	for _, k := range counts {
		if x, ok := m[k.key]; ok {
			num, ok := x.(json.Number)
			i, err := strconv.Atoi(string(num))
			if !ok || err != nil || i < 0 {
				return nil, fmt.Errorf("schema at %q: %s must be a non-negative integer", "#"+ptr, k.key)
			}
			*k.to = i
		}
	}
	bounds := []struct {
		key string
		to  **number
	}{
		{"minimum", &n.minimum}, {"maximum", &n.maximum}, {"exclusiveMinimum", &n.exclusiveMinimum},
		{"exclusiveMaximum", &n.exclusiveMaximum}, {"multipleOf", &n.multipleOf},
	}
	for _, b := range bounds {
		if x, ok := m[b.key]; ok {
			num, ok := x.(json.Number)
			if !ok {
				return nil, fmt.Errorf("schema at %q: %s must be a number", "#"+ptr, b.key)
			}
			if *b.to, err = parseNumber(num); err != nil {
				return nil, fmt.Errorf("schema at %q: %s: %w", "#"+ptr, b.key, err)
			}
		}
	}
	if n.multipleOf != nil && n.multipleOf.sign() <= 0 {
		return nil, fmt.Errorf("schema at %q: multipleOf must be positive", "#"+ptr)
	}
	n.uniqueItems, _ = m["uniqueItems"].(bool)
	if x, ok := m["items"]; ok {
		if n.items, err = c.compile(ptr+"/items", x); err != nil {
			return nil, err
		}
	}
	for _, r := range asList(m["required"]) {
		s, ok := r.(string)
		if !ok {
			return nil, fmt.Errorf("schema at %q: required must list strings", "#"+ptr)
		}
		n.required = append(n.required, s)
	}
	if props, ok := m["properties"].(map[string]any); ok {
		n.properties = make(map[string]*node, len(props))
		for name, ps := range props {
			if n.properties[name], err = c.compile(ptr+"/properties/"+escape(name), ps); err != nil {
				return nil, err
			}
			n.names = append(n.names, name)
		}
		sort.Strings(n.names)
		for _, name := range n.names {
			n.children = append(n.children, n.properties[name])
		}
	}
	for _, r := range n.required {
		if i := nameIndex(n, r); i >= 0 && i < 64 {
			n.requiredSeen |= 1 << i
		} else {
			n.requiredOther = append(n.requiredOther, r)
		}
	}
	if x, ok := m["additionalProperties"]; ok {
		if n.additional, err = c.compile(ptr+"/additionalProperties", x); err != nil {
			return nil, err
		}
	}
	if d, ok := m["default"]; ok {
		n.defaultValue, n.hasDefault = d, true
		c.defaults = true
	}
	// Definitions are compiled even when nothing refers to them, so that a broken one
	// fails here as it did with the library.
	for _, key := range []string{"$defs", "definitions"} {
		defs, _ := m[key].(map[string]any)
		for name, d := range defs {
			if _, err := c.compile(ptr+"/"+key+"/"+escape(name), d); err != nil {
				return nil, err
			}
		}
	}
	return n, nil
}

// keywords refuses a schema object using a keyword the validator does not implement
// (dialect.Go), one jobc does not know, or a root-only keyword below the root: each
// would be checked by less than the schema says, so compiling fails instead, as
// jobc generate does.
func keywords(ptr string, m map[string]any) error {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		row, ok := dialect.Lookup(k)
		switch {
		case !ok:
			return fmt.Errorf("schema at %q: unknown keyword %s", "#"+ptr, k)
		case row.Class == dialect.Unsupported || (row.Class == dialect.Assertion && !row.Supports(dialect.Go)):
			return fmt.Errorf("schema at %q: keyword %s is not supported", "#"+ptr, k)
		case row.RootOnly && ptr != "":
			return fmt.Errorf("schema at %q: keyword %s is only allowed at the top of a schema", "#"+ptr, k)
		}
	}
	return nil
}

// resolve compiles the subschema a local reference such as "#/$defs/money" points to.
func (c *compiler) resolve(ref string) (*node, error) {
	if !strings.HasPrefix(ref, "#") {
		return nil, fmt.Errorf("$ref %q: only references into the same schema (#/...) are supported", ref)
	}
	ptr := ref[1:]
	if ptr != "" && !strings.HasPrefix(ptr, "/") {
		return nil, fmt.Errorf("$ref %q: anchors are not supported", ref)
	}
	v := c.doc
	if ptr != "" {
		for _, tok := range strings.Split(ptr[1:], "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			m, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("$ref %q: no such schema", ref)
			}
			if v, ok = m[tok]; !ok {
				return nil, fmt.Errorf("$ref %q: no such schema", ref)
			}
		}
	}
	return c.compile(ptr, v)
}

func escape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func types(v any) (typeSet, error) {
	var names []any
	switch v := v.(type) {
	case nil:
		return 0, nil
	case string:
		names = []any{v}
	case []any:
		names = v
	default:
		return 0, errors.New("type must be a string or a list of strings")
	}
	var t typeSet
	for _, name := range names {
		found := false
		for _, n := range typeNames {
			if name == n.name {
				t |= n.t
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("unknown type %v", name)
		}
	}
	return t, nil
}

// typeOf names the JSON type of a decoded value.
func typeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}
