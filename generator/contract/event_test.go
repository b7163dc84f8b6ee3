package contract_test

import (
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/generator/contract"
	"github.com/jobc-dev/jobc/generator/spec"
)

// eventV1 is an event section (from line 4 of the spec) to which each case adds version 2.
const eventV1 = `events:
  order_paid:
    subject: shop.order_paid
    relay: true
    payload:
      versions:
        1:
          schema:
            type: object
            additionalProperties: false
            required: [order_id, amount]
            properties:
              order_id: {type: string}
              amount: {type: integer}
`

// loadEvents loads a spec of the given jobs and events sections (events starts on
// line 4 when jobs is ""), in a new directory, with extra files; check runs Check.
func loadEvents(t *testing.T, jobs, events string, extra map[string]string) (dir string, check func() contract.Findings) {
	t.Helper()
	dir = t.TempDir()
	files := map[string]string{"jobc.yaml": "version: 1\npackage: jobs\nout: jobs\n" + jobs + events}
	for k, v := range extra {
		files[k] = v
	}
	writeFiles(t, dir, files)
	p, err := spec.Load(dir)
	if err != nil {
		t.Fatalf("spec.Load:\n%v", err)
	}
	return dir, func() contract.Findings {
		fs, err := contract.Check(p)
		if err != nil {
			t.Fatal(err)
		}
		return fs
	}
}

// TestCheckEventVersions: an event's versions follow the jobs' rules, with the event's
// paths and names: an incompatible version without changes needs a hand-written
// UpcastOrderPaidV1ToV2, found in the output package like a job's.
func TestCheckEventVersions(t *testing.T) {
	v2 := `        2:
          schema:
            type: object
            additionalProperties: false
            required: [order_id, total]
            properties:
              order_id: {type: string}
              total: {type: integer}
`
	_, check := loadEvents(t, "", eventV1+v2, nil)
	compareLines(t, lines(t, check()), []string{
		`jobc.yaml:18:9: events.order_paid.payload.versions.2: needed upcast missing: write func UpcastOrderPaidV1ToV2(OrderPaidV1) (OrderPaidV2, error) in jobs, or declare changes: version 2 rejects some version 1 payloads (PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL, REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL) [UPCAST_MISSING]`,
		`jobc.yaml:23:13: events.order_paid.payload.versions.2.schema.properties: note: property "amount": property removed from a closed content model; old documents containing it are rejected [PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL]`,
		`jobc.yaml:25:15: events.order_paid.payload.versions.2.schema.properties.total: note: property "total": required property added; old documents never contained it [REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL]`,
	})

	_, check = loadEvents(t, "", eventV1+v2, map[string]string{"jobs/upcast.go": `package jobs

func UpcastOrderPaidV1ToV2(p OrderPaidV1) (OrderPaidV2, error) {
	return OrderPaidV2{OrderID: p.OrderID, Total: p.Amount}, nil
}
`})
	if fs := check(); fs.Errors() != 0 || len(fs) == 0 || fs[0].Rule != contract.RuleUpcastHandWritten {
		t.Errorf("with the hand-written upcast: %v, want only the note %s", lines(t, fs), contract.RuleUpcastHandWritten)
	}

	changes := strings.Replace(v2, "        2:\n", "        2:\n          changes: [{rename: {from: amount, to: total}}]\n", 1)
	_, check = loadEvents(t, "", eventV1+changes, nil)
	if fs := check(); len(fs) != 0 {
		t.Errorf("with declared changes: %v, want no findings", lines(t, fs))
	}
}

// TestVerifyEventBaseline: jobc.lock records events under "events", and an event is
// held to it as a job is: an edited released version, a write_version ahead of the
// release and a removed event are findings; a project without events writes no
// "events" key.
func TestVerifyEventBaseline(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"jobc.yaml": "version: 1\npackage: jobs\nout: jobs\n" + eventV1})
	p, err := spec.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := contract.Lock(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := lock.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"events": {`) || !strings.Contains(string(b), `"order_paid": {`) {
		t.Fatalf("lock file without the event:\n%s", b)
	}
	base, err := contract.ParseLock(contract.LockName, b)
	if err != nil {
		t.Fatal(err)
	}

	verify := func(events string) []string {
		t.Helper()
		d := t.TempDir()
		writeFiles(t, d, map[string]string{"jobc.yaml": "version: 1\npackage: jobs\nout: jobs\n" + events})
		p, err := spec.Load(d)
		if err != nil {
			t.Fatal(err)
		}
		fs, err := contract.Verify(p, base)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range fs {
			out = append(out, f.String())
		}
		return out
	}
	if got := verify(eventV1); len(got) != 0 {
		t.Errorf("unchanged event: %q", got)
	}
	edited := verify(strings.Replace(eventV1, "amount: {type: integer}", "amount: {type: integer, minimum: 1}", 1))
	if len(edited) != 1 || !strings.HasPrefix(edited[0], "jobc.yaml:17:39: events.order_paid.payload.versions.1.schema.properties.amount.minimum: released version 1 of event order_paid changed since jobc.lock") ||
		!strings.HasSuffix(edited[0], "[RELEASED_VERSION_CHANGED]") {
		t.Errorf("edited released version: %q", edited)
	}
	ahead := verify(eventV1 + `        2:
          changes: [{add: {field: note, default: ""}}]
          schema:
            type: object
            additionalProperties: false
            required: [order_id, amount, note]
            properties:
              order_id: {type: string}
              amount: {type: integer}
              note: {type: string}
`)
	if len(ahead) != 1 || !strings.Contains(ahead[0], "events.order_paid.payload.write_version: Publish writes version 2") || !strings.HasSuffix(ahead[0], "[WRITE_VERSION_AHEAD]") {
		t.Errorf("write_version ahead: %q", ahead)
	}
	removed := verify("events: {}\n")
	if len(removed) != 1 || !strings.Contains(removed[0], "events.order_paid: event order_paid is in jobc.lock but no longer in the spec") || !strings.HasSuffix(removed[0], "[EVENT_REMOVED]") {
		t.Errorf("removed event: %q", removed)
	}

	// Jobs only: the lock file is what it was before events existed.
	jobsOnly := load(t, v1, nil)
	l, err := contract.Lock(jobsOnly)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := l.Marshal(); strings.Contains(string(b), `"events"`) {
		t.Errorf("a lock file without events has an events key:\n%s", b)
	}
}

// TestSubscriberVersion: a subscriber typed as the event is stored as the highest
// version of its job, up to the job's write_version, that accepts every payload of the
// event's write version.
func TestSubscriberVersion(t *testing.T) {
	jobs := `jobs:
  audit_payment:
    payload:
      versions:
        1:
          schema:
            type: object
            required: [order_id]
            properties:
              order_id: {type: string}
              amount: {type: integer}
        2:
          schema:
            type: object
            required: [order_id]
            properties:
              order_id: {type: string}
              amount: {type: number}
        3:
          changes: [{add: {field: currency, default: EUR}}]
          schema:
            type: object
            required: [order_id, currency]
            properties:
              order_id: {type: string}
              amount: {type: number}
              currency: {type: string}
`
	events := eventV1 + "    subscribers: [audit_payment]\n"
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"jobc.yaml": "version: 1\npackage: jobs\nout: jobs\n" + jobs + events})
	p, err := spec.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	v, reasons := contract.SubscriberVersion(p.Events[0], p.Jobs[0])
	if v != 2 || len(reasons) != 0 {
		t.Errorf("SubscriberVersion = %d, %v; want version 2 (3 requires a currency the event lacks)", v, reasons)
	}
	// While the job still writes version 1, its released workers may not decode 2 yet:
	// the event is stored as version 1, which accepts it too.
	p.Jobs[0].Payload.WriteVersion = 1
	if v, _ := contract.SubscriberVersion(p.Events[0], p.Jobs[0]); v != 1 {
		t.Errorf("with write_version 1: SubscriberVersion = %d, want 1", v)
	}
	fs, err := contract.Check(p)
	if err != nil {
		t.Fatal(err)
	}
	if fs.Errors() != 0 {
		t.Errorf("findings: %v", lines(t, fs))
	}
}
