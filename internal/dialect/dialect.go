// Package dialect is jobc's JSON Schema dialect as one table: which keywords jobc
// accepts in a payload schema and which of its targets implement each (the Go type
// mapper and runtime validator, the SQL producers, the TypeScript producers, the
// compatibility checker), which keywords it refuses, which it ignores as annotations,
// and which formats each target checks.
//
// Every reader of a schema asks this table rather than keeping a list of its own, so
// that `jobc generate` never accepts a keyword one of the targets ignores: a schema is
// a contract between producers in three languages and workers of several releases, and
// a keyword one of them silently skips is a payload one side accepts and the other
// rejects. Tests in each target hold it to its rows (see Supported).
//
// The package is imported by the runtime, so it must stay standard library only.
package dialect

import "sort"

// Class is what jobc does with a keyword.
type Class uint8

const (
	// Assertion keywords constrain a document, or say where the constraining
	// subschemas are (properties, items, $ref). jobc generates Go types from them
	// and every target that claims them checks them.
	Assertion Class = iota + 1
	// Annotation keywords never change which documents a schema accepts: they are
	// documentation (title, description, examples), or, like default, change what a
	// producer writes but not what a reader accepts. Every target ignores them as
	// far as validation goes.
	Annotation
	// Container keywords hold subschemas that matter only through a $ref ($defs).
	Container
	// Unsupported keywords are JSON Schema keywords jobc refuses: a schema using one
	// fails to generate, and the runtime refuses to compile it, rather than being
	// checked by less than it says (fail closed). Most have no Go type (oneOf is a sum
	// type, if/then/else a condition), the rest change how references or the
	// vocabulary are resolved.
	Unsupported
)

func (c Class) String() string {
	switch c {
	case Assertion:
		return "assertion"
	case Annotation:
		return "annotation"
	case Container:
		return "container"
	case Unsupported:
		return "unsupported"
	}
	return "unknown"
}

// Target is one reader of payload schemas that enforces them.
type Target uint8

const (
	// Go is the Go type mapper (generator/internal/gotype) and the validator every
	// Go producer and worker runs (runtime/internal/schema): what jobc generate
	// accepts, the runtime must check.
	Go Target = 1 << iota
	// SQL is the PL/pgSQL function a SQL producer calls (generator/internal/codegen/sql),
	// which checks a payload as Go does, with Go's messages.
	SQL
	// TypeScript is the TypeScript producer's types (generator/internal/codegen/typescript):
	// a keyword it claims is expressed in the type tsc checks. Other assertions are
	// listed in the type's doc comment and checked by the SQL function it calls.
	TypeScript
	// Compat is the compatibility checker (generator/internal/compat): a keyword it
	// claims has rules; any other difference between versions is reported as
	// UNSUPPORTED_KEYWORD. It reasons about a few keywords jobc generate refuses
	// (allOf, anyOf, oneOf, patternProperties), as Confluent's rules define them.
	Compat
)

// Value is the form a keyword's value must have.
type Value uint8

const (
	AnyValue   Value = iota // any JSON value (const, default)
	Types                   // a type name or a list of them
	String                  // a string
	Boolean                 // true or false
	List                    // a list of values (enum, examples)
	Strings                 // a list of strings (required)
	Count                   // a non-negative integer
	Number                  // a number
	Positive                // a number greater than 0 (multipleOf)
	Schema                  // a subschema: a mapping or a boolean
	SchemaMap               // a mapping of names to subschemas
	SchemaList              // a list of subschemas
	Other                   // something else (dependencies, $vocabulary)
)

// Keyword is one row of the table.
type Keyword struct {
	Name  string
	Class Class
	// Targets that implement the keyword. For an Assertion, Go always, and SQL
	// unless it refuses the keyword with a diagnostic.
	Targets Target
	// RootOnly keywords are allowed only at the top of a payload schema: nested, they
	// would change the base URI or the dialect, or define where jobc looks for
	// definitions ($defs) in a second place.
	RootOnly bool
	// Applies is the JSON type a type-specific keyword constrains ("" for any):
	// minLength on an integer is a mistake, not a constraint.
	Applies string
	// Value is the form the keyword's value must have.
	Value Value
	// Group names keywords that mean something only together (if/then/else), so a
	// checker compares them as one.
	Group string
	// Context keywords mean something that depends on the rest of their schema
	// object or on the base URI (unevaluatedProperties, $id), so the same value on
	// both sides of a comparison does not make two schemas equivalent.
	Context bool
}

// Supports says whether target t implements the keyword.
func (k Keyword) Supports(t Target) bool { return k.Targets&t != 0 }

// Constrains says whether the keyword can change which documents a schema accepts
// at the schema pointer ptr ("" for the root): anything but an annotation or a
// container, and root-only annotations ($schema, $id) anywhere but the root.
func (k Keyword) Constrains(ptr string) bool {
	switch {
	case k.Class == Annotation && k.RootOnly:
		return ptr != ""
	case k.Class == Annotation, k.Class == Container:
		return false
	}
	return true
}

const (
	all  = Go | SQL | TypeScript | Compat
	docs = Go | SQL | Compat // checked, and only described in TypeScript's types
)

// keywords is the table. The order is the one messages and doc comments list
// keywords in: TypeScript's doc comments list the checks its types cannot express in
// this order.
var keywords = []Keyword{
	{Name: "type", Class: Assertion, Targets: all, Value: Types},
	{Name: "enum", Class: Assertion, Targets: all, Value: List},
	{Name: "const", Class: Assertion, Targets: all, Value: AnyValue},
	// TypeScript writes a formatted string as string, describing the format in its
	// doc comment (Formats says which formats each target checks).
	{Name: "format", Class: Assertion, Targets: docs, Value: String},

	{Name: "minimum", Class: Assertion, Targets: docs, Applies: "number", Value: Number},
	{Name: "exclusiveMinimum", Class: Assertion, Targets: docs, Applies: "number", Value: Number},
	{Name: "maximum", Class: Assertion, Targets: docs, Applies: "number", Value: Number},
	{Name: "exclusiveMaximum", Class: Assertion, Targets: docs, Applies: "number", Value: Number},
	{Name: "multipleOf", Class: Assertion, Targets: docs, Applies: "number", Value: Positive},
	{Name: "minLength", Class: Assertion, Targets: docs, Applies: "string", Value: Count},
	{Name: "maxLength", Class: Assertion, Targets: docs, Applies: "string", Value: Count},
	// SQL producers refuse the patterns PostgreSQL would read differently from Go.
	{Name: "pattern", Class: Assertion, Targets: docs, Applies: "string", Value: String},
	{Name: "minItems", Class: Assertion, Targets: docs, Applies: "array", Value: Count},
	{Name: "maxItems", Class: Assertion, Targets: docs, Applies: "array", Value: Count},
	{Name: "uniqueItems", Class: Assertion, Targets: docs, Applies: "array", Value: Boolean},
	{Name: "minProperties", Class: Assertion, Targets: docs, Applies: "object", Value: Count},
	{Name: "maxProperties", Class: Assertion, Targets: docs, Applies: "object", Value: Count},

	{Name: "properties", Class: Assertion, Targets: all, Applies: "object", Value: SchemaMap},
	{Name: "required", Class: Assertion, Targets: all, Applies: "object", Value: Strings},
	{Name: "additionalProperties", Class: Assertion, Targets: all, Applies: "object", Value: Schema},
	// Only the draft 2020-12 form, one schema for every element: the tuple form has
	// no Go slice type.
	{Name: "items", Class: Assertion, Targets: all, Applies: "array", Value: Schema},
	// Only references into the same schema; the generator inlines other files.
	{Name: "$ref", Class: Assertion, Targets: all, Value: String},

	{Name: "$defs", Class: Container, Targets: all, RootOnly: true, Value: SchemaMap},
	{Name: "definitions", Class: Container, Targets: all, RootOnly: true, Value: SchemaMap},

	{Name: "title", Class: Annotation, Value: String},
	{Name: "description", Class: Annotation, Value: String},
	{Name: "examples", Class: Annotation, Value: List},
	{Name: "$comment", Class: Annotation, Value: String},
	{Name: "deprecated", Class: Annotation, Value: Boolean},
	{Name: "readOnly", Class: Annotation, Value: Boolean},
	{Name: "writeOnly", Class: Annotation, Value: Boolean},
	// A default changes what a producer writes (Go and SQL producers fill it in)
	// but never what a reader accepts.
	{Name: "default", Class: Annotation, Value: AnyValue},
	// At the root these name the dialect and the document; nested they would change
	// the base URI $refs resolve against, or the vocabulary.
	{Name: "$schema", Class: Annotation, RootOnly: true, Value: String, Context: true},
	{Name: "$id", Class: Annotation, RootOnly: true, Value: String, Context: true},

	// Combinators and conditionals: a Go type is one shape, not a choice of shapes.
	// The compatibility checker still reasons about the combinators, as Confluent's
	// rules do.
	{Name: "allOf", Class: Unsupported, Targets: Compat, Value: SchemaList},
	{Name: "anyOf", Class: Unsupported, Targets: Compat, Value: SchemaList},
	{Name: "oneOf", Class: Unsupported, Targets: Compat, Value: SchemaList},
	{Name: "not", Class: Unsupported, Value: Schema},
	{Name: "if", Class: Unsupported, Value: Schema, Group: "if"},
	{Name: "then", Class: Unsupported, Value: Schema, Group: "if"},
	{Name: "else", Class: Unsupported, Value: Schema, Group: "if"},
	// Properties chosen by pattern or by the presence of others: a Go struct has a
	// fixed set of fields.
	{Name: "patternProperties", Class: Unsupported, Targets: Compat, Applies: "object", Value: SchemaMap},
	{Name: "dependentRequired", Class: Unsupported, Applies: "object", Value: Other},
	{Name: "dependentSchemas", Class: Unsupported, Applies: "object", Value: SchemaMap},
	{Name: "dependencies", Class: Unsupported, Applies: "object", Value: Other},
	{Name: "propertyNames", Class: Unsupported, Applies: "object", Value: Schema},
	{Name: "unevaluatedProperties", Class: Unsupported, Value: Schema, Context: true},
	// Tuples and element searches: a Go slice's elements share one type.
	{Name: "prefixItems", Class: Unsupported, Applies: "array", Value: SchemaList, Context: true},
	{Name: "additionalItems", Class: Unsupported, Applies: "array", Value: Schema, Context: true},
	{Name: "contains", Class: Unsupported, Applies: "array", Value: Schema, Group: "contains"},
	{Name: "minContains", Class: Unsupported, Applies: "array", Value: Count, Group: "contains"},
	{Name: "maxContains", Class: Unsupported, Applies: "array", Value: Count, Group: "contains"},
	{Name: "unevaluatedItems", Class: Unsupported, Value: Schema, Context: true},
	// Content of encoded strings: no target decodes it.
	{Name: "contentEncoding", Class: Unsupported, Applies: "string", Value: String, Group: "content"},
	{Name: "contentMediaType", Class: Unsupported, Applies: "string", Value: String, Group: "content"},
	{Name: "contentSchema", Class: Unsupported, Applies: "string", Value: Schema, Group: "content"},
	// Anchors, dynamic references and vocabularies: references resolve by JSON
	// pointer into the same schema only.
	{Name: "$anchor", Class: Unsupported, Value: String, Context: true},
	{Name: "$dynamicRef", Class: Unsupported, Value: String, Context: true},
	{Name: "$dynamicAnchor", Class: Unsupported, Value: String, Context: true},
	{Name: "$recursiveRef", Class: Unsupported, Value: String, Context: true},
	{Name: "$recursiveAnchor", Class: Unsupported, Value: Boolean, Context: true},
	{Name: "$vocabulary", Class: Unsupported, Value: Other, Context: true},
}

// byName indexes keywords; built once from the table, never written after.
var byName = func() map[string]int {
	m := make(map[string]int, len(keywords))
	for i, k := range keywords {
		m[k.Name] = i
	}
	return m
}()

// Lookup returns the row of keyword name; ok is false for a word that is not a JSON
// Schema keyword jobc knows (a typo, or an extension), which every reader refuses.
func Lookup(name string) (k Keyword, ok bool) {
	i, ok := byName[name]
	if !ok {
		return Keyword{}, false
	}
	return keywords[i], true
}

// Keywords returns every row, in the table's order.
func Keywords() []Keyword { return append([]Keyword(nil), keywords...) }

// Supported returns the names of the keywords target t implements, in the table's
// order.
func Supported(t Target) []string {
	var out []string
	for _, k := range keywords {
		if k.Supports(t) {
			out = append(out, k.Name)
		}
	}
	return out
}

// Accepted returns the sorted names of the keywords a payload schema may use: every
// one that is not Unsupported. A misspelt keyword is matched against these.
func Accepted() []string {
	var out []string
	for _, k := range keywords {
		if k.Class != Unsupported {
			out = append(out, k.Name)
		}
	}
	sort.Strings(out)
	return out
}

// Members returns the keywords of group g, in the table's order.
func Members(g string) []string {
	var out []string
	for _, k := range keywords {
		if k.Group == g && g != "" {
			out = append(out, k.Name)
		}
	}
	return out
}
