package runtime_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The runtime validates payloads itself: the JSON Schema library is only the oracle
// of its tests (runtime/internal/schema), never a dependency of an application.
func TestRuntimeDoesNotImportTheSchemaLibrary(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed %d packages: %q", len(deps), deps)
	}
	for _, p := range deps {
		if strings.Contains(p, "santhosh-tekuri/jsonschema") {
			t.Errorf("the runtime imports %s", p)
		}
	}
}
