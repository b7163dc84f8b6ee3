package contract_test

import (
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/generator/contract"
)

// withResult is a job whose result contract jobc.lock records, in results, beside its
// payload in jobs.
const withResult = `  charge:
    payload:
      versions:
        1:
          schema: {type: object, additionalProperties: false, required: [order_id], properties: {order_id: {type: string}}}
    result:
      versions:
        1:
          schema:
            type: object
            additionalProperties: false
            required: [charge_id]
            properties:
              charge_id: {type: string, maxLength: 64}
`

const chargePayload = `  charge:
    payload:
      versions:
        1:
          schema: {type: object, additionalProperties: false, required: [order_id], properties: {order_id: {type: string}}}
`

// TestLockRecordsResults: the result contract is locked under results, by kind.
func TestLockRecordsResults(t *testing.T) {
	lock, err := contract.Lock(load(t, withResult, nil))
	if err != nil {
		t.Fatal(err)
	}
	lr := lock.Results["charge"]
	if lr == nil || lr.WriteVersion != 1 || len(lr.Versions) != 1 || !strings.Contains(string(lr.Versions[0].Schema), "charge_id") {
		t.Fatalf("results.charge = %+v; want version 1 with the result's schema", lr)
	}
	if lj := lock.Jobs["charge"]; lj == nil || strings.Contains(string(lj.Versions[0].Schema), "charge_id") {
		t.Errorf("jobs.charge = %+v; want the payload's contract alone", lj)
	}
}

// TestVerifyResults: a released result version is held as a released payload version
// is, and results have rules of their own where readers, not workers, are at stake.
func TestVerifyResults(t *testing.T) {
	cases := []struct {
		name  string
		after string
		want  []string
	}{
		{name: "nothing changed", after: withResult},
		{
			name: "a released result version was edited",
			after: chargePayload + `    result:
      versions:
        1:
          schema:
            type: object
            additionalProperties: false
            required: [charge_id]
            properties:
              charge_id: {type: string, maxLength: 32}
`,
			want: []string{
				`jobc.yaml:18:41: jobs.charge.result.versions.1.schema.properties.charge_id.maxLength: released version 1 of the result of charge changed since jobc.lock: the results completed jobs stored and the readers of the release depend on it, so restore it and make the change in a new version (jobc check shows the diff) [RELEASED_VERSION_CHANGED]`,
				`--- charge result version 1 (jobc.lock)`,
				`+++ charge result version 1 (jobc.yaml)`,
				`@@ -2,7 +2,7 @@`,
				`   "additionalProperties": false,`,
				`   "properties": {`,
				`     "charge_id": {`,
				`-      "maxLength": 64,`,
				`+      "maxLength": 32,`,
				`       "type": "string"`,
				`     }`,
				`   },`,
			},
		},
		{name: "the result was removed", after: chargePayload, want: []string{
			"jobc.lock:27:5: jobs.charge.result: the result of charge is in jobc.lock but no longer in the spec: the results completed jobs stored could no longer be read; keep it, and add versions to change it [RESULT_REMOVED]",
		}},
		{
			name: "handlers write a result version readers do not decode",
			after: chargePayload + `    result:
      versions:
        1:
          schema:
            type: object
            additionalProperties: false
            required: [charge_id]
            properties:
              charge_id: {type: string, maxLength: 64}
        2:
          schema:
            type: object
            additionalProperties: false
            required: [charge_id]
            properties:
              charge_id: {type: string, maxLength: 64}
              receipt_url: {type: string}
`,
			want: []string{
				`jobc.yaml:11:7: jobs.charge.result.write_version: handlers store result version 2 (write_version defaults to the newest version), but the readers of the release in jobc.lock decode charge results up to version 1: results stored during the rollout, or after a rollback, cannot be read by them; roll out in two releases: first deploy version 2 with write_version: 1, then set write_version: 2 once no older reader runs [WRITE_VERSION_AHEAD]`,
			},
		},
		{
			name: "an incompatible result version needs a hand-written upcast",
			after: chargePayload + `    result:
      write_version: 1
      versions:
        1:
          schema:
            type: object
            additionalProperties: false
            required: [charge_id]
            properties:
              charge_id: {type: string, maxLength: 64}
        2:
          schema:
            type: object
            additionalProperties: false
            required: [id]
            properties:
              id: {type: string}
`,
			want: []string{
				`jobc.yaml:20:9: jobs.charge.result.versions.2: needed upcast missing: write func UpcastChargeResultV1ToV2(ChargeResultV1) (ChargeResultV2, error) in jobs, or declare changes: version 2 rejects some version 1 payloads (PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL, REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL) [UPCAST_MISSING]`,
				`jobc.yaml:25:13: jobs.charge.result.versions.2.schema.properties: note: property "charge_id": property removed from a closed content model; old documents containing it are rejected [PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL]`,
				`jobc.yaml:26:15: jobs.charge.result.versions.2.schema.properties.id: note: property "id": required property added; old documents never contained it [REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL]`,
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			lock, err := contract.Lock(loadIn(t, dir, withResult, nil))
			if err != nil {
				t.Fatal(err)
			}
			if err := contract.WriteLock(dir, lock); err != nil {
				t.Fatal(err)
			}
			if lock, err = contract.LoadLock(dir); err != nil {
				t.Fatal(err)
			}
			fs, err := contract.Verify(loadIn(t, dir, c.after, nil), lock)
			if err != nil {
				t.Fatal(err)
			}
			compareLines(t, lines(t, fs), c.want)
		})
	}
}
