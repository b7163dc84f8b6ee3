package names

import (
	"strconv"

	"github.com/jobc-dev/jobc/generator/internal/gotype"
)

// Workflow derives the identifiers of one workflow from its base name, the Go form
// of its name (fulfil_order → FulfilOrder).
type Workflow struct {
	Base string
}

// ForWorkflow returns the naming of the workflow name.
func ForWorkflow(name string) Workflow { return Workflow{Base: gotype.GoName(name)} }

// NameConst is the constant holding the workflow's name: WorkflowFulfilOrder.
func (n Workflow) NameConst() string { return "Workflow" + n.Base }

// Input is the alias of the newest input version: FulfilOrderInput.
func (n Workflow) Input() string { return n.Base + "Input" }

// Version is the input struct of version v: FulfilOrderInputV1. Start takes the
// write version's.
func (n Workflow) Version(v int) string { return versionStruct(n.Input(), v) }

// Upcast is the hand-written function that upcasts version v-1 inputs into version
// v: UpcastFulfilOrderInputV1ToV2.
func (n Workflow) Upcast(v int) string { return upcastFunc(n.Input(), v) }

// Start starts a workflow: StartFulfilOrder.
func (n Workflow) Start() string { return "Start" + n.Base }

// Get reads a workflow with its steps: GetFulfilOrder.
func (n Workflow) Get() string { return "Get" + n.Base }

// TypeVar is the unexported variable describing the workflow to the runtime:
// fulfilOrderWorkflow.
func (n Workflow) TypeVar() string { return gotype.LowerFirst(n.Base) + "Workflow" }

// Idents lists every package-level identifier the workflow declares, or makes the
// package declare (a hand-written upcast of its input), given its input versions.
func (n Workflow) Idents(versions []Version) []Ident {
	ids := []Ident{
		{Name: n.NameConst(), What: "the name constant"},
		{Name: n.Input(), What: "the newest input's alias"},
		{Name: n.Start(), What: "the Start function"},
		{Name: n.Get(), What: "the Get function"},
		{Name: n.TypeVar(), What: "the workflow type variable"},
	}
	for _, v := range versions {
		num := strconv.Itoa(v.Number)
		root := n.Version(v.Number)
		ids = append(ids, Ident{Name: root, What: "the version " + num + " input struct"})
		if v.HandWritten {
			ids = append(ids, Ident{Name: n.Upcast(v.Number), What: "the hand-written upcast into input version " + num, HandWritten: true})
		}
		ids = append(ids, payloadIdents(v, root, num, "input")...)
	}
	return ids
}

// Signal derives the identifiers of one signal of the workflow.
func (n Workflow) Signal(name string) Signal {
	return Signal{Workflow: n, Base: n.Base + gotype.GoName(name)}
}

// Signal derives the identifiers of a workflow's signal from its base name, the
// workflow's and the signal's Go names (fulfil_order, payment_confirmed →
// FulfilOrderPaymentConfirmed).
type Signal struct {
	Workflow Workflow
	Base     string
}

// Payload is the alias of the newest version: FulfilOrderPaymentConfirmed.
func (n Signal) Payload() string { return n.Base }

// Version is the struct of version v: FulfilOrderPaymentConfirmedV1. Send takes the
// write version's.
func (n Signal) Version(v int) string { return versionStruct(n.Base, v) }

// Upcast is the hand-written function that upcasts version v-1 signals into version
// v: UpcastFulfilOrderPaymentConfirmedV1ToV2.
func (n Signal) Upcast(v int) string { return upcastFunc(n.Base, v) }

// Send sends the signal: SignalFulfilOrderPaymentConfirmed.
func (n Signal) Send() string { return "Signal" + n.Base }

// Idents lists every package-level identifier the signal declares, or makes the
// package declare (a hand-written upcast), given its versions.
func (n Signal) Idents(versions []Version) []Ident {
	ids := []Ident{
		{Name: n.Payload(), What: "the newest signal's alias"},
		{Name: n.Send(), What: "the Signal function"},
	}
	for _, v := range versions {
		num := strconv.Itoa(v.Number)
		root := n.Version(v.Number)
		ids = append(ids, Ident{Name: root, What: "the version " + num + " signal struct"})
		if v.HandWritten {
			ids = append(ids, Ident{Name: n.Upcast(v.Number), What: "the hand-written upcast into signal version " + num, HandWritten: true})
		}
		ids = append(ids, payloadIdents(v, root, num, "signal")...)
	}
	return ids
}
