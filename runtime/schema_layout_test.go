package runtime_test

import (
	"encoding/json"
	"testing"

	"github.com/jobc-dev/jobc/runtime"
)

// TestNewJobTypeCompactsSchema: generated code writes a version's schema indented
// for reading; the job type keeps the canonical JSON it came from, so two versions
// whose schemas differ only in layout (an event and a subscriber sharing a payload,
// one hand-written) have the same schema text.
func TestNewJobTypeCompactsSchema(t *testing.T) {
	const canonical = `{"additionalProperties":false,"properties":{"note":{"type":"string"}},"required":["note"],"type":"object"}`
	indented := "{\n\t\t\t\t\"additionalProperties\": false,\n\t\t\t\t\"properties\": {\n\t\t\t\t\t\"note\": {\n\t\t\t\t\t\t\"type\": \"string\"\n" +
		"\t\t\t\t\t}\n\t\t\t\t},\n\t\t\t\t\"required\": [\n\t\t\t\t\t\"note\"\n\t\t\t\t],\n\t\t\t\t\"type\": \"object\"\n\t\t\t}"
	if !json.Valid([]byte(indented)) {
		t.Fatalf("the indented schema is not JSON:\n%s", indented)
	}
	jt, err := runtime.NewJobType(runtime.JobType{
		Kind: "note", Queue: "default", MaxAttempts: 1,
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: indented}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := jt.Versions[0].Schema; got != canonical {
		t.Errorf("schema kept as\n%s\nwant the canonical\n%s", got, canonical)
	}
	if _, err := runtime.NewJobType(runtime.JobType{
		Kind: "note", Queue: "default", MaxAttempts: 1,
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: `{"type": "object"`}},
	}); err == nil {
		t.Error("an unterminated schema was accepted")
	}
}
