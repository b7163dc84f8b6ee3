package contract_test

import (
	"testing"

	"github.com/jobc-dev/jobc/generator/contract"
)

func TestPointer(t *testing.T) {
	p := load(t, `  charge:
    payload:
      versions:
        1:
          schema:
            type: object
            required: [amount, "a/b"]
            properties:
              amount: {$ref: "schemas/money.yaml#/$defs/Amount"}
              "a/b": {type: string, maxLength: 3}
              list:
                type: array
                items: [{type: string}, {type: integer}]
  refund:
    payload:
      versions:
        1:
          schema: {$ref: ./schemas/refund.json}
`, map[string]string{
		"schemas/money.yaml": `$defs:
  Amount:
    type: object
    properties:
      cents: {type: integer, minimum: 0}
`,
		"schemas/refund.json": `{
  "type": "object",
  "properties": {
    "reason": {"type": "string", "maxLength": 200}
  }
}
`,
	})
	charge, refund := p.Jobs[0].Payload.Versions[0].Schema, p.Jobs[1].Payload.Versions[0].Schema
	cases := []struct {
		ptr, want string
	}{
		{"", "jobc.yaml:10:13 jobs.charge.payload.versions.1.schema"},
		{"/properties", "jobc.yaml:12:13 jobs.charge.payload.versions.1.schema.properties"},
		{"/properties/a~1b/maxLength", "jobc.yaml:14:37 jobs.charge.payload.versions.1.schema.properties.a/b.maxLength"},
		{"/properties/gone/type", "jobc.yaml:12:13 jobs.charge.payload.versions.1.schema.properties"},
		{"/required/1", "jobc.yaml:11:32 jobs.charge.payload.versions.1.schema.required.1"},
		{"/properties/list/items/1/type", "jobc.yaml:17:42 jobs.charge.payload.versions.1.schema.properties.list.items.1.type"},
		{"/properties/amount/$ref", "jobc.yaml:13:24 jobs.charge.payload.versions.1.schema.properties.amount.$ref"},
		{"/$defs/Amount/properties/cents/minimum", "schemas/money.yaml:5:30 $defs.Amount.properties.cents.minimum"},
		{"/$defs/Amount/properties/dollars", "schemas/money.yaml:4:5 $defs.Amount.properties"},
	}
	for _, c := range cases {
		pos, path := contract.Pointer(charge, c.ptr)
		if got := pos.String() + " " + path; got != c.want {
			t.Errorf("Pointer(%q) = %s, want %s", c.ptr, got, c.want)
		}
	}
	pos, path := contract.Pointer(refund, "/$defs/refund/properties/reason/maxLength")
	if got, want := pos.String()+" "+path, "schemas/refund.json:4:34 properties.reason.maxLength"; got != want {
		t.Errorf("Pointer into a whole-file schema = %s, want %s", got, want)
	}
}
