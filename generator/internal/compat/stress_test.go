package compat

import (
	"fmt"
	"strings"
	"testing"
)

// TestPathologicalSchemas makes sure self-referencing combinators and wide
// $ref DAGs terminate quickly, stay compatible with themselves, and still
// report the one real change.
func TestPathologicalSchemas(t *testing.T) {
	dag := func(leaf string) string {
		var defs []string
		for i := 0; i < 25; i++ {
			defs = append(defs, fmt.Sprintf(`"d%d":{"type":"object","properties":{"a":{"$ref":"#/$defs/d%d"},"b":{"$ref":"#/$defs/d%d"}}}`, i, i+1, i+1))
		}
		defs = append(defs, `"d25":`+leaf)
		return `{"$defs":{` + strings.Join(defs, ",") + `},"$ref":"#/$defs/d0"}`
	}
	schemas := []string{
		`{"allOf":[` + strings.Repeat(`{"$ref":"#"},`, 20) + `{"type":"object"}]}`,
		`{"anyOf":[` + strings.Repeat(`{"$ref":"#"},`, 6) + `{"type":"string"}]}`,
		`{"oneOf":[` + strings.Repeat(`{"$ref":"#"},`, 6) + `{"type":"integer"}]}`,
		`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`,
		dag(`{"type":"string"}`),
		dag(`{"type":"string","maxLength":3}`),
		`{"type":"string"}`,
	}
	for i, a := range schemas {
		for j, b := range schemas {
			got := Check(decode(t, a, false), decode(t, b, false))
			if i == j && len(got) != 0 {
				t.Errorf("schema %d is not compatible with itself:\n%s", i, dump(got))
			}
		}
	}
	got := Check(decode(t, schemas[4], false), decode(t, schemas[5], false))
	if len(got) != 1 || got[0].Rule != RuleMaxLengthAdded || got[0].Path != "/$defs/d25/maxLength" {
		t.Errorf("DAG change: got\n%s", dump(got))
	}
}
