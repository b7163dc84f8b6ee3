package names

import (
	"fmt"

	"github.com/jobc-dev/jobc/generator/spec"
)

// handleMember reports whether name is a field or method that a generated <Type>Job
// gets from embedding *runtime.Job: an error class method of that name would shadow it.
func handleMember(name string) bool {
	switch name {
	case "ID", "Kind", "Queue", "Attempt", "MaxAttempts", "Priority", "PayloadVersion",
		"CreatedAt", "Metadata", "IdempotencyKey", "Logger", "Job", "Heartbeat", "Once", "Snooze":
		return true
	}
	return false
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
