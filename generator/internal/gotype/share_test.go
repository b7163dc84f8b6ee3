package gotype

import (
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/jobc-dev/jobc/generator/spec"
)

// shareVersions converts each schema as version i+1 of a job and shares their types.
func shareVersions(t *testing.T, srcs ...string) []*Payload {
	t.Helper()
	var ps []*Payload
	for i, src := range srcs {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
			t.Fatal(err)
		}
		p, ds := Convert("JobV"+string(rune('1'+i)), &spec.Schema{File: "s.yaml", Path: "schema", Node: doc.Content[0]}, nil)
		if len(ds) > 0 {
			t.Fatalf("version %d: %v", i+1, ds)
		}
		ps = append(ps, p)
	}
	return Share(ps)
}

const withMoney = `
type: object
properties:
  total: {$ref: "#/$defs/money"}
  lines: {type: array, items: {type: object, properties: {price: {$ref: "#/$defs/money"}}}}
$defs:
  money:
    type: object
    required: [cents, currency]
    properties:
      cents: {type: integer, minimum: 0}
      currency: {type: string, enum: [EUR, USD]}
`

// A version whose money differs (a new currency), and whose lines therefore differ too.
const withMoreMoney = `
type: object
properties:
  total: {$ref: "#/$defs/money"}
  lines: {type: array, items: {type: object, properties: {price: {$ref: "#/$defs/money"}}}}
$defs:
  money:
    type: object
    required: [cents, currency]
    properties:
      cents: {type: integer}
      currency: {type: string, enum: [EUR, USD, GBP]}
`

// TestShareDeclaresIdenticalTypesOnce: versions 1 to 3 share money, its currency and
// the line that holds it (the validation keyword minimum is not part of the Go type);
// version 4 changes the currencies, so it declares its own, and so its own line.
func TestShareDeclaresIdenticalTypesOnce(t *testing.T) {
	ps := shareVersions(t, withMoney, withMoney, withMoney, withMoreMoney)
	want := [][]string{
		{"JobV1", "JobV1Money", "JobV1MoneyCurrency", "JobV1Line"},
		{"JobV2"},
		{"JobV3"},
		{"JobV4", "JobV4Money", "JobV4MoneyCurrency", "JobV4Line"},
	}
	for i, p := range ps {
		if got := names(p); !reflect.DeepEqual(got, want[i]) {
			t.Errorf("version %d declares %v, want %v", i+1, got, want[i])
		}
	}
	if got := field(t, ps[2], "JobV3", "Total").Type; !reflect.DeepEqual(got, Pointer{Ref{Name: "JobV1Money"}}) {
		t.Errorf("JobV3.Total is %#v, want *JobV1Money", got)
	}
	if got := field(t, ps[2], "JobV3", "Lines").Type; !reflect.DeepEqual(got, Slice{Ref{Name: "JobV1Line"}}) {
		t.Errorf("JobV3.Lines is %#v, want []JobV1Line", got)
	}
	if got := field(t, ps[3], "JobV4Line", "Price").Type; !reflect.DeepEqual(got, Pointer{Ref{Name: "JobV4Money"}}) {
		t.Errorf("JobV4Line.Price is %#v, want *JobV4Money", got)
	}
	if got := decl(ps[0], "JobV1Money").SharedBy; !reflect.DeepEqual(got, []string{"JobV2", "JobV3"}) {
		t.Errorf("JobV1Money.SharedBy = %v, want [JobV2 JobV3]", got)
	}
}

// TestShareNamesDoNotChangeWhenAVersionIsAdded: the names of versions 1 to 3 are the
// same with or without a version 4, shared or not.
func TestShareNamesDoNotChangeWhenAVersionIsAdded(t *testing.T) {
	for _, v4 := range []string{withMoney, withMoreMoney} {
		three := shareVersions(t, withMoreMoney, withMoney, withMoney)
		four := shareVersions(t, withMoreMoney, withMoney, withMoney, v4)
		for i := range three {
			if !reflect.DeepEqual(names(three[i]), names(four[i])) || !reflect.DeepEqual(three[i].Decls[0], four[i].Decls[0]) {
				t.Errorf("version %d: %v then %v with a version 4", i+1, names(three[i]), names(four[i]))
			}
		}
	}
}

// TestShareKeepsTheTypesOfOneVersionApart: two identical objects in one version stay two
// types, as they were before sharing existed; a later version shares each with its own.
func TestShareKeepsTheTypesOfOneVersionApart(t *testing.T) {
	const src = `
type: object
properties:
  billing: {type: object, properties: {street: {type: string}}}
  shipping: {type: object, properties: {street: {type: string}}}
`
	ps := shareVersions(t, src, src)
	if got := names(ps[0]); !reflect.DeepEqual(got, []string{"JobV1", "JobV1Billing", "JobV1Shipping"}) {
		t.Errorf("version 1 declares %v", got)
	}
	if got := field(t, ps[1], "JobV2", "Shipping").Type; !reflect.DeepEqual(got, Pointer{Ref{Name: "JobV1Shipping"}}) {
		t.Errorf("JobV2.Shipping is %#v, want *JobV1Shipping", got)
	}
}

// TestShareLeavesItsInputAlone: the TypeScript producers read every version's own types.
func TestShareLeavesItsInputAlone(t *testing.T) {
	var ps []*Payload
	for _, name := range []string{"JobV1", "JobV2"} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(withMoney), &doc); err != nil {
			t.Fatal(err)
		}
		p, ds := Convert(name, &spec.Schema{File: "s.yaml", Path: "schema", Node: doc.Content[0]}, nil)
		if len(ds) > 0 {
			t.Fatal(ds)
		}
		ps = append(ps, p)
	}
	Share(ps)
	if got := names(ps[1]); len(got) != 4 || got[1] != "JobV2Money" {
		t.Errorf("version 2's own payload now declares %v", got)
	}
	if got := field(t, ps[1], "JobV2", "Total").Type; !reflect.DeepEqual(got, Pointer{Ref{Name: "JobV2Money"}}) {
		t.Errorf("version 2's own Total is %#v", got)
	}
	if ps[0].Decls[1].SharedBy != nil {
		t.Errorf("version 1's own money says SharedBy %v", ps[0].Decls[1].SharedBy)
	}
}
