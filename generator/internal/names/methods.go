package names

import (
	"fmt"
	"slices"

	"github.com/jobc-dev/jobc/generator/spec"
)

// handleMembers lists the fields and methods that a generated <Type>Job gets from
// embedding *runtime.Job, and the embedded field Job itself: an error class method of
// one of these names would shadow it. TestHandleMembersMatchRuntimeJob compares the
// list with *runtime.Job by reflection, so it cannot fall behind the runtime.
func handleMembers() []string {
	return []string{"ID", "Kind", "Queue", "Attempt", "MaxAttempts", "Priority", "PayloadVersion",
		"CreatedAt", "Metadata", "IdempotencyKey", "Logger", "Job", "Heartbeat", "Once", "Snooze"}
}

// handleMember reports whether name is one of handleMembers.
func handleMember(name string) bool {
	return slices.Contains(handleMembers(), name)
}

// MethodCollisions reports error classes of job j whose methods on the handle would
// shadow a member of *runtime.Job or be declared twice.
func (n Job) MethodCollisions(j *spec.Job, classes []*spec.ErrorClass) spec.Diagnostics {
	var ds spec.Diagnostics
	seen := map[string]string{}
	for _, c := range classes {
		name := ClassMethod(c.Name)
		switch other, dup := seen[name]; {
		case handleMember(name):
			ds = append(ds, spec.Diagnostic{Pos: c.Pos, Path: "error_classes." + c.Name,
				Message: fmt.Sprintf("error class %q would become method %s, which the job handle already has: rename the class", c.Name, name)})
		case dup && other != c.Name: // a class listed twice is reported by spec.Load
			ds = append(ds, spec.Diagnostic{Pos: j.Pos, Path: "jobs." + j.Kind + ".errors",
				Message: fmt.Sprintf("error classes %q and %q both become method %s of %s: rename one of them", other, c.Name, name, n.Handle())})
		}
		seen[name] = c.Name
	}
	return ds
}
