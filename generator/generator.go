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
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strings"
	"sync"

	"github.com/jobc-dev/jobc/generator/contract"
	"github.com/jobc-dev/jobc/generator/internal/codegen/golang"
	"github.com/jobc-dev/jobc/generator/internal/codegen/sql"
	"github.com/jobc-dev/jobc/generator/internal/confine"
	"github.com/jobc-dev/jobc/generator/internal/gomod"
	"github.com/jobc-dev/jobc/generator/internal/gotype"
	"github.com/jobc-dev/jobc/generator/internal/names"
	"github.com/jobc-dev/jobc/generator/spec"
	"github.com/jobc-dev/jobc/runtime"
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
	// Unlocked is set when the project has no jobc.lock and no baseline was given:
	// nothing protects released versions from an edit in place.
	Unlocked bool
	// Warnings are the findings of `jobc check` that generation reports without
	// failing: a released kind, alias or event no longer in the spec (KIND_REMOVED,
	// EVENT_REMOVED), whose queued work the generated code no longer handles. The
	// spec may be on its way to a state `jobc check` accepts, so the code is written.
	Warnings contract.Findings
}

// Options change how Generate treats the released contracts.
type Options struct {
	// Baseline holds the released contracts to hold the spec to. When nil, Generate
	// reads jobc.lock from the project directory (contract.LoadLock); without one
	// it sets Result.Unlocked.
	Baseline *contract.LockFile
}

// CatalogFileName is the generated file that ties the job types together; each job type
// gets <kind>.jobc.go. The suffix keeps kinds such as "deploy_linux" or "smoke_test"
// from turning into build constraints or test files.
const CatalogFileName = "jobc.go"

// EventFileSuffix ends the file of each event, <name>.event.jobc.go: an event and a job
// never share a file name, and the file is the generator's like a job's.
const EventFileSuffix = ".event.jobc.go"

// WorkflowFileSuffix ends the file of each workflow, <name>.workflow.jobc.go.
const WorkflowFileSuffix = ".workflow.jobc.go"

// Generate loads the project in dir and renders its Go files without writing them. It
// refuses a spec that edits a version released in jobc.lock, with the finding
// `jobc check` gives (RELEASED_VERSION_CHANGED).
func Generate(ctx context.Context, dir string) (*Result, error) {
	return GenerateWith(ctx, dir, Options{})
}

// GenerateWith is Generate with options.
func GenerateWith(ctx context.Context, dir string, o Options) (*Result, error) {
	// A spec with errors still goes through build, every job of it, so that one run
	// reports the problems of every stage: a misspelt key does not hide the schema
	// errors of the same job.
	p, loadErr := spec.Load(dir)
	if p == nil {
		return nil, loadErr
	}
	var loadDiags spec.Diagnostics
	if loadErr != nil && !errors.As(loadErr, &loadDiags) {
		return nil, loadErr
	}
	base, unlocked, err := baseline(p, o)
	if err != nil {
		return nil, err
	}
	jobs, events, workflows, buildDiags, warnings, err := build(ctx, p, base)
	if err != nil {
		return nil, err
	}
	if ds := laterStage(loadDiags, buildDiags); len(ds) > 0 {
		return nil, ds
	}
	res := &Result{Project: p, Unlocked: unlocked, Warnings: warnings}
	files, err := renderJobs(ctx, p.Package, jobs)
	if err != nil {
		return nil, err
	}
	for i, j := range jobs {
		res.Files = append(res.Files, File{Path: filepath.Join(p.Out, j.Spec.Kind+".jobc.go"), Content: files[i]})
	}
	for _, e := range events {
		b, err := golang.EventFile(p.Package, e)
		if err != nil {
			return nil, fmt.Errorf("jobc: generate event %s: %w", e.Spec.Name, err)
		}
		res.Files = append(res.Files, File{Path: filepath.Join(p.Out, e.Spec.Name+EventFileSuffix), Content: b})
	}
	for _, w := range workflows {
		b, err := golang.WorkflowFile(p.Package, w)
		if err != nil {
			return nil, fmt.Errorf("jobc: generate workflow %s: %w", w.Spec.Name, err)
		}
		res.Files = append(res.Files, File{Path: filepath.Join(p.Out, w.Spec.Name+WorkflowFileSuffix), Content: b})
	}
	b, err := golang.CatalogFile(p.Package, p.File, jobs, events, workflows)
	if err != nil {
		return nil, fmt.Errorf("jobc: generate catalogue: %w", err)
	}
	res.Files = append(res.Files, File{Path: filepath.Join(p.Out, CatalogFileName), Content: b})
	if f, ok, err := testFile(p, jobs); err != nil {
		return nil, err
	} else if ok {
		res.Files = append(res.Files, f)
	}
	if p.Producers.SQL != "" {
		f, err := sqlProducers(p, jobs, workflows)
		if err != nil {
			return nil, err
		}
		res.Files = append(res.Files, f)
	}
	if p.Producers.TypeScript != "" {
		f, err := typescriptFile(p, jobs, workflows)
		if err != nil {
			return nil, err
		}
		res.Files = append(res.Files, f)
	}
	sort.Slice(res.Files, func(i, j int) bool { return res.Files[i].Path < res.Files[j].Path })
	return res, nil
}

// TestDir is the directory, relative to the project, of the typed test helpers of a
// project whose generated package is in out: <out>/<package>test (golang.TestPackage).
func TestDir(p *spec.Project) string { return filepath.Join(p.Out, golang.TestPackage(p.Package)) }

// testFile renders the typed test helpers' package (golang.TestFile), when there is a
// job type to help with and out is in a Go module, whose path the helpers import the
// generated package by.
func testFile(p *spec.Project, jobs []golang.Job) (File, bool, error) {
	if len(jobs) == 0 {
		return File{}, false, nil
	}
	importPath, _, err := gomod.ImportPath(filepath.Join(p.Dir, p.Out))
	if err != nil || importPath == "" {
		return File{}, false, err
	}
	b, err := golang.TestFile(p.Package, importPath, p.File, jobs)
	if err != nil {
		return File{}, false, fmt.Errorf("jobc: generate the test helpers: %w", err)
	}
	return File{Path: filepath.Join(TestDir(p), CatalogFileName), Content: b}, true, nil
}

// sqlProducers renders the SQL producers file (producers.sql in the spec).
func sqlProducers(p *spec.Project, jobs []golang.Job, workflows []golang.Workflow) (File, error) {
	in := make([]sql.Job, len(jobs))
	for i, j := range jobs {
		in[i] = sql.Job{Spec: j.Spec, Schema: writeSchema(j.Versions, j.Spec.Payload.WriteVersion)}
	}
	var wfs []sql.Workflow
	for _, w := range workflows {
		def, err := workflowDefinition(jobs, w)
		if err != nil {
			return File{}, err
		}
		sw := sql.Workflow{Spec: w.Spec, Definition: def, Input: writeSchema(w.Versions, w.Spec.Input.WriteVersion), Signals: map[string]string{}}
		for _, g := range w.Signals {
			sw.Signals[g.Spec.Name] = writeSchema(g.Versions, g.Spec.Payload.WriteVersion)
		}
		wfs = append(wfs, sw)
	}
	b, diags := sql.File(p, in, wfs)
	if len(diags) > 0 {
		return File{}, diags.Sorted()
	}
	return File{Path: filepath.FromSlash(p.Producers.SQL), Content: b}, nil
}

// writeSchema is the canonical schema of version write of versions.
func writeSchema(versions []golang.Version, write int) string {
	for _, v := range versions {
		if v.Spec.Number == write {
			return v.Schema
		}
	}
	return ""
}

// workflowDefinition is the definition Go's StartWorkflow records for w, made by the
// runtime itself (runtime.WorkflowType.Definition) from the write versions of the
// input, the signals and the steps' jobs and results, so that a workflow the SQL
// producers start runs exactly as one Go starts.
func workflowDefinition(jobs []golang.Job, w golang.Workflow) ([]byte, error) {
	fail := func(err error) ([]byte, error) {
		return nil, fmt.Errorf("jobc: the definition of workflow %s: %w", w.Spec.Name, err)
	}
	types := map[string]*runtime.JobType{}
	for _, j := range jobs {
		t := runtime.JobType{Kind: j.Spec.Kind, Queue: j.Spec.Queue, Priority: j.Spec.Priority, MaxAttempts: j.Spec.MaxAttempts,
			WriteVersion: j.Spec.Payload.WriteVersion,
			Versions:     []runtime.Version{{Number: j.Spec.Payload.WriteVersion, Schema: writeSchema(j.Versions, j.Spec.Payload.WriteVersion)}}}
		if r := j.Spec.Result; r != nil {
			t.ResultWriteVersion = r.WriteVersion
			t.ResultVersions = []runtime.Version{{Number: r.WriteVersion, Schema: writeSchema(j.Result, r.WriteVersion)}}
		}
		jt, err := runtime.NewJobType(t)
		if err != nil {
			return fail(err)
		}
		types[j.Spec.Kind] = jt
	}
	t := runtime.WorkflowType{Name: w.Spec.Name, InputWriteVersion: w.Spec.Input.WriteVersion,
		InputVersions: []runtime.Version{{Number: w.Spec.Input.WriteVersion, Schema: writeSchema(w.Versions, w.Spec.Input.WriteVersion)}}}
	if w.Spec.OnFailure == "continue" {
		t.OnFailure = runtime.OnFailureContinue
	}
	for _, g := range w.Signals {
		wv := g.Spec.Payload.WriteVersion
		t.Signals = append(t.Signals, runtime.Signal{Name: g.Spec.Name, WriteVersion: wv,
			Versions: []runtime.Version{{Number: wv, Schema: writeSchema(g.Versions, wv)}}})
	}
	for _, s := range w.Spec.Steps {
		st := runtime.Step{Name: s.Name, After: s.After, Job: types[s.Job], ForEach: s.ForEach, Sleep: s.Sleep}
		if s.OnItemFailure == "continue" { // as the generated Go declares it
			st.OnItemFailure = runtime.OnItemFailureContinue
		}
		if s.Map != nil {
			st.Map = map[string]string{}
			for _, m := range s.Map {
				st.Map[m.To] = m.From
			}
		}
		if s.Wait != nil {
			st.Wait = &runtime.Wait{Signal: s.Wait.Signal, Timeout: s.Wait.Timeout}
		}
		t.Steps = append(t.Steps, st)
	}
	wt, err := runtime.NewWorkflowType(t)
	if err != nil {
		return fail(err)
	}
	return wt.Definition(), nil
}

// laterStage adds the diagnostics of a later stage to those of an earlier one, leaving
// out those about a field (file and path) the earlier stage already reported: a $ref
// that could not be loaded is not also reported as a $ref that has no Go type.
func laterStage(earlier, later spec.Diagnostics) spec.Diagnostics {
	type field struct{ file, path string }
	reported := map[field]bool{}
	for _, d := range earlier {
		reported[field{d.File, d.Path}] = true
	}
	out := append(spec.Diagnostics(nil), earlier...)
	for _, d := range later {
		if !reported[field{d.File, d.Path}] {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out.Sorted()
}

// renderJobs renders each job's file, in parallel.
func renderJobs(ctx context.Context, pkg string, jobs []golang.Job) ([][]byte, error) {
	out := make([][]byte, len(jobs))
	errs := make([]error, len(jobs))
	parallel(len(jobs), func(i int) {
		if out[i], errs[i] = golang.JobFile(pkg, jobs[i]); errs[i] != nil {
			errs[i] = fmt.Errorf("jobc: generate %s: %w", jobs[i].Spec.Kind, errs[i])
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, errors.Join(errs...)
}

// build converts every job's payload versions into Go types and checks the names the
// generated package will declare. The project may have failed to load cleanly; every
// job is still converted as far as it goes. The jobs are ready to emit only when the
// diagnostics are empty; the warnings are the contract findings that do not stop
// generation (see Result.Warnings); the error is for a cancelled ctx.
func build(ctx context.Context, p *spec.Project, base *contract.LockFile) ([]golang.Job, []golang.Event, []golang.Workflow, spec.Diagnostics, contract.Findings, error) {
	built := make([]builtJob, len(p.Jobs))
	parallel(len(p.Jobs), func(i int) { built[i] = buildJob(p, p.Jobs[i]) })
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, nil, nil, err
	}
	var diags spec.Diagnostics
	var warnings contract.Findings
	ids := names.CatalogueOwned()
	if len(p.Events) > 0 {
		for _, id := range names.EventCatalogue() {
			ids = append(ids, names.Owned{Ident: id})
		}
	}
	var jobs []golang.Job
	for _, b := range built {
		diags = append(diags, b.diags...)
		// A job whose schemas failed to convert still declares its fixed names (and
		// those of the versions that did convert), so its collisions show up too.
		ids = append(ids, names.JobOwned(b.job.Spec, b.job.Names.Idents(b.versions))...)
		if b.job.Spec.Result != nil {
			ids = append(ids, names.JobOwned(b.job.Spec, b.job.Names.Result().Idents(b.results))...)
		}
		jobs = append(jobs, b.job)
	}
	var events []golang.Event
	for _, se := range p.Events {
		e, versions, ds := buildEvent(p, se)
		diags = append(diags, ds...)
		ids = append(ids, names.EventOwned(se, e.Names.Idents(versions))...)
		events = append(events, e)
	}
	if len(p.Workflows) > 0 {
		for _, id := range names.WorkflowCatalogue() {
			ids = append(ids, names.Owned{Ident: id})
		}
	}
	var workflows []golang.Workflow
	var tsIDs []names.Owned // the workflows' TypeScript identifiers
	for _, sw := range p.Workflows {
		w := golang.Workflow{Spec: sw, Names: names.ForWorkflow(sw.Name)}
		vs, nvs, ds := convertVersions(p, sw.Input.Versions, w.Names.Version)
		w.Versions = vs
		for _, st := range sw.Steps {
			var n names.Job
			if st.Job != "" {
				n = names.ForKind(st.Job)
			}
			w.Steps = append(w.Steps, n)
		}
		diags = append(diags, ds...)
		ids = append(ids, names.WorkflowOwned(sw, w.Names.Idents(nvs))...)
		tsIDs = append(tsIDs, names.WorkflowOwned(sw, w.Names.TSIdents(nvs))...)
		for _, sg := range sw.Signals {
			g := golang.Signal{Spec: sg, Names: w.Names.Signal(sg.Name)}
			gvs, gnvs, ds := convertVersions(p, sg.Payload.Versions, g.Names.Version)
			g.Versions = gvs
			diags = append(diags, ds...)
			ids = append(ids, names.WorkflowOwned(sw, g.Names.Idents(gnvs))...)
			tsIDs = append(tsIDs, names.WorkflowOwned(sw, g.Names.TSIdents(gnvs))...)
			w.Signals = append(w.Signals, g)
		}
		workflows = append(workflows, w)
	}
	diags = append(diags, names.Collisions(ids)...)
	diags = append(diags, typescriptErrors(p, built, tsIDs)...)
	if outs := outputErrors(p); len(outs) > 0 {
		// The hand-written upcasts that the contract check reads are in out, which
		// leads outside the project: nothing there is read.
		diags = append(diags, outs...)
	} else {
		errs, warns := contractFindings(p, base)
		diags = append(diags, errs...)
		warnings = warns
	}
	if len(diags) > 0 {
		return nil, nil, nil, diags, nil, nil
	}
	return jobs, events, workflows, nil, warnings, nil
}

// buildEvent converts one event's payload versions and resolves its subscribers: the
// job version a typed subscriber stores the event as.
func buildEvent(p *spec.Project, se *spec.Event) (golang.Event, []names.Version, spec.Diagnostics) {
	e := golang.Event{Spec: se, Names: names.ForEvent(se.Name)}
	vs, nvs, diags := convertVersions(p, se.Payload.Versions, e.Names.Version)
	e.Versions = vs
	for _, s := range se.Subscribers {
		j := p.Job(s.Job)
		if j == nil {
			continue // reported by spec.Load
		}
		sub := golang.Subscriber{Spec: s, Job: names.ForKind(j.Kind)}
		if s.Map == nil {
			sub.Version, _ = contract.SubscriberVersion(se, j) // 0 is reported by the contract check
		}
		e.Subscribers = append(e.Subscribers, sub)
	}
	return e, nvs, diags
}

// builtJob is one job converted to Go types as far as it goes, and the problems found.
type builtJob struct {
	job      golang.Job // complete only when diags is empty
	versions []names.Version
	results  []names.Version // of the result contract, if any
	diags    spec.Diagnostics
}

// buildJob converts one job's payload versions; it touches nothing shared.
func buildJob(p *spec.Project, sj *spec.Job) builtJob {
	j := golang.Job{Spec: sj, Names: names.ForKind(sj.Kind)}
	for _, c := range sj.Errors {
		for _, pc := range p.Classes {
			if pc.Name == c {
				j.Classes = append(j.Classes, pc)
			}
		}
	}
	b := builtJob{diags: j.Names.MethodCollisions(sj, j.Classes)}
	vs, nvs, ds := convertVersions(p, sj.Payload.Versions, j.Names.Version)
	j.Versions, b.versions = vs, nvs
	b.diags = append(b.diags, ds...)
	if sj.Result != nil {
		rs, nrs, ds := convertVersions(p, sj.Result.Versions, j.Names.Result().Version)
		j.Result, b.results = rs, nrs
		b.diags = append(b.diags, ds...)
	}
	b.job = j
	return b
}

// convertVersions converts payload versions into Go types, the root struct of each
// named by structName; it returns the versions that converted, what the identifiers
// of every version depend on, and the problems found. Jobs and events share it.
func convertVersions(p *spec.Project, svs []*spec.Version, structName func(int) string) ([]golang.Version, []names.Version, spec.Diagnostics) {
	var out []golang.Version
	var nvs []names.Version
	var diags spec.Diagnostics
	for i, sv := range svs {
		nv := names.Version{Number: sv.Number}
		if i > 0 {
			nv.HandWritten = needsHandWrittenUpcast(svs[i-1], sv)
		}
		payload, ds := gotype.Convert(structName(sv.Number), sv.Schema, p.Types)
		diags = append(diags, ds...)
		canon, err := sv.Schema.Canonical()
		if err != nil {
			diags = append(diags, spec.Diagnostic{Pos: sv.Pos, Path: sv.Schema.Path, Message: err.Error()})
		}
		nv.Payload = payload
		nvs = append(nvs, nv)
		if payload == nil || err != nil {
			continue
		}
		out = append(out, golang.Version{Spec: sv, Payload: payload, Schema: string(canon), HandWritten: nv.HandWritten})
	}
	if len(out) < len(svs) {
		// Not emitted (diags has the failure), and the version that failed may have
		// declared types a later one shares.
		for i := range out {
			out[i].Declared = out[i].Payload
		}
		return out, nvs, diags
	}
	payloads := make([]*gotype.Payload, len(out))
	for i, v := range out {
		payloads[i] = v.Payload
	}
	for i, p := range gotype.Share(payloads) {
		out[i].Declared, nvs[i].Declared = p, p
	}
	return out, nvs, diags
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

// baseline returns the released contracts to hold p to: o.Baseline, else the project's
// jobc.lock; unlocked is true when there is neither.
func baseline(p *spec.Project, o Options) (base *contract.LockFile, unlocked bool, err error) {
	if o.Baseline != nil {
		return o.Baseline, false, nil
	}
	l, err := contract.LoadLock(p.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	return l, false, nil
}

// contractFindings reports what generated code would turn into failed jobs: declared
// changes that do not upcast every payload of the previous version into a valid one,
// and a released version (in base) edited in place, whose queued jobs no longer
// decode. A released kind, alias or event gone from the spec is a warning, with the
// finding `jobc check` fails on: its queued work would never run, but `jobc check` is
// what gates a deploy, and generate keeps writing code while the spec is on its way.
// A missing hand-written upcast is left to the compiler (and `jobc check`), and
// write_version to `jobc check`.
func contractFindings(p *spec.Project, base *contract.LockFile) (spec.Diagnostics, contract.Findings) {
	if !confine.Lexical(p.Out) {
		// Reported by spec.Load; the hand-written upcasts are looked up in out, and a
		// directory outside the project is not one to read.
		return nil, nil
	}
	findings, err := contract.Verify(p, base)
	if err != nil {
		return spec.Diagnostics{{Pos: spec.Pos{File: p.File, Line: 1, Col: 1}, Message: err.Error()}}, nil
	}
	var out spec.Diagnostics
	var warnings contract.Findings
	for _, f := range findings {
		switch f.Rule {
		case contract.RuleChangesIncorrect, contract.RuleChangeDefaultInvalid, contract.RuleChangeNotApplicable,
			contract.RuleReleasedVersionChanged, contract.RuleSubscriberIncompatible, contract.RuleStepIncompatible:
			d := f.Diagnostic
			d.Message += " [" + f.Rule + "]"
			out = append(out, d)
		case contract.RuleKindRemoved, contract.RuleEventRemoved, contract.RuleResultRemoved:
			warnings = append(warnings, f)
		}
	}
	return out, warnings
}

// outputErrors reports the out directory and producers files that lead outside the
// project through a symbolic link (spec.Load reports those that do by their path).
// Write and Diff refuse them too; reporting them here gives the position in the spec,
// and keeps Generate from reading the hand-written files of such an out.
func outputErrors(p *spec.Project) spec.Diagnostics {
	var ds spec.Diagnostics
	for _, o := range []struct {
		name, field string
		pos         spec.Pos
	}{
		{p.Out, "out", p.OutPos},
		{p.Producers.SQL, "producers.sql", p.Producers.SQLPos},
		{p.Producers.TypeScript, "producers.typescript", p.Producers.TypeScriptPos},
	} {
		if o.name == "" || !confine.Lexical(o.name) {
			continue
		}
		_, err := confine.Resolve(p.Dir, filepath.FromSlash(o.name))
		var out *confine.OutsideError
		if errors.As(err, &out) {
			ds = append(ds, spec.Diagnostic{Pos: o.pos, Path: o.field, Message: fmt.Sprintf("%v: jobc writes only inside the project", err)})
		}
	}
	return ds
}

// needsHandWrittenUpcast reports whether version cur needs an upcast the user writes:
// it declares no changes, and it does not accept every payload its predecessor accepted.
// `jobc check` decides the same way (contract.Check).
func needsHandWrittenUpcast(prev, cur *spec.Version) bool {
	return contract.NeedsHandWrittenUpcast(prev, cur)
}

// owned reports whether a file in the output directory belongs to the generator; name
// is relative to the project directory.
func owned(pr *project, name string) bool {
	base := filepath.Base(name)
	if base != CatalogFileName && !strings.HasSuffix(base, ".jobc.go") {
		return false
	}
	b, err := pr.readFile(name)
	return err == nil && bytes.HasPrefix(b, []byte("// "+golang.Header))
}

// WriteOptions change how Write treats the files on disk.
type WriteOptions struct {
	// GoGenerate is the go generate run jobc is part of, nil outside go generate. A
	// stale file it may still read is emptied rather than deleted (see GoGenerate).
	GoGenerate *GoGenerate
}

// Write writes the result into the project directory and removes generated files that
// the spec no longer produces. Files are written only when their content changed.
// Nothing is written, read or removed outside the project: see project.
func Write(res *Result) error { return WriteWith(res, WriteOptions{}) }

// WriteWith is Write with options.
func WriteWith(res *Result, o WriteOptions) error {
	p := res.Project
	pr, err := openProject(res)
	if err != nil {
		return err
	}
	defer pr.close()
	if err := pr.mkdirAll(p.Out); err != nil {
		return err
	}
	want := map[string]bool{}
	for _, f := range res.Files {
		want[filepath.Clean(f.Path)] = true
		if dir := filepath.Dir(f.Path); dir != "." {
			if err := pr.mkdirAll(dir); err != nil { // the producers' directories
				return err
			}
		}
		if err := pr.writeIfChanged(f.Path, f.Content); err != nil {
			return err
		}
	}
	extra, err := extraFiles(pr, p, want)
	if err != nil {
		return err
	}
	out := filepath.Join(p.Dir, p.Out)
	var directive []string // how a tombstone reruns jobc
	if o.GoGenerate != nil && len(extra) > 0 {
		// Read before anything is deleted: the running directive may be in a
		// tombstone that this run deletes.
		directive = o.GoGenerate.rerun(out, p.Dir)
	}
	for _, name := range extra {
		if g := o.GoGenerate; g != nil && !g.hasRead(filepath.Join(p.Dir, name)) {
			stone := tombstone(p.Package, directive)
			if filepath.Dir(name) == TestDir(p) {
				// The test helpers' package holds no directive: one that declares
				// nothing is enough, and the next run deletes it.
				stone = tombstone(golang.TestPackage(p.Package), nil)
			}
			if err := pr.writeIfChanged(name, stone); err != nil {
				return err
			}
			continue
		}
		if err := pr.remove(name); err != nil {
			return err
		}
	}
	return nil
}

// project is the project directory, the only place Write and Diff touch. A spec comes
// from whoever wrote it, and a pull request may commit a symbolic link as well as a
// jobc.yaml: the out directory or a producers file could be a link to any file of the
// machine that runs jobc. So every name is first resolved (confine.Resolve), which
// refuses one that leads out with an error naming the link, and the path it resolves
// to is then opened through an *os.Root, which refuses any link that leads out at the
// moment of the open (one that changed since the check included). A link that stays
// inside the project is followed.
type project struct {
	dir  string
	root *os.Root
}

// openProject checks the paths of res and opens its project directory.
func openProject(res *Result) (*project, error) {
	p := res.Project
	pr := &project{dir: p.Dir}
	for _, name := range append([]string{p.Out}, filePaths(res.Files)...) {
		if _, err := pr.resolve(name); err != nil {
			return nil, err
		}
	}
	root, err := os.OpenRoot(p.Dir)
	if err != nil {
		return nil, fmt.Errorf("jobc: %w", err)
	}
	pr.root = root
	return pr, nil
}

func (pr *project) close() { pr.root.Close() }

// resolve returns the path that name (relative to the project) reaches, with every
// link on the way resolved, relative to the project.
func (pr *project) resolve(name string) (string, error) {
	r, err := confine.Resolve(pr.dir, name)
	if err != nil {
		return "", fmt.Errorf("jobc: refusing to use %s: %w", filepath.ToSlash(name), err)
	}
	if r == "" {
		r = "."
	}
	return r, nil
}

func (pr *project) readFile(name string) ([]byte, error) {
	r, err := pr.resolve(name)
	if err != nil {
		return nil, err
	}
	return pr.root.ReadFile(r)
}

// readDir lists directory name; a missing one has no entries.
func (pr *project) readDir(name string) ([]fs.DirEntry, error) {
	r, err := pr.resolve(name)
	if err != nil {
		return nil, err
	}
	f, err := pr.root.Open(r)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("jobc: read %s: %w", filepath.Join(pr.dir, name), err)
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("jobc: read %s: %w", filepath.Join(pr.dir, name), err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	return entries, nil
}

func (pr *project) mkdirAll(name string) error {
	r, err := pr.resolve(name)
	if err != nil {
		return err
	}
	if err := pr.root.MkdirAll(r, 0o755); err != nil {
		return fmt.Errorf("jobc: create %s: %w", filepath.Join(pr.dir, name), err)
	}
	return nil
}

// writeIfChanged writes content to name unless the file holds it already.
func (pr *project) writeIfChanged(name string, content []byte) error {
	r, err := pr.resolve(name)
	if err != nil {
		return err
	}
	if old, err := pr.root.ReadFile(r); err == nil && bytes.Equal(old, content) {
		return nil
	}
	if err := pr.root.WriteFile(r, content, 0o644); err != nil {
		return fmt.Errorf("jobc: write %s: %w", filepath.Join(pr.dir, name), err)
	}
	return nil
}

func (pr *project) remove(name string) error {
	r, err := pr.resolve(name)
	if err != nil {
		return err
	}
	if err := pr.root.Remove(r); err != nil {
		return fmt.Errorf("jobc: remove stale %s: %w", filepath.Join(pr.dir, name), err)
	}
	return nil
}

func filePaths(files []File) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Path
	}
	return out
}

// extraFiles lists the generated files in p's out directory and its test helpers'
// (TestDir) that want does not hold, by their names relative to the project, sorted.
func extraFiles(pr *project, p *spec.Project, want map[string]bool) ([]string, error) {
	var extra []string
	for _, dir := range []string{p.Out, TestDir(p)} {
		entries, err := pr.readDir(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			name := filepath.Join(dir, e.Name())
			if !e.IsDir() && !want[name] && owned(pr, name) {
				extra = append(extra, name)
			}
		}
	}
	sort.Strings(extra)
	return extra, nil
}
