// Package typescript writes the TypeScript producers of a jobc project
// (producers.typescript in jobc.yaml): one file holding a type per payload version of
// every job type and an enqueue<Type> function for node-postgres, which calls the SQL
// function the SQL producers file defines (jobc_enqueue_<kind>). The SQL function
// validates, fills defaults, applies unique keys and wakes workers; the TypeScript
// side adds types that tsc checks, and nothing to keep in step with the runtime.
//
// The output is deterministic and reads like hand-written code: two-space indents,
// double quotes, semicolons, JSDoc on every export.
package typescript

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/jobc-dev/jobc/generator/internal/codegen/golang"
	"github.com/jobc-dev/jobc/generator/internal/gotype"
	"github.com/jobc-dev/jobc/generator/internal/names"
	"github.com/jobc-dev/jobc/generator/spec"
)

// InvalidPayloadSQLState is the SQLSTATE of the error the SQL producers raise for an
// invalid payload (jobc_payload_invalid in schema/library/1_messages.sql), whose
// DETAIL lists the problems as JSON.
const InvalidPayloadSQLState = "22J01"

// Project is what the file is generated from.
type Project struct {
	Config  string // the config file, for the header: jobc.yaml
	SQLFile string // the SQL producers file, relative to the project: db/jobc_producers.sql
	// SQLFunction names the SQL function that enqueues a job of kind.
	SQLFunction func(kind string) string
	Jobs        []golang.Job      // sorted by kind, every version converted
	Workflows   []golang.Workflow // sorted by name, every version converted
}

// File renders the TypeScript producers file.
func File(p Project) ([]byte, error) {
	w := &writer{}
	w.line("// " + golang.Header)
	w.line("// " + golang.SourceComment(p.Config))
	w.line("//")
	w.comment("//", fmt.Sprintf("TypeScript producers for the job types of %s: a type per payload version and "+
		"an enqueue function per job type, for node-postgres. Each function calls the SQL function "+
		"jobc_enqueue_<kind> defined in %s, so apply that file to the database first (jobc migrate or "+
		"your migration tool). The SQL function checks the payload against the schema of the version "+
		"it writes, fills the schema's defaults, applies the job's unique key and wakes sleeping workers, "+
		"all in the caller's transaction.", p.Config, p.SQLFile))
	w.line("")
	w.shared()
	for _, j := range p.Jobs {
		if err := w.job(j, p.SQLFunction(j.Spec.Kind)); err != nil {
			return nil, fmt.Errorf("typescript: %s: %w", j.Spec.Kind, err)
		}
	}
	if len(p.Workflows) > 0 {
		w.workflowShared()
	}
	for _, wf := range p.Workflows {
		if err := w.workflow(wf); err != nil {
			return nil, fmt.Errorf("typescript: workflow %s: %w", wf.Spec.Name, err)
		}
	}
	return []byte(w.String()), nil
}

// workflowShared writes the helper every workflow's functions use.
func (w *writer) workflowShared() {
	w.line("")
	w.jsdoc("", "Options of one workflow's start; every one may be left out, or undefined.")
	w.line("export interface " + names.TSStartOptions + " {")
	w.jsdoc("  ", "A key that makes the start unique among running workflows of its name: while one "+
		"started with the key runs, starting another returns its id and starts nothing.")
	w.line("  key?: string | undefined;")
	w.line("}")
	w.line("")
	w.jsdoc("", "Runs the SQL function fn of a workflow with params bound to args (JSON documents sent "+
		"as JSON text), and returns what it returns as the decimal string PostgreSQL prints.")
	w.line("async function " + names.TSCallWorkflow + "(")
	w.line("  client: " + names.TSQueryable + ",")
	w.line("  fn: string,")
	w.line("  params: string,")
	w.line("  args: unknown[],")
	w.line("): Promise<string> {")
	w.line("  const res = await client.query(`SELECT ${fn}(${params})::text AS id`, args);")
	w.line("  const id = res.rows[0]?.id;")
	w.line("  if (id == null) {")
	w.line("    throw new Error(`${fn} returned nothing`);")
	w.line("  }")
	w.line("  return id;")
	w.line("}")
}

// workflow writes one workflow's input types and start function, and each of its
// signals' types and signal function.
func (w *writer) workflow(wf golang.Workflow) error {
	s, n := wf.Spec, wf.Names
	input := golang.Job{Spec: &spec.Job{Kind: s.Name + " input", Payload: s.Input}, Names: n.TSInput(), Versions: wf.Versions}
	write, err := w.versions(input)
	if err != nil {
		return err
	}
	w.line("")
	w.jsdoc("", fmt.Sprintf("The input %s writes: version %d of the %s input.", n.TSStart(), write, s.Name))
	w.line(fmt.Sprintf("export type %s = %s;", input.Names.TSPayload(), input.Names.TSVersion(write)))
	w.line("")
	w.jsdoc("", strings.TrimSpace(s.Description),
		fmt.Sprintf("Starts %s %s workflow through client, in its transaction when it is in one: the workflow "+
			"and the jobs of its first steps exist if and only if it commits. %s checks the input against "+
			"version %d of its schema and fills its defaults; an invalid input starts nothing and rejects "+
			"with the database's error; payloadProblems(err) lists the problems. With opts.key, a running "+
			"workflow started with the key is returned instead of starting another.",
			names.Article(s.Name), s.Name, names.SQLStart(s.Name), write),
		"@returns the workflow's id, as a decimal string.")
	w.line(fmt.Sprintf("export async function %s(", n.TSStart()))
	w.line("  client: " + names.TSQueryable + ",")
	w.line("  input: " + input.Names.TSVersion(write) + ",")
	w.line("  opts: " + names.TSStartOptions + " = {},")
	w.line("): Promise<string> {")
	w.call("  return ", names.TSCallWorkflow, literal(names.SQLStart(s.Name)), literal("$1::jsonb, $2::text"),
		"JSON.stringify(input)", "opts.key ?? null")
	w.line("}")
	for _, g := range wf.Signals {
		sn := g.Names
		payload := golang.Job{Spec: &spec.Job{Kind: s.Name + " signal " + g.Spec.Name, Payload: g.Spec.Payload}, Names: sn.TSPayload(), Versions: g.Versions}
		write, err := w.versions(payload)
		if err != nil {
			return err
		}
		w.line("")
		w.jsdoc("", fmt.Sprintf("The payload %s writes: version %d of signal %s.", sn.TSSend(), write, g.Spec.Name))
		w.line(fmt.Sprintf("export type %s = %s;", payload.Names.TSPayload(), payload.Names.TSVersion(write)))
		w.line("")
		w.jsdoc("", fmt.Sprintf("Sends signal %s to running %s workflow workflowId through client, in its "+
			"transaction when it is in one: the workflow keeps it, and its steps that wait for it complete "+
			"with it. %s checks the payload against version %d of its schema; an invalid payload, an unknown "+
			"workflow and one that has ended reject with the database's error.",
			g.Spec.Name, s.Name, names.SQLSignal(s.Name, g.Spec.Name), write),
			"@returns how many waiting steps the signal completed.")
		w.line(fmt.Sprintf("export async function %s(", sn.TSSend()))
		w.line("  client: " + names.TSQueryable + ",")
		w.line("  workflowId: string,")
		w.line("  payload: " + payload.Names.TSVersion(write) + ",")
		w.line("): Promise<number> {")
		w.call("  const steps = await ", names.TSCallWorkflow, literal(names.SQLSignal(s.Name, g.Spec.Name)),
			literal("$1::bigint, $2::jsonb"), "workflowId", "JSON.stringify(payload)")
		w.line("  return Number(steps);")
		w.line("}")
	}
	return nil
}

// call writes prefix + fn(client, sqlFn, params, [args...]); as prettier breaks it
// when it is longer than a line: first the last argument, the array, hugged; when
// even its first line is too long, one argument a line.
func (w *writer) call(prefix, fn, sqlFn, params string, args ...string) {
	array := "[" + strings.Join(args, ", ") + "]"
	if one := fmt.Sprintf("%s%s(client, %s, %s, %s);", prefix, fn, sqlFn, params, array); len(one) <= lineWidth {
		w.line(one)
		return
	}
	if head := fmt.Sprintf("%s%s(client, %s, %s, [", prefix, fn, sqlFn, params); len(head) <= lineWidth {
		w.line(head)
		for _, a := range args {
			w.line("    " + a + ",")
		}
		w.line("  ]);")
		return
	}
	w.line(prefix + fn + "(")
	for _, a := range []string{"client", sqlFn, params} {
		w.line("    " + a + ",")
	}
	if len("    "+array+",") <= lineWidth {
		w.line("    " + array + ",")
	} else {
		w.line("    [")
		for _, a := range args {
			w.line("      " + a + ",")
		}
		w.line("    ],")
	}
	w.line("  );")
}

// versions writes the types of every version of j and returns its write version.
func (w *writer) versions(j golang.Job) (int, error) {
	write := 0
	for _, v := range j.Versions {
		if v.Spec.Number == j.Spec.Payload.WriteVersion {
			write = v.Spec.Number
		}
		if err := w.version(j, v); err != nil {
			return 0, err
		}
	}
	if write == 0 {
		return 0, fmt.Errorf("write version %d has no types", j.Spec.Payload.WriteVersion)
	}
	return write, nil
}

// shared writes the declarations every job's function uses.
func (w *writer) shared() {
	w.jsdoc("", "What the enqueue functions need of a database client: the query method of a "+
		"node-postgres Client, PoolClient or Pool. Pass the client that ran BEGIN to enqueue in its "+
		"transaction: the job then exists if and only if the transaction commits. A Pool runs each "+
		"enqueue in a transaction of its own.")
	w.line("export interface " + names.TSQueryable + " {")
	w.line("  query(text: string, values: unknown[]): Promise<{ rows: Array<{ id: string | null }> }>;")
	w.line("}")
	w.line("")
	w.jsdoc("", "Options of one enqueue; every one may be left out, or undefined (so that code "+
		"compiled with exactOptionalPropertyTypes can pass a value it may not have).")
	w.line("export interface " + names.TSEnqueueOptions + " {")
	w.jsdoc("  ", "When the job may run first: now when absent.")
	w.line("  runAt?: Date | undefined;")
	w.jsdoc("  ", "The job's priority instead of its job type's: 1 is the most urgent, 9 the least.")
	w.line("  priority?: number | undefined;")
	w.jsdoc("  ", "The job's unique key instead of the one its job type computes from the payload: "+
		"while a job of the same kind holds the key, enqueueing another returns that job's id and inserts nothing.")
	w.line("  dedupKey?: string | undefined;")
	w.line("}")
	w.line("")
	w.jsdoc("", "Runs the SQL function fn and returns the job's id as the decimal string PostgreSQL "+
		"prints: ids are int8, beyond what a JavaScript number holds exactly. The cast to text keeps "+
		"it a string whatever type parsers the client has. The payload is sent as JSON text, whole.")
	w.line("async function " + names.TSCallEnqueue + "(")
	w.line("  client: " + names.TSQueryable + ",")
	w.line("  fn: string,")
	w.line("  payload: unknown,")
	w.line("  opts: " + names.TSEnqueueOptions + ",")
	w.line("): Promise<string> {")
	w.line("  const res = await client.query(")
	w.line("    `SELECT ${fn}($1::jsonb, coalesce($2::timestamptz, now()), $3::int, $4::text)::text AS id`,")
	w.line("    [JSON.stringify(payload), opts.runAt ?? null, opts.priority ?? null, opts.dedupKey ?? null],")
	w.line("  );")
	w.line("  const id = res.rows[0]?.id;")
	w.line("  if (id == null) {")
	w.line("    throw new Error(`${fn} returned no job id`);")
	w.line("  }")
	w.line("  return id;")
	w.line("}")
	w.line("")
	w.jsdoc("", "One problem of an invalid payload: where it is and which rule it breaks.")
	w.line("export interface " + names.TSPayloadProblem + " {")
	w.jsdoc("  ", "A JSON pointer into the payload, such as /lines/0/sku; empty for the payload itself.")
	w.line("  field: string;")
	w.jsdoc("  ", "The rule and the value, as Go's validator words them: minimum: got 0, want 1.")
	w.line("  message: string;")
	w.line("}")
	w.line("")
	w.jsdoc("", fmt.Sprintf("Returns the problems of the payload that an enqueue function rejected with err, "+
		"read from the database error's detail (SQLSTATE %s); undefined when err is anything else, such as "+
		"a lost connection. Use it to tell a client what was wrong with its request.", InvalidPayloadSQLState))
	w.line("export function " + names.TSPayloadProblems + "(err: unknown): " + names.TSPayloadProblem + "[] | undefined {")
	w.line("  if (typeof err !== \"object\" || err === null) {")
	w.line("    return undefined;")
	w.line("  }")
	w.line("  const { code, detail } = err as { code?: unknown; detail?: unknown };")
	w.line(fmt.Sprintf("  if (code !== %q || typeof detail !== \"string\") {", InvalidPayloadSQLState))
	w.line("    return undefined;")
	w.line("  }")
	w.line("  return JSON.parse(detail) as " + names.TSPayloadProblem + "[];")
	w.line("}")
}

// job writes one job type's payload types, its alias and its enqueue function.
func (w *writer) job(j golang.Job, sqlFunction string) error {
	s := j.Spec
	n := j.Names
	var write *golang.Version
	for i := range j.Versions {
		v := &j.Versions[i]
		if v.Spec.Number == s.Payload.WriteVersion {
			write = v
		}
		if err := w.version(j, *v); err != nil {
			return err
		}
	}
	if write == nil {
		return fmt.Errorf("write version %d has no types", s.Payload.WriteVersion)
	}
	w.line("")
	w.jsdoc("", fmt.Sprintf("The payload %s writes: version %d of %s.", n.TSEnqueue(), write.Spec.Number, s.Kind))
	w.line(fmt.Sprintf("export type %s = %s;", n.TSPayload(), n.TSVersion(write.Spec.Number)))
	w.line("")
	doc := []string{
		strings.TrimSpace(s.Description),
		fmt.Sprintf("Enqueues %s %s job through client, in its transaction when it is in one. %s checks the "+
			"payload against version %d of its schema and fills its defaults; an invalid payload enqueues "+
			"nothing and rejects with the database's error, whose message names each field and rule; "+
			"payloadProblems(err) lists them.",
			names.Article(s.Kind), s.Kind, sqlFunction, write.Spec.Number),
		"@returns the job's id, or that of the job already holding its unique key, as a decimal string.",
	}
	if s.Deprecated != "" {
		doc = append(doc, "@deprecated "+s.Deprecated)
	}
	w.jsdoc("", doc...)
	w.line(fmt.Sprintf("export async function %s(", n.TSEnqueue()))
	w.line("  client: " + names.TSQueryable + ",")
	w.line("  payload: " + n.TSVersion(write.Spec.Number) + ",")
	w.line("  opts: " + names.TSEnqueueOptions + " = {},")
	w.line("): Promise<string> {")
	w.line(fmt.Sprintf("  return %s(client, %s, payload, opts);", names.TSCallEnqueue, literal(sqlFunction)))
	w.line("}")
	return nil
}

// version writes the declarations of one payload version, in gotype's order.
func (w *writer) version(j golang.Job, ev golang.Version) error {
	v := newVersion(j, ev)
	for i, d := range ev.Payload.Decls {
		node := v.nodes[d.Name]
		if node == nil {
			return fmt.Errorf("version %d: no schema found for type %s", v.num, d.Name)
		}
		name := v.name(d.Name)
		doc := d.Doc
		if i == 0 {
			doc = join(fmt.Sprintf("Version %d of the %s payload.", v.num, j.Spec.Kind), d.Doc)
		} else if doc == "" {
			doc = fmt.Sprintf("The type of %s in %s.", d.Of, v.name(ev.Payload.Root))
		}
		w.line("")
		w.jsdoc("", doc)
		switch {
		case d.Enum != nil:
			w.alias(name, enumLiterals(node))
		case d.Struct != nil && len(d.Struct.Fields) == 0 && closed(node):
			// An empty interface would accept any value but null; this accepts only {}.
			w.line(fmt.Sprintf("export type %s = Record<string, never>;", name))
		case d.Struct != nil:
			w.line(fmt.Sprintf("export interface %s {", name))
			w.fields(v, node, d.Struct.Fields)
			if !closed(node) {
				w.jsdoc("  ", "The schema allows other properties (additionalProperties: false would forbid them).")
				w.line("  [property: string]: unknown;")
			}
			w.line("}")
		}
	}
	return nil
}

// closed reports whether an object schema forbids properties it does not list.
func closed(n *yaml.Node) bool {
	ap := get(n, "additionalProperties")
	return ap != nil && scalar(ap) != "true"
}

// alias writes a type alias of a union, broken over lines as prettier breaks it when
// it is longer than a line.
func (w *writer) alias(name string, members []string) {
	head := "export type " + name + " ="
	union := strings.Join(members, " | ")
	switch {
	case len(head)+1+len(union)+1 <= lineWidth:
		w.line(head + " " + union + ";")
	case 2+len(union)+1 <= lineWidth:
		w.line(head)
		w.line("  " + union + ";")
	default:
		w.line(head)
		for i, m := range members {
			end := ""
			if i == len(members)-1 {
				end = ";"
			}
			w.line("  | " + m + end)
		}
	}
}

// fields writes an interface's properties, in schema order.
func (w *writer) fields(v *version, node *yaml.Node, fs []gotype.Field) {
	props := get(node, "properties")
	for _, f := range fs {
		ps := get(props, f.JSON)
		typ := v.typeOf(ps, f.Type)
		doc := []string{join(docOf(ps), checks(v, ps))}
		if f.HasDefault {
			doc = append(doc, "@default "+literal(f.Default)+" (filled in when left out)")
		}
		w.jsdoc("  ", doc...)
		// The SQL function fills defaults before it checks the payload, so a required
		// property with a default may be left out as well.
		opt := ""
		if !f.Required || f.HasDefault {
			opt = "?"
		}
		w.line(fmt.Sprintf("  %s%s: %s;", propertyName(f.JSON), opt, typ))
	}
}
