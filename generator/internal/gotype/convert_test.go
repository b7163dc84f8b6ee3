package gotype

import (
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/jobc-dev/jobc/generator/spec"
)

func convert(t *testing.T, src string, formats map[string]spec.GoType) (*Payload, spec.Diagnostics) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	return Convert("JobV1", &spec.Schema{File: "s.yaml", Path: "schema", Node: doc.Content[0]}, formats)
}

func mustConvert(t *testing.T, src string) *Payload {
	t.Helper()
	p, ds := convert(t, src, nil)
	if len(ds) > 0 {
		t.Fatalf("Convert: %v", ds)
	}
	return p
}

func decl(p *Payload, name string) *Decl {
	for _, d := range p.Decls {
		if d.Name == name {
			return d
		}
	}
	return nil
}

func field(t *testing.T, p *Payload, typ, name string) Field {
	t.Helper()
	d := decl(p, typ)
	if d == nil || d.Struct == nil {
		t.Fatalf("no struct %s in %v", typ, names(p))
	}
	for _, f := range d.Struct.Fields {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no field %s.%s", typ, name)
	return Field{}
}

func names(p *Payload) []string {
	var out []string
	for _, d := range p.Decls {
		out = append(out, d.Name)
	}
	return out
}

func TestNullableRefIsOnePointer(t *testing.T) {
	p := mustConvert(t, `type: object
required: [a]
properties:
  a: {$ref: "#/$defs/maybe"}
  b: {$ref: "#/$defs/maybe"}
$defs:
  maybe: {type: [object, "null"], properties: {x: {type: string}}}`)
	want := Pointer{Ref{Name: "JobV1Maybe"}}
	for _, name := range []string{"A", "B"} {
		if f := field(t, p, "JobV1", name); !reflect.DeepEqual(f.Type, want) {
			t.Errorf("%s has type %#v, want %#v", name, f.Type, want)
		}
	}
}

func TestDeclOrderIsTopDown(t *testing.T) {
	p := mustConvert(t, `type: object
properties:
  order:
    type: object
    properties:
      customer:
        type: object
        properties: {name: {type: string}}
      status: {enum: [new, paid]}
  lines:
    type: array
    items: {type: object, properties: {sku: {type: string}}}
  meta:
    type: object
    additionalProperties: {type: object, properties: {v: {type: string}}}
  empty: {type: object, properties: {}}`)
	want := []string{"JobV1", "JobV1Order", "JobV1OrderCustomer", "JobV1OrderStatus", "JobV1Line", "JobV1MetaItem"}
	if got := names(p); !reflect.DeepEqual(got, want) {
		t.Errorf("decls %v, want %v", got, want)
	}
	if f := field(t, p, "JobV1", "Empty"); !reflect.DeepEqual(f.Type, Map{Builtin{"any"}}) {
		t.Errorf("properties: {} gave %#v, want map[string]any", f.Type)
	}
	if of := decl(p, "JobV1Line").Of; of != "lines[]" {
		t.Errorf("Of = %q", of)
	}
}

func TestIntegerEnumValuesRenderUntyped(t *testing.T) {
	p := mustConvert(t, `type: object
properties:
  level: {type: integer, enum: [-1, 0, 2]}`)
	e := decl(p, "JobV1Level").Enum
	want := []EnumValue{{"JobV1LevelMinus1", -1}, {"JobV1Level0", 0}, {"JobV1Level2", 2}}
	if !reflect.DeepEqual(e.Values, want) {
		t.Errorf("values %#v, want %#v", e.Values, want)
	}
}

func TestRootRef(t *testing.T) {
	p := mustConvert(t, `$ref: "#/$defs/payload"
description: The payload.
$defs:
  payload: {type: object, properties: {a: {type: string}}}`)
	if got := names(p); !reflect.DeepEqual(got, []string{"JobV1"}) {
		t.Errorf("decls %v", got)
	}
	if p.Decls[0].Doc != "The payload." {
		t.Errorf("doc %q", p.Decls[0].Doc)
	}
}

func TestFormats(t *testing.T) {
	p, ds := convert(t, `type: object
required: [a, b, c, d, e]
properties:
  a: {type: string, format: date-time}
  b: {type: string, format: date}
  c: {type: string, format: uuid}
  d: {type: string, format: email}
  e: {type: integer, format: date}`, map[string]spec.GoType{"uuid": {Import: "github.com/google/uuid", Name: "UUID"}})
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	want := map[string]Type{
		"A": Ref{"time", "Time"}, "B": Ref{RuntimeImport, "Date"}, "C": Ref{"github.com/google/uuid", "UUID"},
		"D": Builtin{"string"}, "E": Builtin{"int64"},
	}
	for name, typ := range want {
		if f := field(t, p, "JobV1", name); !reflect.DeepEqual(f.Type, typ) {
			t.Errorf("%s: %#v, want %#v", name, f.Type, typ)
		}
	}
}

func TestConvertErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"type: object\nproperties: {a: {$ref: '#/$defs/a'}}\n$defs: {a: {type: object, properties: {b: {$ref: '#/$defs/a'}}}}",
			`s.yaml:3:50: schema.$defs.a.properties.b.$ref: $ref "#/$defs/a" refers to a schema that contains it: recursive schemas have no Go type`},
		{"type: object\nproperties: {a: {type: []}}", "s.yaml:2:24: schema.properties.a.type: type must name at least one type"},
		{"type: object\nproperties: {a: {type: string, const: 3}}", "s.yaml:2:39: schema.properties.a.const: const 3 is not of type string"},
		{"type: object\nproperties: {a: {const: [1]}}", "s.yaml:2:25: schema.properties.a.const: const must be a string, number or boolean to have a Go type, got a list; or give the schema a type"},
		{"type: object\nproperties: {a: {type: [string, 'null'], minLength: x}}", `s.yaml:2:53: schema.properties.a.minLength: minLength must be a non-negative integer, got "x"`},
		{"type: object\nproperties: {a: {$ref: '#/$defs/x', type: string}}\n$defs: {x: {type: string}}", `s.yaml:2:37: schema.properties.a.type: keyword "type" next to $ref is not supported: move it into the referenced schema`},
		{"type: object\nproperties: {a: {$ref: '#/properties/b'}}", `s.yaml:2:24: schema.properties.a.$ref: unsupported $ref "#/properties/b": refer to #/$defs/<name> or to a schema file`},
		{"type: object\nproperties: {a: false}", "s.yaml:2:17: schema.properties.a: the schema false accepts nothing; remove the property instead"},
		{"type: object\nproperties: {'-': {type: string}}", `s.yaml:2:14: schema.properties.-: property "-" has no letters or digits to make a Go name from`},
		{"type: object\nproperties: {a: {type: object, properties: {x: {type: string}}, additionalProperties: {type: string}}}", "additionalProperties with a schema next to properties is not supported"},
		{"type: object\nproperties: {a: {type: object, additionalProperties: false}}", "accepts only {}"},
		{"type: object\nproperties: {a: {type: integer, default: 1.5}}", "s.yaml:2:42: schema.properties.a.default: default 1.5 does not match the schema: want integer, got 1.5"},
		{"type: object\n$schema: https://example.com/my-meta-schema\nproperties: {a: {type: string}}", "s.yaml:1:1: schema: not a valid JSON Schema:"},
		{"type: object\nproperties: {a: {enum: [a, A]}}", `enum values "a" and "A" both become Go constant JobV1AA`},
		{"type: object\nproperties:\n  a_b: {type: object, properties: {x: {type: string}}}\n  a: {enum: [b]}", "enum value \"b\" becomes Go constant JobV1AB, which is already the name of the type of"},
	}
	for _, c := range cases {
		_, ds := convert(t, c.src, nil)
		if got := ds.Error(); !strings.Contains(got, c.want) {
			t.Errorf("schema\n%s\ngave\n%s\nwant\n%s", c.src, got, c.want)
		}
	}
}
