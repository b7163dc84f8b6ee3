package names

import (
	"strconv"
	"strings"
)

// The TypeScript producers file (producers.typescript) declares these once.
const (
	TSQueryable      = "Queryable"      // what the enqueue functions need of a node-postgres client
	TSEnqueueOptions = "EnqueueOptions" // run_at, priority and dedup key of one enqueue
	// TSCallEnqueue is the file's private helper that runs the SQL. No job's
	// function can be named so: those all start with "enqueue" and a capital.
	TSCallEnqueue = "callEnqueue"
	// TSPayloadProblem is one problem of an invalid payload, and TSPayloadProblems
	// reads them from the error an enqueue rejects with.
	TSPayloadProblem  = "PayloadProblem"
	TSPayloadProblems = "payloadProblems"
)

// TSCatalogue lists the identifiers the TypeScript file declares for all job types.
func TSCatalogue() []Ident {
	return []Ident{
		{Name: TSQueryable, What: "the TypeScript Queryable interface"},
		{Name: TSEnqueueOptions, What: "the TypeScript EnqueueOptions interface"},
		{Name: TSCallEnqueue, What: "the TypeScript callEnqueue helper"},
		{Name: TSPayloadProblem, What: "the TypeScript PayloadProblem interface"},
		{Name: TSPayloadProblems, What: "the TypeScript payloadProblems function"},
	}
}

// TSEnqueue is the TypeScript function that enqueues one job: enqueueSendEmail.
func (n Job) TSEnqueue() string { return "enqueue" + n.Base }

// TSPayload is the TypeScript alias of the version producers write (write_version):
// SendEmailPayload. Unlike Go's Payload, which handlers read, it is not the newest.
func (n Job) TSPayload() string { return n.Base + "Payload" }

// TSVersion is the TypeScript type of payload version v: SendEmailPayloadV2.
func (n Job) TSVersion(v int) string { return n.Base + "PayloadV" + strconv.Itoa(v) }

// TSType is the TypeScript name of a type that gotype declared for version v under
// the Go name goName: the same name with the version's prefix (Version, SendEmailV2)
// replaced by TSVersion's, so that SendEmailV2Address becomes
// SendEmailPayloadV2Address. Every name gotype declares for a version starts with
// that prefix, and replacing it keeps distinct names distinct.
func (n Job) TSType(v int, goName string) string {
	return n.TSVersion(v) + strings.TrimPrefix(goName, n.Version(v))
}

// TSIdents lists every identifier the TypeScript file declares for the job type.
// versions must have their Payload set; the versions without one have no types to
// name, as in Idents.
func (n Job) TSIdents(versions []Version) []Ident {
	ids := []Ident{
		{Name: n.TSPayload(), What: "the TypeScript alias of the written payload"},
		{Name: n.TSEnqueue(), What: "the TypeScript enqueue function"},
	}
	for _, v := range versions {
		num := strconv.Itoa(v.Number)
		ids = append(ids, Ident{Name: n.TSVersion(v.Number), What: "the TypeScript type of version " + num})
		if v.Payload == nil {
			continue
		}
		for _, d := range v.Payload.Decls {
			if d.Name != v.Payload.Root {
				ids = append(ids, Ident{Name: n.TSType(v.Number, d.Name), What: "a TypeScript type of the version " + num + " payload"})
			}
		}
	}
	return ids
}

// TSCallWorkflow is the TypeScript file's private helper that runs a workflow's SQL
// function; declared when the project has workflows.
const TSCallWorkflow = "callWorkflow"

// TSStartOptions are the options of a workflow's start: its key.
const TSStartOptions = "StartOptions"

// TSWorkflowCatalogue lists the identifiers the TypeScript file declares for all
// workflows, when there are any.
func TSWorkflowCatalogue() []Ident {
	return []Ident{{Name: TSCallWorkflow, What: "the TypeScript callWorkflow helper"},
		{Name: TSStartOptions, What: "the TypeScript StartOptions interface"}}
}

// TSInput is the naming of the workflow's input in TypeScript, as a job's payload is
// named: FulfilOrderInputPayloadV1, FulfilOrderInputPayload.
func (n Workflow) TSInput() Job { return Job{Base: n.Input()} }

// TSStart is the TypeScript function that starts a workflow: startFulfilOrder.
func (n Workflow) TSStart() string { return "start" + n.Base }

// TSIdents lists every identifier the TypeScript file declares for the workflow:
// its input's types and Start.
func (n Workflow) TSIdents(versions []Version) []Ident {
	ids := []Ident{{Name: n.TSStart(), What: "the TypeScript start function"}}
	for _, id := range n.TSInput().TSIdents(versions) {
		if id.Name != n.TSInput().TSEnqueue() {
			ids = append(ids, id)
		}
	}
	return ids
}

// TSPayload is the naming of the signal's payload in TypeScript:
// FulfilOrderPaymentConfirmedPayloadV1, FulfilOrderPaymentConfirmedPayload.
func (n Signal) TSPayload() Job { return Job{Base: n.Base} }

// TSSend is the TypeScript function that sends the signal:
// signalFulfilOrderPaymentConfirmed.
func (n Signal) TSSend() string { return "signal" + n.Base }

// TSIdents lists every identifier the TypeScript file declares for the signal.
func (n Signal) TSIdents(versions []Version) []Ident {
	ids := []Ident{{Name: n.TSSend(), What: "the TypeScript signal function"}}
	for _, id := range n.TSPayload().TSIdents(versions) {
		if id.Name != n.TSPayload().TSEnqueue() {
			ids = append(ids, id)
		}
	}
	return ids
}
