package generator

import (
	"fmt"
	"path/filepath"

	"github.com/jobc-dev/jobc/generator/internal/codegen/golang"
	"github.com/jobc-dev/jobc/generator/internal/codegen/typescript"
	"github.com/jobc-dev/jobc/generator/internal/names"
	"github.com/jobc-dev/jobc/generator/spec"
)

// typescriptFile renders the TypeScript producers file (producers.typescript).
func typescriptFile(p *spec.Project, jobs []golang.Job, workflows []golang.Workflow) (File, error) {
	b, err := typescript.File(typescript.Project{
		Config:      p.File,
		SQLFile:     p.Producers.SQL,
		SQLFunction: names.SQLEnqueue,
		Jobs:        jobs,
		Workflows:   workflows,
	})
	if err != nil {
		return File{}, fmt.Errorf("jobc: generate %s: %w", p.Producers.TypeScript, err)
	}
	return File{Path: filepath.FromSlash(p.Producers.TypeScript), Content: b}, nil
}

// typescriptErrors reports what keeps the TypeScript producers file from working: it
// calls the SQL producers, so it needs producers.sql too, and its names must be
// distinct (a job's nested type may take the name of another job's alias).
func typescriptErrors(p *spec.Project, built []builtJob, workflows []names.Owned) spec.Diagnostics {
	if p.Producers.TypeScript == "" {
		return nil
	}
	var ds spec.Diagnostics
	if p.Producers.SQL == "" {
		ds = append(ds, spec.Diagnostic{Pos: p.Producers.TypeScriptPos, Path: "producers.typescript",
			Message: "the TypeScript producers call the SQL functions of producers.sql: set it too (producers: {sql: db/jobc_producers.sql, typescript: ...})"})
	}
	var ids []names.Owned
	for _, id := range names.TSCatalogue() {
		ids = append(ids, names.Owned{Ident: id})
	}
	for _, b := range built {
		ids = append(ids, names.JobOwned(b.job.Spec, b.job.Names.TSIdents(b.versions))...)
	}
	if len(workflows) > 0 {
		for _, id := range names.TSWorkflowCatalogue() {
			ids = append(ids, names.Owned{Ident: id})
		}
		ids = append(ids, workflows...)
	}
	return append(ds, names.Collisions(ids)...)
}
