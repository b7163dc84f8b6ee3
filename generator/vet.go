package generator

import (
	"github.com/jobc-dev/jobc/generator/internal/vet"
	"github.com/jobc-dev/jobc/generator/spec"
)

// VetFinding is one result of Vet: where (file:line:col: path: message) and which rule.
type VetFinding = vet.Finding

// VetRule is one lint Vet runs: its name, which --skip takes, and what it catches.
type VetRule = vet.Rule

// VetRules returns every lint, in the order Vet runs them.
func VetRules() []VetRule { return vet.Rules() }

// Vet lints a loaded project for settings that are legal but likely mistakes, skipping
// the rules named in skip.
func Vet(p *spec.Project, skip map[string]bool) []VetFinding { return vet.Lint(p, skip) }
