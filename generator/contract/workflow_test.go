package contract_test

import (
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/generator/contract"
)

const notifyJob = `  notify:
    payload:
      versions:
        1: {schema: {type: object, required: [order_id], properties: {order_id: {type: string}}}}
`

func workflowSpec(maxLength int) string {
	return notifyJob + `workflows:
  checkout:
    input:
      versions:
        1:
          schema:
            type: object
            required: [order_id]
            properties:
              order_id: {type: string, maxLength: ` + strings.Repeat("9", maxLength) + `}
    steps:
      tell: {job: notify}
`
}

// TestWorkflowInputsAreLocked: a workflow's input versions are locked under
// workflows, and a released one may not change (running workflows were started with
// it); a workflow removed from the spec leaves nothing behind that needs it.
func TestWorkflowInputsAreLocked(t *testing.T) {
	dir := t.TempDir()
	lock, err := contract.Lock(loadIn(t, dir, workflowSpec(2), nil))
	if err != nil {
		t.Fatal(err)
	}
	if lw := lock.Workflows["checkout"]; lw == nil || len(lw.Versions) != 1 || !strings.Contains(string(lw.Versions[0].Schema), `"maxLength":99`) {
		t.Fatalf("workflows.checkout = %+v; want the input's version 1", lw)
	}
	if err := contract.WriteLock(dir, lock); err != nil {
		t.Fatal(err)
	}
	if lock, err = contract.LoadLock(dir); err != nil {
		t.Fatal(err)
	}
	fs, err := contract.Verify(loadIn(t, dir, workflowSpec(3), nil), lock)
	if err != nil {
		t.Fatal(err)
	}
	got := lines(t, fs)
	if len(got) == 0 || !strings.Contains(got[0], "workflows.checkout.input.versions.1.schema.properties.order_id.maxLength: released version 1 of the input of workflow checkout changed since jobc.lock") || !strings.Contains(got[0], "[RELEASED_VERSION_CHANGED]") {
		t.Errorf("a changed released input: %q; want RELEASED_VERSION_CHANGED at the field", got)
	}
	fs, err = contract.Verify(loadIn(t, dir, notifyJob, nil), lock)
	if err != nil {
		t.Fatal(err)
	}
	if got := lines(t, fs); len(got) != 0 {
		t.Errorf("a removed workflow: %q; want no finding", got)
	}
}
