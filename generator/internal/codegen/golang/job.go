package golang

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/format"
	"regexp"
	"strings"
	"time"

	. "github.com/dave/jennifer/jen"

	"github.com/jobc-dev/jobc/generator/internal/gotype"
	"github.com/jobc-dev/jobc/generator/internal/names"
	"github.com/jobc-dev/jobc/generator/spec"
)

const rt = gotype.RuntimeImport

// JobFile renders the Go file of one job type.
func JobFile(pkg string, j Job) ([]byte, error) {
	f := newFile(pkg, j.Spec.Pos.File)
	importNames(f, j.Imports())
	s := j.Spec
	newest := j.Versions[len(j.Versions)-1]
	write := j.Versions[0]
	for _, v := range j.Versions {
		if v.Spec.Number == s.Payload.WriteVersion {
			write = v
		}
	}
	n := j.Names
	typeVar := n.TypeVar()
	jobType := n.Handle()

	f.Commentf("%s is the kind under which %s jobs are stored.", n.KindConst(), s.Kind)
	f.Const().Id(n.KindConst()).Op("=").Lit(s.Kind)

	for _, v := range j.Versions {
		decls(f, v.Declared, versionDoc(j, v), filledPayload)
	}
	f.Commentf("%s is the newest %s payload (version %d): the one handlers receive.", n.Payload(), s.Kind, newest.Spec.Number)
	f.Type().Id(n.Payload()).Op("=").Id(newest.Payload.Root)

	r := n.Result()
	var resultWrite Version // the result version handlers return; zero without a result
	if len(j.Result) > 0 {
		for _, v := range j.Result {
			decls(f, v.Declared, fmt.Sprintf("%s is version %d of the %s result.", r.Version(v.Spec.Number), v.Spec.Number, s.Kind), filledResult)
			if v.Spec.Number == s.Result.WriteVersion {
				resultWrite = v
			}
		}
		newestResult := j.Result[len(j.Result)-1]
		f.Commentf("%s is the newest %s result (version %d): the one %s returns.", r.Payload(), s.Kind, newestResult.Spec.Number, r.Get())
		f.Type().Id(r.Payload()).Op("=").Id(newestResult.Payload.Root)
	}

	f.Commentf("%s describes %s to the runtime.", typeVar, s.Kind)
	f.Var().Id(typeVar).Op("=").Qual(rt, "MustJobType").Call(Qual(rt, "JobType").Add(ordered(jobTypeFields(j)...)))

	enqueueDoc := fmt.Sprintf("%s inserts %s %s job through db. Pass the transaction of the business change "+
		"that needs the job: the job then exists if and only if that transaction commits. The payload is checked "+
		"against version %d of its schema first; an invalid payload returns a *runtime.PayloadError and inserts nothing.",
		n.Enqueue(), names.Article(s.Kind), s.Kind, write.Spec.Number)
	switch {
	case s.Unique != nil && s.Unique.OnConflict == spec.OnConflictReplace:
		enqueueDoc += " While another job holds the same unique key, waiting to run, nothing is inserted either: " +
			"that job's payload, metadata and run time are replaced by these, and the result names it and says " +
			"Replaced. A running job is never changed: once it runs, another job is inserted."
	case s.Unique != nil:
		enqueueDoc += " While another job holds the same unique key, nothing is inserted either: the result names " +
			"that job and says Duplicate."
	}
	if s.Deprecated != "" {
		enqueueDoc = joinDoc(enqueueDoc, "Deprecated: "+s.Deprecated)
	}
	writeDoc(f, enqueueDoc)
	f.Add(signature(n.Enqueue(), []Code{
		Id("ctx").Qual("context", "Context"),
		Id("db").Qual(rt, "DBTX"),
		Id("p").Id(write.Payload.Root),
		Id("opts").Op("...").Qual(rt, "EnqueueOption"),
	}, Qual(rt, "Enqueued"), Error()).Block(
		Return(Qual(rt, "Enqueue").Call(Id("ctx"), Id("db"), Id(typeVar), Id("p"), Id("opts").Op("..."))),
	))

	// What runtime.EnqueueMany does: an INSERT ... SELECT FROM unnest per 20,000 jobs,
	// or one insert per job through the gate that skips duplicates for unique jobs and
	// with a dedup key. Through a pool each statement commits on its own.
	how := "one statement per 20,000 jobs (one per job with runtime.WithDedupKey)"
	switch {
	case s.Unique != nil && s.Unique.OnConflict == spec.OnConflictReplace:
		how = "one statement per job, each checking its unique key: a job whose key a waiting job holds is " +
			"not inserted but replaces that job's payload and run time, and its result names that job and says Replaced"
	case s.Unique != nil:
		how = "one statement per job, each checking its unique key: a job whose key another job holds is " +
			"not inserted, and its result names that job and says Duplicate"
	}
	manyDoc := fmt.Sprintf("%s inserts many %s jobs through db, with %s. Every payload is checked against "+
		"version %d of its schema first: if any is invalid, it returns a *runtime.PayloadError naming its index "+
		"and inserts nothing. Pass a transaction for all of the jobs or none: through a pool, each statement "+
		"commits on its own. The options apply to every job.", n.EnqueueMany(), s.Kind, how, write.Spec.Number)
	if s.Deprecated != "" {
		manyDoc = joinDoc(manyDoc, "Deprecated: "+s.Deprecated)
	}
	writeDoc(f, manyDoc)
	f.Add(signature(n.EnqueueMany(), []Code{
		Id("ctx").Qual("context", "Context"),
		Id("db").Qual(rt, "DBTX"),
		Id("ps").Index().Id(write.Payload.Root),
		Id("opts").Op("...").Qual(rt, "EnqueueOption"),
	}, Index().Qual(rt, "Enqueued"), Error()).Block(
		Return(Qual(rt, "EnqueueMany").Call(Id("ctx"), Id("db"), Id(typeVar), Id("ps"), Id("opts").Op("..."))),
	))

	writeDoc(f, fmt.Sprintf("%s is the handle %s %s handler receives: the job's id, attempt, idempotency key and logger, "+
		"and a constructor for each error class the job declares.", jobType, names.Article(s.Kind), s.Kind))
	f.Type().Id(jobType).Struct(Op("*").Qual(rt, "Job"))
	for _, c := range j.Classes {
		classMethod(f, jobType, c)
	}

	handlerDoc := fmt.Sprintf("%s handles %s jobs.", n.Handler(), s.Kind)
	if resultWrite.Payload != nil {
		handlerDoc += fmt.Sprintf(" With a nil error, the %s it returns is stored with the job as it completes "+
			"(version %d of the result), for %s; a result that does not match its schema is the attempt's error "+
			"(class invalid_result), and the job is retried.", resultWrite.Payload.Root, resultWrite.Spec.Number, r.Get())
	}
	if s.Transactional {
		handlerDoc += " The job is transactional: tx also marks the job completed when the handler returns nil, " +
			"so its writes happen exactly once; an error rolls them back, and the job is retried or failed as " +
			"its error class says."
	}
	if s.Description != "" {
		handlerDoc = joinDoc(handlerDoc, s.Description)
	}
	writeDoc(f, handlerDoc)
	params := []Code{Id("ctx").Qual("context", "Context")}
	inner := []Code{Id("ctx").Qual("context", "Context")}
	args := []Code{Id("ctx")}
	handle := "Handle"
	if s.Transactional {
		params = append(params, Id("tx").Qual("github.com/jackc/pgx/v5", "Tx"))
		inner = append(inner, Id("tx").Qual("github.com/jackc/pgx/v5", "Tx"))
		args = append(args, Id("tx"))
		handle = "HandleTx"
	}
	params = append(params, Id("job").Id(jobType), Id("p").Id(n.Payload()))
	inner = append(inner, Id("job").Op("*").Qual(rt, "Job"), Id("p").Id(n.Payload()))
	args = append(args, Id(jobType).Values(Id("job")), Id("p"))
	// What a handler returns: an error, or the result's write version and an error.
	returns := func(s *Statement) *Statement { return s.Error() }
	if resultWrite.Payload != nil {
		returns = func(s *Statement) *Statement { return s.Params(Id(resultWrite.Payload.Root), Error()) }
		handle += "Result"
	}
	// The method sits one tab in; measured as a func declaration, less its "func ".
	method := tooLong(1-len("func "), returns(Func().Id(n.HandleMethod()).Params(params...)))
	f.Type().Id(n.Handler()).Interface(returns(Id(n.HandleMethod()).Custom(items(method, "(", ")"), params...)))

	handleArgs := []Code{Id("w"), Id(typeVar), returns(Func().Params(inner...)).Block(
		Return(Id("h").Dot(n.HandleMethod()).Call(args...)),
	)}
	handleCall := Qual(rt, handle).Call(handleArgs...)
	f.Commentf("%s makes w run h for %s jobs.", n.RegisterFunc(), s.Kind)
	f.Func().Id(n.RegisterFunc()).Params(Id("w").Op("*").Qual(rt, "Worker"), Id("h").Id(n.Handler())).Error().Block(
		Return(Qual(rt, handle).Custom(items(tooLong(len("\treturn "), handleCall), "(", ")"), handleArgs...)),
	)

	if resultWrite.Payload != nil {
		writeDoc(f, fmt.Sprintf("%s reads the result of %s job id through db: the newest result version (%s), "+
			"upcast from the version its handler stored. It returns an error wrapping runtime.ErrNoResult, "+
			"naming the job's state, until the job has completed, and runtime.ErrJobNotFound for an id no job "+
			"has (or had, before retention pruned it).", r.Get(), s.Kind, r.Payload()))
		f.Add(signature(r.Get(), []Code{
			Id("ctx").Qual("context", "Context"),
			Id("db").Qual(rt, "DBTX"),
			Id("id").Int64(),
		}, Id(r.Payload()), Error()).Block(
			Return(Qual(rt, "JobResult").Types(Id(r.Payload())).Call(Id("ctx"), Id("db"), Id(typeVar), Id("id"))),
		))
	}
	return render(f)
}

func versionDoc(j Job, v Version) string {
	doc := fmt.Sprintf("%s is version %d of the %s payload.", j.Names.Version(v.Spec.Number), v.Spec.Number, j.Spec.Kind)
	if d := strings.TrimSpace(j.Spec.Description); d != "" && v.Spec.Number == j.Versions[len(j.Versions)-1].Spec.Number {
		doc = joinDoc(doc, d)
	}
	return doc
}

func jobTypeFields(j Job) []Code {
	s := j.Spec
	fs := []Code{kv("Kind", Id(j.Names.KindConst()))}
	if len(s.Aliases) > 0 {
		fs = append(fs, kv("Aliases", stringSlice(s.Aliases)))
	}
	fs = append(fs,
		kv("Queue", Lit(s.Queue)),
		kv("Priority", Lit(s.Priority)),
		kv("MaxAttempts", Lit(s.MaxAttempts)),
	)
	if s.Timeout > 0 {
		fs = append(fs, kv("Timeout", duration(s.Timeout)))
	}
	// A field's value starts after a tab and the key, which gofmt pads to the longest
	// key of its block; WriteVersion is always there, Transactional is longer.
	lead := 1 + len("WriteVersion: ")
	switch {
	case s.Result != nil:
		lead = 1 + len("ResultWriteVersion: ")
	case s.Transactional:
		lead = 1 + len("Transactional: ")
	}
	fs = append(fs, kv("Backoff", backoff(s.Backoff, tooLong(lead+len(","), backoff(s.Backoff, false)))))
	if len(j.Classes) > 0 {
		fs = append(fs, kv("Classes", Index().Qual(rt, "ErrorClass").Add(ordered(classLits(j.Classes)...))))
	}
	if s.DefaultError != "" {
		fs = append(fs, kv("DefaultClass", Lit(s.DefaultError)))
	}
	if s.Transactional {
		fs = append(fs, kv("Transactional", True()))
	}
	if u := s.Unique; u != nil {
		states := make([]Code, len(u.While))
		for i, st := range u.While {
			states[i] = Qual(rt, "State"+gotype.GoName(st))
		}
		unique := func(multi bool) *Statement {
			while := Index().Qual(rt, "State").Values(states...)
			if multi {
				// On its own line, two tabs in after the padded key "Fields: ".
				whileLead := 2 + len("Fields: ") + len(",")
				while = Index().Qual(rt, "State").Custom(items(tooLong(whileLead, while), "{", "}"), states...)
			}
			uf := []Code{kv("Fields", stringSlice(u.Key)), kv("While", while)}
			if u.Period > 0 {
				uf = append(uf, kv("Period", duration(u.Period)))
			}
			if u.OnConflict == spec.OnConflictReplace {
				uf = append(uf, kv("OnConflict", Qual(rt, "OnConflictReplace")))
			}
			return Op("&").Qual(rt, "Unique").Custom(items(multi, "{", "}"), uf...)
		}
		fs = append(fs, kv("Unique", unique(tooLong(lead+len(","), unique(false)))))
	}
	if f := s.Flow; f != nil {
		fs = append(fs, kv("Flow", flow(f, tooLong(lead+len(","), flow(f, false)))))
	}
	if f := s.QueueFlow; f != nil {
		fs = append(fs, kv("QueueFlow", flow(f, tooLong(lead+len(","), flow(f, false)))))
	}
	if sc := s.Schedule; sc != nil {
		fs = append(fs, kv("Schedule", Op("&").Qual(rt, "Schedule").Values(kv("Cron", Lit(sc.Cron)), kv("Timezone", Lit(sc.Timezone)))))
	}
	fs = append(fs, kv("WriteVersion", Lit(s.Payload.WriteVersion)))
	fs = append(fs, kv("Versions", versionsLit(j.Versions, j.Names.Upcast)))
	if s.Result != nil {
		fs = append(fs, kv("ResultWriteVersion", Lit(s.Result.WriteVersion)))
		fs = append(fs, kv("ResultVersions", versionsLit(j.Result, j.Names.Result().Upcast)))
	}
	return fs
}

// versionsLit renders the versions of a contract, each with its schema and the upcast
// into it (hand-written ones named by upcastName).
func versionsLit(vs []Version, upcastName func(int) string) Code {
	var versions []Code
	for i, v := range vs {
		vf := []Code{kv("Number", Lit(v.Spec.Number)), kv("Schema", schemaLit(v.Schema))}
		if i > 0 {
			if up := upcast(upcastName(v.Spec.Number), v); up != nil {
				vf = append(vf, kv("Upcast", up))
			}
		}
		versions = append(versions, ordered(vf...))
	}
	return Index().Qual(rt, "Version").Add(ordered(versions...))
}

func stringSlice(ss []string) Code {
	return Index().String().ValuesFunc(func(g *Group) {
		for _, s := range ss {
			g.Lit(s)
		}
	})
}

func classLits(cs []*spec.ErrorClass) []Code {
	out := make([]Code, len(cs))
	for i, c := range cs {
		out[i] = Values(classFields(c, false)...)
		// An entry sits two tabs in, measured as a composite literal less its type name.
		if tooLong(2+len(",")-len("T"), Id("T").Add(out[i])) {
			out[i] = Custom(items(true, "{", "}"), classFields(c, true)...)
		}
	}
	return out
}

// classFields renders the fields of an error class; in a class broken one field a
// line (multi), the backoff too is broken when its line passes maxLine.
func classFields(c *spec.ErrorClass, multi bool) []Code {
	fs := []Code{kv("Name", Lit(c.Name)), kv("Retry", Lit(c.Retry))}
	if c.Backoff != nil {
		// Three tabs in, after gofmt's padded key and "&", ending with a comma.
		lead := 3 + len("DelayFromError: &,")
		fs = append(fs, kv("Backoff", Op("&").Add(backoff(*c.Backoff, multi && tooLong(lead, backoff(*c.Backoff, false))))))
	}
	if c.DelayFromError {
		fs = append(fs, kv("DelayFromError", True()))
	}
	if c.MaxAttempts > 0 {
		fs = append(fs, kv("MaxAttempts", Lit(c.MaxAttempts)))
	}
	return fs
}

// upcast renders the upcast into version v: the hand-written function handWritten, or
// the declared changes; nil when the previous version's payloads are valid as they are.
func upcast(handWritten string, v Version) Code {
	if v.HandWritten {
		return Qual(rt, "UpcastFunc").Call(Id(handWritten))
	}
	var steps []Code
	for _, c := range v.Spec.Changes {
		switch c.Op {
		case spec.Rename:
			steps = append(steps, Qual(rt, "RenameField").Call(Lit(c.From), Lit(c.To)))
		case spec.Add:
			steps = append(steps, Qual(rt, "AddField").Call(Lit(c.Field), Index().Byte().Call(rawString(jsonText(c.Default)))))
		case spec.Remove:
			steps = append(steps, Qual(rt, "RemoveField").Call(Lit(c.Field)))
		}
	}
	if len(steps) == 0 {
		return nil
	}
	// The Upcast field sits three tabs in, after "Upcast: ", and ends with a comma.
	changes := Qual(rt, "Changes").Call(steps...)
	return Qual(rt, "Changes").Custom(items(tooLong(3+len("Upcast: ,"), changes), "(", ")"), steps...)
}

func classMethod(f *File, jobType string, c *spec.ErrorClass) {
	name := names.ClassMethod(c.Name)
	var what string
	switch {
	case !c.Retry:
		what = "the job fails at once, without retries, and stays visible as failed"
	case c.DelayFromError:
		what = "the job runs again after retryAfter"
	default:
		what = "the job runs again after a backoff delay"
	}
	doc := fmt.Sprintf("%s classifies err as %s: %s.", name, c.Name, what)
	if c.Description != "" {
		doc = joinDoc(doc, c.Description)
	}
	writeDoc(f, doc)
	if c.DelayFromError {
		f.Func().Params(Id(jobType)).Id(name).Params(Id("err").Error(), Id("retryAfter").Qual("time", "Duration")).Error().Block(
			Return(Qual(rt, "RetryAfter").Call(Lit(c.Name), Id("retryAfter"), Id("err"))),
		)
		return
	}
	f.Func().Params(Id(jobType)).Id(name).Params(Id("err").Error()).Error().Block(
		Return(Qual(rt, "Classify").Call(Lit(c.Name), Id("err"))),
	)
}

// backoff renders b, one field a line when multi.
func backoff(b spec.Backoff, multi bool) Code {
	kind := map[spec.BackoffKind]string{spec.Exponential: "BackoffExponential", spec.Linear: "BackoffLinear", spec.Constant: "BackoffConstant"}[b.Kind]
	fs := []Code{kv("Kind", Qual(rt, kind)), kv("Initial", duration(b.Initial))}
	if b.Max > 0 {
		fs = append(fs, kv("Max", duration(b.Max)))
	}
	if b.Jitter > 0 {
		fs = append(fs, kv("Jitter", Lit(b.Jitter)))
	}
	return Qual(rt, "Backoff").Custom(items(multi, "{", "}"), fs...)
}

// flow renders &runtime.Flow{...} with the fields f sets, one a line when multi.
func flow(f *spec.Flow, multi bool) Code {
	var fs []Code
	if len(f.By) > 0 {
		fs = append(fs, kv("By", stringSlice(f.By)))
	}
	if f.Concurrency > 0 {
		fs = append(fs, kv("Concurrency", Lit(f.Concurrency)))
	}
	if f.Rate.Limit > 0 {
		fs = append(fs, kv("Rate", Qual(rt, "Rate").Values(kv("Limit", Lit(f.Rate.Limit)), kv("Per", duration(f.Rate.Per)))))
	}
	if f.Fair {
		fs = append(fs, kv("Fair", True()))
	}
	if f.Sequence {
		fs = append(fs, kv("Sequence", True()))
	}
	return Op("&").Qual(rt, "Flow").Custom(items(multi, "{", "}"), fs...)
}

// duration renders d as a readable expression: 2 * time.Minute, 90 * time.Second.
func duration(d time.Duration) Code {
	units := []struct {
		d    time.Duration
		name string
	}{{time.Hour, "Hour"}, {time.Minute, "Minute"}, {time.Second, "Second"}, {time.Millisecond, "Millisecond"}}
	for _, u := range units {
		if d%u.d == 0 {
			if d == u.d {
				return Qual("time", u.name)
			}
			return Lit(int(d/u.d)).Op("*").Qual("time", u.name)
		}
	}
	return Qual("time", "Duration").Call(Lit(int64(d)))
}

// schemaDepth is the indentation, in tabs, of the Schema field of a version: a field
// of an element of the type's Versions, itself a field of the job or event type.
const schemaDepth = 3

// schemaLit renders a version's canonical JSON Schema for reading: a raw string, one
// key a line, indented one tab past the Schema field, closing at its indentation.
// The text differs from the canonical JSON only by whitespace between tokens, which
// NewJobType compacts away; the lock file hashes the canonical JSON, not this.
func schemaLit(canon string) Code {
	var b bytes.Buffer
	if strings.ContainsAny(canon, "`\r") || json.Indent(&b, []byte(canon), strings.Repeat("\t", schemaDepth), "\t") != nil {
		// Not expressible as a raw string (or, never for canonical JSON, not JSON):
		// the exact text, quoted.
		return rawString(canon)
	}
	return Id("`" + b.String() + "`")
}

// rawString renders s as a raw string literal when it can be one.
func rawString(s string) Code {
	if strings.ContainsAny(s, "`\r") {
		return Lit(s)
	}
	return Id("`" + s + "`")
}

// newFile starts a generated file of package pkg rendered from the spec file source,
// a path relative to the project directory.
func newFile(pkg, source string) *File {
	f := NewFile(pkg)
	f.HeaderComment(Header)
	f.HeaderComment(SourceComment(source))
	f.ImportName(rt, "runtime")
	f.ImportName("github.com/jackc/pgx/v5", "pgx")
	return f
}

// importNames tells jennifer the package names of the imports that format overrides
// bring, so they are not aliased: the last path element, when it is a plain
// identifier and not a major-version suffix ("github.com/google/uuid" → uuid).
func importNames(f *File, imports []string) {
	for _, path := range imports {
		name := path[strings.LastIndex(path, "/")+1:]
		if plainPackageName.MatchString(name) && !majorVersion.MatchString(name) {
			f.ImportName(path, name)
		}
	}
}

var (
	plainPackageName = regexp.MustCompile(`^[a-z][a-z0-9]*$`)
	majorVersion     = regexp.MustCompile(`^v[0-9]+$`)
)

func render(f *File) ([]byte, error) {
	var b bytes.Buffer
	f.NoFormat = true // formatted once, below, after the imports are grouped
	if err := f.Render(&b); err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	out, err := format.Source(groupImports(b.Bytes()))
	if err != nil {
		return nil, fmt.Errorf("format: %w", err)
	}
	return out, nil
}

// groupImports puts standard-library imports first and the others after a blank line,
// as goimports does.
func groupImports(src []byte) []byte {
	start := bytes.Index(src, []byte("\nimport (\n"))
	if start < 0 {
		return src
	}
	start += len("\nimport (\n")
	end := bytes.Index(src[start:], []byte("\n)\n"))
	if end < 0 {
		return src
	}
	var std, other []string
	for _, line := range strings.Split(string(src[start:start+end]), "\n") {
		path := strings.Trim(strings.TrimSpace(line[strings.LastIndex(line, " ")+1:]), `"`)
		if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") {
			other = append(other, line)
		} else {
			std = append(std, line)
		}
	}
	block := strings.Join(std, "\n")
	if len(std) > 0 && len(other) > 0 {
		block += "\n\n"
	}
	block += strings.Join(other, "\n")
	return append(append(append([]byte{}, src[:start]...), block...), src[start+end:]...)
}
