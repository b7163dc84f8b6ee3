package gotype

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/internal/dialect"
)

// TestKeywordsFollowTheDialect: jobc generate accepts, on a property of the type it
// applies to, every keyword the table does not refuse, refuses every one it does, and
// refuses a root-only keyword below the root, each naming the keyword.
func TestKeywordsFollowTheDialect(t *testing.T) {
	values := map[dialect.Value]string{
		dialect.AnyValue: "a", dialect.Types: "string", dialect.String: "x", dialect.Boolean: "true",
		dialect.List: "[a]", dialect.Strings: "[a]", dialect.Count: "1", dialect.Number: "1",
		dialect.Positive: "1", dialect.Schema: "{type: string}", dialect.SchemaMap: "{}", dialect.SchemaList: "[{}]",
		dialect.Other: "{}",
	}
	for _, k := range dialect.Keywords() {
		typ := k.Applies
		if typ == "" {
			typ = "string"
		}
		value := values[k.Value]
		switch k.Name {
		case "type":
			value = typ
		case "$ref":
			value = "'#/$defs/d'"
		case "items":
			value = "{type: string}"
		case "required":
			value = "[]"
		case "$schema":
			value = "'https://json-schema.org/draft/2020-12/schema'"
		}
		prop := fmt.Sprintf("{type: %s, %q: %s}", typ, k.Name, value)
		if typ == "array" && k.Name != "items" {
			prop = fmt.Sprintf("{type: array, items: {type: string}, %q: %s}", k.Name, value)
		}
		if k.Name == "$ref" {
			prop = "{$ref: '#/$defs/d'}"
		}
		root := "{type: object, properties: {p: " + prop + "}, $defs: {d: {type: string}}}"
		if k.RootOnly {
			root = fmt.Sprintf("{type: object, %q: %s, properties: {p: {type: string}}}", k.Name, value)
		}
		_, ds := convert(t, root, nil)
		switch {
		case k.Class == dialect.Unsupported:
			if len(ds) != 1 || !strings.Contains(ds[0].Message, fmt.Sprintf("unsupported JSON Schema keyword %q", k.Name)) {
				t.Errorf("%s: %v, want the keyword refused", root, ds)
			}
		case len(ds) > 0:
			t.Errorf("%s: %v", root, ds)
		}
		if !k.RootOnly {
			continue
		}
		nested := fmt.Sprintf("{type: object, properties: {p: {type: object, %q: %s}}}", k.Name, value)
		if _, ds := convert(t, nested, nil); len(ds) != 1 || !strings.Contains(ds[0].Message, fmt.Sprintf("keyword %q is only allowed at the top", k.Name)) {
			t.Errorf("%s: %v, want the keyword refused below the root", nested, ds)
		}
	}
}
