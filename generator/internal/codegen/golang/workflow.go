package golang

import (
	"fmt"
	"strings"

	. "github.com/dave/jennifer/jen"

	"github.com/jobc-dev/jobc/generator/spec"
)

// WorkflowFile renders the Go file of one workflow: its input types, its description
// to the runtime, Start<Workflow> and Get<Workflow>.
func WorkflowFile(pkg string, w Workflow) ([]byte, error) {
	f := newFile(pkg, w.Spec.Pos.File)
	importNames(f, w.Imports())
	s := w.Spec
	n := w.Names
	newest := w.Versions[len(w.Versions)-1]
	write := w.Versions[0]
	for _, v := range w.Versions {
		if v.Spec.Number == s.Input.WriteVersion {
			write = v
		}
	}

	f.Commentf("%s is the name under which %s workflows are recorded.", n.NameConst(), s.Name)
	f.Const().Id(n.NameConst()).Op("=").Lit(s.Name)

	for _, v := range w.Versions {
		doc := fmt.Sprintf("%s is version %d of the %s workflow's input.", n.Version(v.Spec.Number), v.Spec.Number, s.Name)
		if d := strings.TrimSpace(s.Description); d != "" && v.Spec.Number == newest.Spec.Number {
			doc = joinDoc(doc, d)
		}
		decls(f, v.Declared, doc, filledPayload)
	}
	f.Commentf("%s is the newest %s input (version %d).", n.Input(), s.Name, newest.Spec.Number)
	f.Type().Id(n.Input()).Op("=").Id(newest.Payload.Root)

	f.Commentf("%s describes %s to the runtime.", n.TypeVar(), s.Name)
	f.Var().Id(n.TypeVar()).Op("=").Qual(rt, "MustWorkflowType").Call(Qual(rt, "WorkflowType").Add(ordered(workflowTypeFields(w)...)))

	steps := make([]string, len(s.Steps))
	for i, st := range s.Steps {
		steps[i] = st.Name
	}
	writeDoc(f, fmt.Sprintf("%s starts a %s workflow through db, with the input checked against version %d of its "+
		"schema (an invalid input returns a *runtime.PayloadError and starts nothing). Pass the transaction of the "+
		"business change that needs it: the workflow and the jobs of its first steps then exist if and only if that "+
		"transaction commits. Its steps (%s) run as the database advances it: each once the steps it comes after "+
		"have completed.", n.Start(), s.Name, write.Spec.Number, strings.Join(steps, ", ")))
	f.Add(signature(n.Start(), []Code{
		Id("ctx").Qual("context", "Context"),
		Id("db").Qual(rt, "DBTX"),
		Id("in").Id(write.Payload.Root),
	}, Qual(rt, "WorkflowID"), Error()).Block(
		Return(Qual(rt, "StartWorkflow").Call(Id("ctx"), Id("db"), Id(n.TypeVar()), Id("in"))),
	))

	writeDoc(f, fmt.Sprintf("%s reads %s workflow id through db: its state and each step's state, job and result.",
		n.Get(), s.Name))
	f.Add(signature(n.Get(), []Code{
		Id("ctx").Qual("context", "Context"),
		Id("db").Qual(rt, "DBTX"),
		Id("id").Qual(rt, "WorkflowID"),
	}, Op("*").Qual(rt, "WorkflowInfo"), Error()).Block(
		Return(Qual(rt, "GetWorkflow").Call(Id("ctx"), Id("db"), Id("id"))),
	))
	return render(f)
}

func workflowTypeFields(w Workflow) []Code {
	s := w.Spec
	fs := []Code{
		kv("Name", Id(w.Names.NameConst())),
		kv("InputWriteVersion", Lit(s.Input.WriteVersion)),
		kv("InputVersions", versionsLit(w.Versions, w.Names.Upcast)),
	}
	if s.OnFailure == "continue" {
		fs = append(fs, kv("OnFailure", Qual(rt, "OnFailureContinue")))
	}
	var steps []Code
	for i, st := range s.Steps {
		sf := []Code{kv("Name", Lit(st.Name)), kv("Job", Id(w.Steps[i].TypeVar()))}
		if len(st.After) > 0 {
			sf = append(sf, kv("After", stringSlice(st.After)))
		}
		if st.Map != nil {
			sf = append(sf, kv("Map", stepMap(st.Map)))
		}
		steps = append(steps, ordered(sf...))
	}
	fs = append(fs, kv("Steps", Index().Qual(rt, "Step").Add(ordered(steps...))))
	return fs
}

// stepMap renders a step's map, one entry a line, in the order written.
func stepMap(m []spec.StepMap) Code {
	return Map(String()).String().CustomFunc(items(true, "{", "}"), func(g *Group) {
		for _, e := range m {
			g.Lit(e.To).Op(":").Lit(e.From)
		}
	})
}
