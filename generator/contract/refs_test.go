package contract_test

import (
	"testing"

	"github.com/jobc-dev/jobc/generator/contract"
)

// TestCheckRefs: schemas split over files and $defs are checked like inline ones, and
// findings point into the file where the difference is written.
func TestCheckRefs(t *testing.T) {
	closed := func(props string, required string) string {
		return "type: object\nadditionalProperties: false\nrequired: [" + required + "]\nproperties:\n" + props
	}
	cases := []struct {
		name  string
		jobs  string
		files map[string]string
		want  []string
		// loadErr: spec.Load refuses the project, checking values as the runtime
		// does, before the contract is checked.
		loadErr string
	}{
		{
			name: "whole-file schemas: the reason is in the schema file",
			jobs: `  refund:
    payload:
      versions:
        1:
          schema: {$ref: ./schemas/refund_v1.yaml}
        2:
          schema: {$ref: ./schemas/refund_v2.yaml}
`,
			files: map[string]string{
				"schemas/refund_v1.yaml": closed("  reason: {type: string, maxLength: 200}\n", "reason"),
				"schemas/refund_v2.yaml": closed("  reason: {type: string, maxLength: 100}\n", "reason"),
			},
			want: []string{
				`jobc.yaml:10:9: jobs.refund.payload.versions.2: needed upcast missing: write func UpcastRefundV1ToV2(RefundV1) (RefundV2, error) in jobs, or declare changes: version 2 rejects some version 1 payloads (MAX_LENGTH_DECREASED) [UPCAST_MISSING]`,
				`schemas/refund_v2.yaml:5:26: properties.reason.maxLength: note: property "reason": maxLength decreased from 200 to 100 [MAX_LENGTH_DECREASED]`,
			},
		},
		{
			name: "whole-file schemas: a rename applies to the referenced schema",
			jobs: `  refund:
    payload:
      versions:
        1:
          schema: {$ref: ./schemas/refund_v1.yaml}
        2:
          changes: [rename: {from: reason, to: why}]
          schema: {$ref: ./schemas/refund_v2.yaml}
`,
			files: map[string]string{
				"schemas/refund_v1.yaml": closed("  reason: {type: string, maxLength: 200}\n", "reason"),
				"schemas/refund_v2.yaml": closed("  why: {type: string, maxLength: 200}\n", "why"),
			},
		},
		{
			name: "an added field whose schema is a $ref",
			jobs: `  ship:
    payload:
      versions:
        1:
          schema:
            type: object
            additionalProperties: false
            required: [id]
            properties:
              id: {type: string}
        2:
          changes:
            - add: {field: address, default: {street: "", city: Paris}}
          schema:
            type: object
            additionalProperties: false
            required: [id, address]
            properties:
              id: {type: string}
              address: {$ref: "#/$defs/Address"}
            $defs:
              Address:
                type: object
                additionalProperties: false
                required: [street, city]
                properties:
                  street: {type: string}
                  city: {type: string, minLength: 1}
`,
		},
		{
			name: "an added field whose $ref default is invalid",
			jobs: `  ship:
    payload:
      versions:
        1:
          schema:
            type: object
            additionalProperties: false
            required: [id]
            properties:
              id: {type: string}
        2:
          changes:
            - add: {field: address, default: {street: "", city: Paris, contact: nobody}}
          schema:
            type: object
            additionalProperties: false
            required: [id, address]
            properties:
              id: {type: string}
              address: {$ref: "#/$defs/Address"}
            $defs:
              Address:
                type: object
                additionalProperties: false
                required: [street, city]
                properties:
                  street: {type: string}
                  city: {type: string, minLength: 1}
                  contact: {type: string, format: email}
`,
			loadErr: `jobc.yaml:17:46: jobs.ship.payload.versions.2.changes.0.add.default: default {"city":"Paris","contact":"nobody","street":""} does not match field "address" of version 2: at /contact: "nobody" is not valid email: missing @`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.loadErr != "" {
				if got := loadError(t, c.jobs, c.files); got != c.loadErr {
					t.Errorf("spec.Load: got\n%s\nwant\n%s", got, c.loadErr)
				}
				return
			}
			fs, err := contract.Check(load(t, c.jobs, c.files))
			if err != nil {
				t.Fatal(err)
			}
			compareLines(t, lines(t, fs), c.want)
		})
	}
}
