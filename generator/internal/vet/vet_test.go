package vet_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/generator/contract"
	"github.com/jobc-dev/jobc/generator/internal/vet"
	"github.com/jobc-dev/jobc/generator/spec"
)

func load(t *testing.T, yaml string) *spec.Project {
	t.Helper()
	return loadIn(t, t.TempDir(), yaml)
}

func loadIn(t *testing.T, dir, yaml string) *spec.Project {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "jobc.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := spec.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const clean = `version: 1
package: jobs
out: jobs
jobs:
  tidy:
    timeout: 1m
    retry: {max_attempts: 5, backoff: exponential, initial: 1s, max: 1h}
    payload:
      versions:
        1:
          schema: {type: object, additionalProperties: false, required: [id], properties: {id: {type: string}}}
`

const sloppy = `version: 1
package: jobs
out: jobs
jobs:
  sloppy:
    retry: {max_attempts: 500}
    unique: {key: [id], while: [available, scheduled, running, completed]}
    payload:
      write_version: 1
      versions:
        1:
          schema: {type: object, properties: {id: {type: string}}}
        2:
          schema: {type: object, properties: {id: {type: string}, n: {type: integer}}}
`

func TestCleanSpecHasNoFindings(t *testing.T) {
	if fs := vet.Lint(load(t, clean), nil); len(fs) != 0 {
		t.Errorf("findings on a clean spec: %v", fs)
	}
}

// lockedProject loads yaml in a new directory whose jobc.lock records it as released.
func lockedProject(t *testing.T, yaml string) *spec.Project {
	t.Helper()
	dir := t.TempDir()
	l, err := contract.Lock(loadIn(t, dir, yaml))
	if err != nil {
		t.Fatal(err)
	}
	if err := contract.WriteLock(dir, l); err != nil {
		t.Fatal(err)
	}
	return loadIn(t, dir, yaml)
}

func TestEveryRuleFires(t *testing.T) {
	fs := vet.Lint(lockedProject(t, sloppy), nil)
	fired := map[string]string{}
	for _, f := range fs {
		fired[f.Rule] = f.String()
		if !strings.HasPrefix(f.String(), "jobc.yaml:5:3: jobs.sloppy") {
			t.Errorf("finding not located at the job: %s", f)
		}
	}
	for _, r := range vet.Rules() {
		if _, ok := fired[r.Name]; !ok {
			t.Errorf("rule %s did not fire on the sloppy spec", r.Name)
		}
	}
	if !strings.Contains(fired["unbounded-retries"], "500 attempts") {
		t.Errorf("unbounded-retries: %q", fired["unbounded-retries"])
	}
	if got := vet.Lint(lockedProject(t, sloppy), map[string]bool{"no-timeout": true}); len(got) != len(fs)-1 {
		t.Errorf("skipping no-timeout left %d findings, want %d", len(got), len(fs)-1)
	}
}

// releaseA is a released spec; releaseB is the README's rollout step B on top of it:
// version 2 is added and version 1 is still written.
const releaseA = `version: 1
package: jobs
out: jobs
jobs:
  send_receipt:
    timeout: 1m
    retry: {max_attempts: 5, backoff: exponential, initial: 1s, max: 1h}
    payload:
      versions:
        1:
          schema: {type: object, additionalProperties: false, required: [email], properties: {email: {type: string}}}
`

const releaseB = releaseA + `        2:
          changes: [rename: {from: email, to: recipient}]
          schema: {type: object, additionalProperties: false, required: [recipient], properties: {recipient: {type: string}}}
`

// TestRolloutStepBPasses: vet used to fail step B of the README's rollout (write the
// old version while the new one rolls out) with write-version-behind. It passes while
// the release in jobc.lock does not decode version 2, and fails at write_version once
// it does: then step C is due.
func TestRolloutStepBPasses(t *testing.T) {
	stepB := strings.Replace(releaseB, "    payload:\n", "    payload:\n      write_version: 1\n", 1)
	dir := t.TempDir()
	l, err := contract.Lock(loadIn(t, dir, releaseA))
	if err != nil {
		t.Fatal(err)
	}
	if err := contract.WriteLock(dir, l); err != nil {
		t.Fatal(err)
	}
	if fs := vet.Lint(loadIn(t, dir, stepB), nil); len(fs) != 0 {
		t.Errorf("step B of the rollout, release A locked: %v", fs)
	}
	if fs := vet.Lint(load(t, stepB), nil); len(fs) != 0 {
		t.Errorf("step B of the rollout, no lock: %v", fs)
	}

	// Release B is locked: its workers decode version 2.
	fs := vet.Lint(lockedProject(t, stepB), nil)
	want := "jobc.yaml:5:3: jobs.send_receipt.payload.write_version: writes version 1 while the workers of the release in jobc.lock already decode version 2: set write_version: 2 to finish the rollout [write-version-behind]"
	if len(fs) != 1 || fs[0].String() != want {
		t.Errorf("after release B was locked: %v\nwant %s", fs, want)
	}
}

// TestPayloadRulesCoverEvents: the payload rules look at events' contracts too, located
// at the event.
func TestPayloadRulesCoverEvents(t *testing.T) {
	const sloppyEvent = `version: 1
package: jobs
out: jobs
events:
  noted:
    subject: app.noted
    relay: true
    payload:
      write_version: 1
      versions:
        1:
          schema: {type: object, properties: {id: {type: string}}}
        2:
          schema: {type: object, properties: {id: {type: string}, n: {type: integer}}}
`
	fired := map[string]string{}
	for _, f := range vet.Lint(lockedProject(t, sloppyEvent), nil) {
		fired[f.Rule] = f.String()
		if !strings.HasPrefix(f.String(), "jobc.yaml:5:3: events.noted") {
			t.Errorf("finding not located at the event: %s", f)
		}
	}
	for _, rule := range []string{"no-required-fields", "open-payload", "write-version-behind"} {
		if _, ok := fired[rule]; !ok {
			t.Errorf("rule %s did not fire on the sloppy event: %v", rule, fired)
		}
	}
	if !strings.Contains(fired["write-version-behind"], "consumers and subscriber workers") || !strings.Contains(fired["open-payload"], "rejected at publish") {
		t.Errorf("event wording: %v", fired)
	}
	if len(fired) != 3 {
		t.Errorf("job rules fired on an event: %v", fired)
	}
}
