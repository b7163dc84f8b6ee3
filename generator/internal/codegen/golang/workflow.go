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
		"have completed. With runtime.WithWorkflowKey(key), a running %s workflow started with the key is "+
		"returned instead of starting another.", n.Start(), s.Name, write.Spec.Number, strings.Join(steps, ", "), s.Name))
	f.Add(signature(n.Start(), []Code{
		Id("ctx").Qual("context", "Context"),
		Id("db").Qual(rt, "DBTX"),
		Id("in").Id(write.Payload.Root),
		Id("opts").Op("...").Qual(rt, "StartOption"),
	}, Qual(rt, "WorkflowID"), Error()).Block(
		Return(Qual(rt, "StartWorkflow").Call(Id("ctx"), Id("db"), Id(n.TypeVar()), Id("in"), Id("opts").Op("..."))),
	))

	for _, g := range w.Signals {
		signalDecls(f, w, g)
	}

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

// signalDecls renders a signal's versions, its alias and Signal<Workflow><Signal>.
func signalDecls(f *File, w Workflow, g Signal) {
	s, n := g.Spec, g.Names
	newest := g.Versions[len(g.Versions)-1]
	write := g.Versions[0]
	for _, v := range g.Versions {
		if v.Spec.Number == s.Payload.WriteVersion {
			write = v
		}
	}
	for _, v := range g.Versions {
		decls(f, v.Declared, fmt.Sprintf("%s is version %d of signal %s of the %s workflow.", n.Version(v.Spec.Number), v.Spec.Number, s.Name, w.Spec.Name), filledPayload)
	}
	f.Commentf("%s is the newest %s signal (version %d).", n.Payload(), s.Name, newest.Spec.Number)
	f.Type().Id(n.Payload()).Op("=").Id(newest.Payload.Root)

	var waits []string
	for _, st := range w.Spec.Steps {
		if st.Wait != nil && st.Wait.Signal == s.Name {
			waits = append(waits, st.Name)
		}
	}
	doc := fmt.Sprintf("%s sends signal %s to %s workflow id through db, checked against version %d of its schema (an "+
		"invalid one returns a *runtime.PayloadError and sends nothing). It is kept with the workflow: ", n.Send(), s.Name, w.Spec.Name, write.Spec.Number)
	if len(waits) > 0 {
		doc += fmt.Sprintf("step %s, waiting for it now or later, completes with it as its result. ", strings.Join(waits, ", "))
	} else {
		doc += "no step waits for it. "
	}
	doc += "A workflow that has ended returns an error wrapping runtime.ErrWorkflowEnded."
	writeDoc(f, doc)
	f.Add(signature(n.Send(), []Code{
		Id("ctx").Qual("context", "Context"),
		Id("db").Qual(rt, "DBTX"),
		Id("id").Qual(rt, "WorkflowID"),
		Id("signal").Id(write.Payload.Root),
	}, Error()).Block(
		Return(Qual(rt, "SignalWorkflow").Call(Id("ctx"), Id("db"), Id(w.Names.TypeVar()), Id("id"), Lit(s.Name), Id("signal"))),
	))
}

func workflowTypeFields(w Workflow) []Code {
	s := w.Spec
	fs := []Code{
		kv("Name", Id(w.Names.NameConst())),
		kv("InputWriteVersion", Lit(s.Input.WriteVersion)),
		kv("InputVersions", versionsLit(w.Versions, w.Names.Upcast)),
	}
	if len(w.Signals) > 0 {
		var sigs []Code
		for _, g := range w.Signals {
			sigs = append(sigs, ordered(
				kv("Name", Lit(g.Spec.Name)),
				kv("WriteVersion", Lit(g.Spec.Payload.WriteVersion)),
				kv("Versions", versionsLit(g.Versions, g.Names.Upcast)),
			))
		}
		fs = append(fs, kv("Signals", Index().Qual(rt, "Signal").Add(ordered(sigs...))))
	}
	if s.OnFailure == "continue" {
		fs = append(fs, kv("OnFailure", Qual(rt, "OnFailureContinue")))
	}
	var steps []Code
	for i, st := range s.Steps {
		sf := []Code{kv("Name", Lit(st.Name))}
		if len(st.After) > 0 {
			sf = append(sf, kv("After", stringSlice(st.After)))
		}
		switch st.Kind() {
		case "sleep":
			sf = append(sf, kv("Sleep", duration(st.Sleep)))
		case "wait":
			wf := []Code{kv("Signal", Lit(st.Wait.Signal))}
			if st.Wait.Timeout > 0 {
				wf = append(wf, kv("Timeout", duration(st.Wait.Timeout)))
			}
			sf = append(sf, kv("Wait", Op("&").Qual(rt, "Wait").Values(wf...)))
		default:
			sf = append(sf, kv("Job", Id(w.Steps[i].TypeVar())))
			if st.ForEach != "" {
				sf = append(sf, kv("ForEach", Lit(st.ForEach)))
			}
			if st.OnItemFailure == "continue" {
				sf = append(sf, kv("OnItemFailure", Qual(rt, "OnItemFailureContinue")))
			}
			if st.Map != nil {
				sf = append(sf, kv("Map", stepMap(st.Map)))
			}
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
