// Package names is the one place that decides the Go identifiers a jobc project's
// generated package declares. The emitter writes them, the collision check in
// generator proves they are distinct, and the contract checker names the hand-written
// upcasts with them, so the three can never disagree (as sqlc derives every name of a
// codegen target from one function).
package names

import (
	"strconv"

	"github.com/jobc-dev/jobc/generator/internal/gotype"
)

// The catalogue file declares these for the package as a whole.
const (
	Handlers = "Handlers" // interface every handler set satisfies
	Register = "Register" // registers every job type on a worker
	JobTypes = "JobTypes" // lists every job type
	// EventTypes lists every event; declared only when the project has events.
	EventTypes = "EventTypes"
	// WorkflowTypes lists every workflow; declared only when the project has some.
	WorkflowTypes = "WorkflowTypes"
)

// Job derives the identifiers of one job type from its base name, the Go form of its
// kind (send_email → SendEmail).
type Job struct {
	Base string
}

// ForKind returns the naming of the job type of kind.
func ForKind(kind string) Job { return Job{Base: gotype.GoName(kind)} }

// KindConst is the constant holding the kind string: KindSendEmail.
func (n Job) KindConst() string { return "Kind" + n.Base }

// Payload is the alias of the newest payload version, the type handlers receive: SendEmail.
func (n Job) Payload() string { return n.Base }

// Version is the payload struct of version v: SendEmailV2. Nested types and enum
// constants of that version start with it (gotype derives them).
func (n Job) Version(v int) string { return versionStruct(n.Base, v) }

// versionStruct is the one rule for payload structs, of jobs and events alike.
func versionStruct(base string, v int) string { return base + "V" + strconv.Itoa(v) }

// upcastFunc is the one rule for hand-written upcasts, of jobs and events alike.
func upcastFunc(base string, v int) string {
	return "Upcast" + base + "V" + strconv.Itoa(v-1) + "ToV" + strconv.Itoa(v)
}

// Handle is the handle type a handler receives: SendEmailJob.
func (n Job) Handle() string { return n.Base + "Job" }

// Handler is the handler interface: SendEmailHandler.
func (n Job) Handler() string { return n.Base + "Handler" }

// HandleMethod is the method of Handler: HandleSendEmail. The catalogue's Handlers
// interface embeds every Handler, so these share one method set.
func (n Job) HandleMethod() string { return "Handle" + n.Base }

// Enqueue inserts one job: EnqueueSendEmail.
func (n Job) Enqueue() string { return "Enqueue" + n.Base }

// EnqueueMany inserts many jobs: EnqueueSendEmailMany.
func (n Job) EnqueueMany() string { return "Enqueue" + n.Base + "Many" }

// RegisterFunc registers the job type's handler on a worker: RegisterSendEmail.
func (n Job) RegisterFunc() string { return "Register" + n.Base }

// TypeVar is the unexported variable describing the job type to the runtime:
// sendEmailType.
func (n Job) TypeVar() string { return gotype.LowerFirst(n.Base) + "Type" }

// Upcast is the hand-written function that upcasts version v-1 payloads into version
// v: UpcastSendEmailV1ToV2.
func (n Job) Upcast(v int) string { return upcastFunc(n.Base, v) }

// Result names the job type's result contract (result: in the spec).
func (n Job) Result() Result { return Result{Base: n.Base + "Result"} }

// Result derives the identifiers of a job type's result contract from its base name,
// the job's followed by Result (charge_card → ChargeCardResult).
type Result struct {
	Base string
}

// Payload is the alias of the newest result version, the one Get returns:
// ChargeCardResult.
func (n Result) Payload() string { return n.Base }

// Version is the result struct of version v: ChargeCardResultV2. Handlers return the
// write version's.
func (n Result) Version(v int) string { return versionStruct(n.Base, v) }

// Upcast is the hand-written function that upcasts version v-1 results into version
// v: UpcastChargeCardResultV1ToV2.
func (n Result) Upcast(v int) string { return upcastFunc(n.Base, v) }

// Get reads a completed job's result: GetChargeCardResult.
func (n Result) Get() string { return "Get" + n.Base }

// ClassMethod is the method of the handle that classifies an error as class:
// RateLimited for rate_limited.
func ClassMethod(class string) string { return gotype.GoName(class) }

// SQLEnqueue is the SQL producers' function that enqueues a job of kind:
// jobc_enqueue_send_email. Kinds are lower snake_case, so the name needs no quoting;
// any other character would become an underscore.
func SQLEnqueue(kind string) string { return sqlName("jobc_enqueue_" + kind) }

// SQLStart is the SQL producers' function that starts a workflow:
// jobc_start_fulfil_order.
func SQLStart(workflow string) string { return sqlName("jobc_start_" + workflow) }

// SQLSignal is the SQL producers' function that sends a workflow a signal:
// jobc_signal_fulfil_order_payment_confirmed.
func SQLSignal(workflow, signal string) string {
	return sqlName("jobc_signal_" + workflow + "_" + signal)
}

// sqlName makes name a SQL identifier that needs no quoting: names are lower
// snake_case, so any other character becomes an underscore.
func sqlName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			b[i] = '_'
		}
	}
	return string(b)
}

// MaxSQLIdent is the length in bytes past which PostgreSQL truncates an identifier.
const MaxSQLIdent = 63
