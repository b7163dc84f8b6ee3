package contract_test

import (
	"testing"

	"github.com/jobc-dev/jobc/generator/contract"
)

// TestRequireChange: require keeps version 1's schema for the field it makes required,
// so a version 1 value that version 2 rejects is found; a field that was optional in
// version 1 and is required with a default in version 2's schema needs no change at all.
func TestRequireChange(t *testing.T) {
	cases := []struct {
		name, jobs string
		want       []string
	}{
		{
			name: "require with a compatible field",
			jobs: `  send_receipt:
    payload:
      versions:
        1: {schema: {type: object, additionalProperties: false, properties: {locale: {type: string, enum: [en, fr]}}}}
        2:
          changes: [require: {field: locale, default: en}]
          schema: {type: object, additionalProperties: false, required: [locale], properties: {locale: {type: string, enum: [en, fr, de]}}}
`,
		},
		{
			name: "require whose field narrows",
			jobs: `  send_receipt:
    payload:
      versions:
        1: {schema: {type: object, additionalProperties: false, properties: {locale: {type: string, enum: [en, fr, de]}}}}
        2:
          changes: [require: {field: locale, default: en}]
          schema: {type: object, additionalProperties: false, required: [locale], properties: {locale: {type: string, enum: [en, fr]}}}
`,
			want: []string{
				`jobc.yaml:10:21: jobs.send_receipt.payload.versions.2.changes: the changes do not turn every version 1 payload into a valid version 2 payload (ENUM_ARRAY_NARROWED): fix them, or remove them and write func UpcastSendReceiptV1ToV2(SendReceiptV1) (SendReceiptV2, error) in jobs [CHANGES_INCORRECT]`,
				`jobc.yaml:11:119: jobs.send_receipt.payload.versions.2.schema.properties.locale.enum: note: property "locale": enum no longer accepts "de" [ENUM_ARRAY_NARROWED]`,
			},
		},
		{
			// This used to need a hand-written upcast (REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED).
			name: "required with a default in the schema, no changes",
			jobs: `  send_receipt:
    payload:
      versions:
        1: {schema: {type: object, additionalProperties: false, properties: {locale: {type: string}}}}
        2: {schema: {type: object, additionalProperties: false, required: [locale], properties: {locale: {type: string, default: en}}}}
`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs, err := contract.Check(load(t, c.jobs, nil))
			if err != nil {
				t.Fatal(err)
			}
			compareLines(t, lines(t, fs), c.want)
		})
	}
}
