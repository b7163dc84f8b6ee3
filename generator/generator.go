// Package generator turns a jobc project into Go code. It is one pipeline:
//
//	spec.Load (config → parse → check) → gotype.Convert (schemas → Go types)
//	→ emit (Go files) → Write or Diff
//
// Every stage reports problems as spec.Diagnostics (file:line:col: path: message),
// all of them in one run.
package generator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strings"
	"sync"

	"github.com/jobc-dev/jobc/generator/contract"
	"github.com/jobc-dev/jobc/generator/emit"
	"github.com/jobc-dev/jobc/generator/gotype"
	"github.com/jobc-dev/jobc/generator/spec"
)

// File is one generated file.
type File struct {
	Path    string // relative to the project directory
	Content []byte
}

// Result is the output of a generation run.
type Result struct {
	Project *spec.Project
	Files   []File // sorted by path
}

// CatalogFileName is the generated file that ties the job types together; each job type
// gets <kind>.jobc.go. The suffix keeps kinds such as "deploy_linux" or "smoke_test"
// from turning into build constraints or test files.
const CatalogFileName = "jobc.go"

// Generate loads the project in dir and renders its Go files without writing them.
func Generate(ctx context.Context, dir string) (*Result, error) {
	// A spec with errors still goes through Build, so that one run reports the
	// problems of every stage.
	p, loadErr := spec.Load(dir)
	if p == nil {
		return nil, loadErr
	}
	var loadDiags spec.Diagnostics
	if loadErr != nil && !errors.As(loadErr, &loadDiags) {
		return nil, loadErr
	}
	skip, all := kindsIn(loadDiags)
	if all {
		return nil, loadErr
	}
	jobs, err := build(ctx, p, skip)
	if len(loadDiags) > 0 {
		var buildDiags spec.Diagnostics
		if err != nil && !errors.As(err, &buildDiags) {
			return nil, err
		}
		return nil, append(loadDiags, buildDiags...).Sorted()
	}
	if err != nil {
		return nil, err
	}
	res := &Result{Project: p}
	files, err := renderJobs(ctx, p.Package, jobs)
	if err != nil {
		return nil, err
	}
	for i, j := range jobs {
		res.Files = append(res.Files, File{Path: filepath.Join(p.Out, j.Spec.Kind+".jobc.go"), Content: files[i]})
	}
	b, err := emit.CatalogFile(p.Package, p.File, jobs)
	if err != nil {
		return nil, fmt.Errorf("jobc: generate catalogue: %w", err)
	}
	res.Files = append(res.Files, File{Path: filepath.Join(p.Out, CatalogFileName), Content: b})
	sort.Slice(res.Files, func(i, j int) bool { return res.Files[i].Path < res.Files[j].Path })
	return res, nil
}

// renderJobs renders each job's file, in parallel.
func renderJobs(ctx context.Context, pkg string, jobs []emit.Job) ([][]byte, error) {
	out := make([][]byte, len(jobs))
	errs := make([]error, len(jobs))
	parallel(len(jobs), func(i int) {
		if out[i], errs[i] = emit.JobFile(pkg, jobs[i]); errs[i] != nil {
			errs[i] = fmt.Errorf("jobc: generate %s: %w", jobs[i].Spec.Kind, errs[i])
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, errors.Join(errs...)
}

// build converts every job's payload versions into Go types and checks the names the
// generated package will declare. The project may have failed to load cleanly: the
// jobs in skip already have problems reported, and are left out rather than reported
// twice.
func build(ctx context.Context, p *spec.Project, skip map[string]bool) ([]emit.Job, error) {
	var todo []*spec.Job
	for _, j := range p.Jobs {
		if !skip[j.Kind] {
			todo = append(todo, j)
		}
	}
	built := make([]builtJob, len(todo))
	parallel(len(todo), func(i int) { built[i] = buildJob(p, todo[i]) })
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var diags spec.Diagnostics
	names := newNames()
	var jobs []emit.Job
	for _, b := range built {
		diags = append(diags, b.diags...)
		if !b.ok {
			continue
		}
		diags = append(diags, names.claimJob(b.job)...)
		jobs = append(jobs, b.job)
	}
	for _, d := range changeErrors(p) {
		if !skip[kindOf(d.Path)] {
			diags = append(diags, d)
		}
	}
	if len(diags) > 0 {
		return nil, diags.Sorted()
	}
	return jobs, nil
}

// kindOf returns the job kind a diagnostic's path is about ("jobs.send_email.retry" →
// "send_email"), or "".
func kindOf(path string) string {
	rest, ok := strings.CutPrefix(path, "jobs.")
	if !ok {
		return ""
	}
	kind, _, _ := strings.Cut(rest, ".")
	return kind
}

// kindsIn returns the kinds that diagnostics are about, and all = true when one of
// them is about no job in particular (the config, a schema file): then no job is built.
func kindsIn(ds spec.Diagnostics) (kinds map[string]bool, all bool) {
	kinds = map[string]bool{}
	for _, d := range ds {
		k := kindOf(d.Path)
		if k == "" {
			return nil, true
		}
		kinds[k] = true
	}
	return kinds, false
}

// builtJob is one job converted to Go types, or the problems that prevented it.
type builtJob struct {
	job   emit.Job
	ok    bool
	diags spec.Diagnostics
}

// buildJob converts one job's payload versions; it touches nothing shared.
func buildJob(p *spec.Project, sj *spec.Job) builtJob {
	j := emit.Job{Spec: sj, Name: gotype.GoName(sj.Kind)}
	for _, c := range sj.Errors {
		for _, pc := range p.Classes {
			if pc.Name == c {
				j.Classes = append(j.Classes, pc)
			}
		}
	}
	b := builtJob{ok: true, diags: checkClassMethods(j)}
	for i, sv := range sj.Payload.Versions {
		payload, ds := gotype.Convert(j.TypeName(sv.Number), sv.Schema, p.Types)
		b.diags = append(b.diags, ds...)
		canon, err := sv.Schema.Canonical()
		if err != nil {
			b.diags = append(b.diags, spec.Diagnostic{Pos: sv.Pos, Path: sv.Schema.Path, Message: err.Error()})
		}
		if payload == nil || err != nil {
			b.ok = false
			continue
		}
		v := emit.Version{Spec: sv, Payload: payload, Schema: string(canon)}
		if i > 0 {
			v.HandWritten = needsHandWrittenUpcast(sj.Payload.Versions[i-1], sv)
		}
		j.Versions = append(j.Versions, v)
	}
	b.job = j
	return b
}

// parallel calls f(0) ... f(n-1) on all cores. Jobs are independent, and converting
// and rendering them is most of a large catalogue's generation time.
func parallel(n int, f func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(goruntime.GOMAXPROCS(0), n)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// changeErrors reports declared changes that do not upcast every payload of the
// previous version into a valid one: generated code would fail such jobs at run time.
// A missing hand-written upcast is left to the compiler (and `jobc check`).
func changeErrors(p *spec.Project) spec.Diagnostics {
	findings, err := contract.Check(p)
	if err != nil {
		return spec.Diagnostics{{Pos: spec.Pos{File: p.File, Line: 1, Col: 1}, Message: err.Error()}}
	}
	var out spec.Diagnostics
	for _, f := range findings {
		switch f.Rule {
		case contract.RuleChangesIncorrect, contract.RuleChangeDefaultInvalid, contract.RuleChangeNotApplicable:
			d := f.Diagnostic
			d.Message += " [" + f.Rule + "]"
			out = append(out, d)
		}
	}
	return out
}

// needsHandWrittenUpcast reports whether version cur needs an upcast the user writes:
// it declares no changes, and it does not accept every payload its predecessor accepted.
// `jobc check` decides the same way (contract.Check).
func needsHandWrittenUpcast(prev, cur *spec.Version) bool {
	return contract.NeedsHandWrittenUpcast(prev, cur)
}

// handleMembers are the methods and fields a generated <Type>Job inherits from
// *runtime.Job; an error class method must not shadow them.
var handleMembers = map[string]bool{
	"ID": true, "Kind": true, "Queue": true, "Attempt": true, "MaxAttempts": true, "Priority": true,
	"PayloadVersion": true, "CreatedAt": true, "Metadata": true, "IdempotencyKey": true, "Logger": true,
	"Job": true, "Heartbeat": true,
}

func checkClassMethods(j emit.Job) spec.Diagnostics {
	var ds spec.Diagnostics
	for _, c := range j.Classes {
		if name := gotype.GoName(c.Name); handleMembers[name] {
			ds = append(ds, spec.Diagnostic{Pos: c.Pos, Path: "error_classes." + c.Name,
				Message: fmt.Sprintf("error class %q would become method %s, which the job handle already has: rename the class", c.Name, name)})
		}
	}
	return ds
}

// names tracks the identifiers of the generated package to report collisions.
type names struct{ owner map[string]string }

func newNames() *names {
	n := &names{owner: map[string]string{}}
	for _, reserved := range []string{"Handlers", "Register", "JobTypes"} {
		n.owner[reserved] = "the catalogue"
	}
	return n
}

func (n *names) claimJob(j emit.Job) spec.Diagnostics {
	ids := []string{"Kind" + j.Name, j.Name, j.Name + "Job", j.Name + "Handler", "Enqueue" + j.Name,
		"Register" + j.Name, gotype.LowerFirst(j.Name) + "Type"}
	for _, v := range j.Versions {
		for _, d := range v.Payload.Decls {
			ids = append(ids, d.Name)
			if d.Enum != nil {
				for _, e := range d.Enum.Values {
					ids = append(ids, e.Name)
				}
			}
		}
	}
	var ds spec.Diagnostics
	for _, id := range ids {
		if other, taken := n.owner[id]; taken && other != j.Spec.Kind {
			ds = append(ds, spec.Diagnostic{Pos: j.Spec.Pos, Path: "jobs." + j.Spec.Kind,
				Message: fmt.Sprintf("generated name %s collides with the one generated for %s: rename one of them", id, other)})
			continue
		}
		n.owner[id] = j.Spec.Kind
	}
	return ds
}

// owned reports whether a file in the output directory belongs to the generator.
func owned(path string) bool {
	base := filepath.Base(path)
	if base != CatalogFileName && !strings.HasSuffix(base, ".jobc.go") {
		return false
	}
	b, err := os.ReadFile(path)
	return err == nil && bytes.HasPrefix(b, []byte("// "+emit.Header))
}

// Write writes the result into the project directory and removes generated files that
// the spec no longer produces. Files are written only when their content changed.
func Write(res *Result) error {
	p := res.Project
	out := filepath.Join(p.Dir, p.Out)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("jobc: create %s: %w", out, err)
	}
	want := map[string]bool{}
	for _, f := range res.Files {
		path := filepath.Join(p.Dir, f.Path)
		want[path] = true
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, f.Content) {
			continue
		}
		if err := os.WriteFile(path, f.Content, 0o644); err != nil {
			return fmt.Errorf("jobc: write %s: %w", f.Path, err)
		}
	}
	extra, err := extraFiles(out, want)
	if err != nil {
		return err
	}
	for _, path := range extra {
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("jobc: remove stale %s: %w", path, err)
		}
	}
	return nil
}

func extraFiles(out string, want map[string]bool) ([]string, error) {
	entries, err := os.ReadDir(out)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("jobc: read %s: %w", out, err)
	}
	var extra []string
	for _, e := range entries {
		path := filepath.Join(out, e.Name())
		if !e.IsDir() && !want[path] && owned(path) {
			extra = append(extra, path)
		}
	}
	return extra, nil
}
