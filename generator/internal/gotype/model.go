// Package gotype turns the JSON Schema of a payload version into Go declarations: one
// struct for the payload and the named types it needs (nested objects, enums, shared
// $defs). It supports a deliberate subset of JSON Schema and reports anything else as
// an error naming the keyword, with its file, line and column.
package gotype

// Type is a Go type expression.
type Type interface{ isType() }

// Builtin is a predeclared type: string, int64, float64, bool or any.
type Builtin struct{ Name string }

// Ref is a named type: declared by the generator (Import "") or imported, such as
// time.Time or a format override.
type Ref struct {
	Import string
	Name   string
}

// Pointer is *Elem: an optional or nullable value.
type Pointer struct{ Elem Type }

// Slice is []Elem.
type Slice struct{ Elem Type }

// Map is map[string]Elem.
type Map struct{ Elem Type }

func (Builtin) isType() {}
func (Ref) isType()     {}
func (Pointer) isType() {}
func (Slice) isType()   {}
func (Map) isType()     {}

// Decl is a named type the generator declares: a struct or an enum.
type Decl struct {
	Name   string
	Doc    string
	Of     string // where it is used, for a default doc comment: "address", "parcels[]"
	Struct *Struct
	Enum   *Enum
	// SharedBy lists the root structs of the later versions that use this type too,
	// instead of declaring their own (Share).
	SharedBy []string
}

// Struct is an object with known properties, in schema order.
type Struct struct {
	Fields []Field
}

// Field is one property.
type Field struct {
	Name       string // Go name
	JSON       string // property name
	Type       Type
	Doc        string
	Required   bool
	OmitEmpty  bool
	Default    any // JSON value, when HasDefault
	HasDefault bool
	Const      any // JSON value, when HasConst
	HasConst   bool
}

// Enum is a named string or integer type with one constant per allowed value.
type Enum struct {
	Base   Builtin // string or int64
	Values []EnumValue
}

// EnumValue is one constant of an enum.
type EnumValue struct {
	Name  string
	Value any // string or int (an integer enum's values fit int64; int renders untyped)
}

// Payload is the Go form of one payload version.
type Payload struct {
	Root  string  // name of the payload struct
	Decls []*Decl // the root first, then the types it needs in order of first use
}
