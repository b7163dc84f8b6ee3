package sql

import (
	"fmt"
	"io"
	"strings"

	"github.com/jobc-dev/jobc/generator/internal/names"
	"github.com/jobc-dev/jobc/generator/spec"
)

// Workflow is what the SQL functions of one workflow are generated from.
type Workflow struct {
	Spec *spec.Workflow
	// Definition is what Go's StartWorkflow records (runtime.WorkflowType.Definition):
	// jobc_start_<workflow> records the same.
	Definition []byte
	Input      string            // the input write version's canonical JSON Schema
	Signals    map[string]string // each signal's write version's canonical JSON Schema
}

// workflowFunctions are the functions of one workflow: jobc_start_<workflow> and a
// jobc_signal_<workflow>_<signal> per signal, each checking its document as
// jobc_enqueue_<kind> checks a payload.
func workflowFunctions(p *spec.Project, w Workflow) ([]func(io.Writer), spec.Diagnostics) {
	var out []func(io.Writer)
	var diags spec.Diagnostics
	tooLong := func(name, path string) {
		if len(name) > names.MaxSQLIdent {
			diags = append(diags, spec.Diagnostic{Pos: w.Spec.Pos, Path: path,
				Message: fmt.Sprintf("SQL producer %s is longer than PostgreSQL's %d-byte names: shorten the names", name, names.MaxSQLIdent)})
		}
	}
	start := names.SQLStart(w.Spec.Name)
	tooLong(start, "workflows."+w.Spec.Name)
	in, ds := newFunction(p, Job{Spec: &spec.Job{Kind: w.Spec.Name, Pos: w.Spec.Pos, Payload: w.Spec.Input}, Schema: w.Input})
	diags = append(diags, ds...)
	if len(ds) == 0 {
		out = append(out, func(b io.Writer) { in.writeStart(b, w) })
	}
	for _, g := range w.Spec.Signals {
		name := names.SQLSignal(w.Spec.Name, g.Name)
		tooLong(name, "workflows."+w.Spec.Name+".signals."+g.Name)
		fn, ds := newFunction(p, Job{Spec: &spec.Job{Kind: w.Spec.Name + "." + g.Name, Pos: g.Pos, Payload: g.Payload}, Schema: w.Signals[g.Name]})
		diags = append(diags, ds...)
		if len(ds) == 0 {
			out = append(out, func(b io.Writer) { fn.writeSignal(b, w, g) })
		}
	}
	return out, diags
}

// writeChecks writes the declarations (extra ones after the checks' own) and the
// checks of the document p, the parameter param, raising as Go does for what action
// does.
func (fn *function) writeChecks(w io.Writer, param, extra, action string) {
	fmt.Fprintf(w, `DECLARE
    p  jsonb  := coalesce(%s, 'null');
    f  text[] := '{}'; -- the JSON pointer of each problem
    m  text[] := '{}'; -- and its rule
    xf text[] := '{}'; -- the JSON pointer of each number Go could not decode exactly
    xm text[] := '{}'; -- and its rule
    fe text;           -- a shared check's rule, or NULL
%s`, param, extra)
	for d := 1; d <= fn.maxDepth; d++ {
		fmt.Fprintf(w, "    i%[1]d integer; k%[1]d text; e%[1]d jsonb; -- loop depth %[1]d\n", d)
	}
	v := fn.version.Number
	fmt.Fprintf(w, `BEGIN
    -- Nesting Go refuses too (runtime/internal/schema.MaxDepth).
    fe := jobc_payload_too_deep(p);
    IF fe IS NOT NULL THEN
        PERFORM jobc_payload_invalid_in(%[1]s, %[2]s, %[3]d, ARRAY[fe], ARRAY['nested deeper than 64 levels']);
    END IF;
`, action, lit(fn.job.Kind), v)
	if fn.fillExpr != "" {
		fmt.Fprintf(w, "    -- The schema's defaults, for the properties the document leaves out.\n    p := %s;\n", fn.fillExpr)
	}
	fmt.Fprintf(w, "%s", fn.checks)
	fmt.Fprintf(w, `    IF cardinality(xf) > 0 THEN
        PERFORM jobc_payload_invalid_in(%[1]s, %[2]s, %[3]d, xf, xm);
    END IF;
    IF cardinality(f) > 0 THEN
        PERFORM jobc_payload_invalid_in(%[1]s, %[2]s, %[3]d, f, m);
    END IF;
`, action, lit(fn.job.Kind), v)
}

// writeStart writes jobc_start_<workflow>(input jsonb) RETURNS bigint.
func (fn *function) writeStart(w io.Writer, wf Workflow) {
	name := names.SQLStart(wf.Spec.Name)
	steps := make([]string, len(wf.Spec.Steps))
	for i, s := range wf.Spec.Steps {
		steps[i] = s.Name
	}
	comment(w, fmt.Sprintf("%s starts %s %s workflow in the caller's transaction, as the generated Go Start does: it fills "+
		"the input's defaults, checks it against version %d of its schema and records the workflow with the definition "+
		"below (steps %s), running its first steps. It returns the workflow's id; with a key, that of the running "+
		"workflow started with the key, if there is one, instead of starting another.",
		name, names.Article(wf.Spec.Name), wf.Spec.Name, fn.version.Number, strings.Join(steps, ", ")))
	fmt.Fprintf(w, `CREATE OR REPLACE FUNCTION %s(input jsonb, key text DEFAULT NULL) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $jobc$
`, name)
	fn.writeChecks(w, "input", "", lit("start workflow "+wf.Spec.Name))
	fmt.Fprintf(w, `    RETURN jobc_workflow_start(%s, %s, %d, p, key);
END
$jobc$;
`, lit(wf.Spec.Name), lit(string(wf.Definition)), fn.version.Number)
}

// writeSignal writes jobc_signal_<workflow>_<signal>(workflow_id bigint, payload
// jsonb) RETURNS integer.
func (fn *function) writeSignal(w io.Writer, wf Workflow, g *spec.WorkflowSignal) {
	name := names.SQLSignal(wf.Spec.Name, g.Name)
	comment(w, fmt.Sprintf("%s sends signal %s to running %s workflow workflow_id, as the generated Go Signal does: it "+
		"checks the payload against version %d of its schema and keeps it with the workflow; the workflow's wait steps for "+
		"it that wait complete with it. It returns how many steps it completed. An unknown workflow raises SQLSTATE P0002 "+
		"(no_data_found), one that has ended 55000 (object_not_in_prerequisite_state).",
		name, g.Name, wf.Spec.Name, fn.version.Number))
	fmt.Fprintf(w, `CREATE OR REPLACE FUNCTION %s(workflow_id bigint, payload jsonb) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $jobc$
`, name)
	fn.writeChecks(w, "payload",
		"    st text;           -- the workflow's state after\n    woken integer;     -- the steps the signal completed\n",
		fmt.Sprintf("'signal workflow %s ' || workflow_id || %s", wf.Spec.Name, lit(": "+g.Name)))
	fmt.Fprintf(w, `    SELECT s.out_state::text, s.out_woken INTO st, woken
    FROM jobc_workflow_signal(workflow_id, %[1]s, %[2]d, p) s;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'jobc: signal workflow %[3]s %%: %%: workflow not found', workflow_id, %[1]s
            USING ERRCODE = 'no_data_found';
    END IF;
    IF st <> 'running' AND woken = 0 THEN
        RAISE EXCEPTION 'jobc: signal workflow %[3]s %%: %%: it is %%: workflow already ended', workflow_id, %[1]s, st
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    RETURN woken;
END
$jobc$;
`, lit(g.Name), fn.version.Number, wf.Spec.Name)
}

// comment writes text as SQL comment lines of at most 88 columns.
func comment(w io.Writer, text string) {
	line := "--"
	for _, word := range strings.Fields(text) {
		if len(line)+1+len(word) > 88 && line != "--" {
			fmt.Fprintln(w, line)
			line = "--"
		}
		line += " " + word
	}
	fmt.Fprintln(w, line)
}
