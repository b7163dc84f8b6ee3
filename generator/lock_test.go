package generator_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/generator"
	"github.com/jobc-dev/jobc/generator/contract"
	"github.com/jobc-dev/jobc/generator/spec"
)

const lockedSpec = `version: 1
package: jobs
out: jobs
jobs:
  send_email:
    payload:
      versions:
        1:
          schema:
            type: object
            additionalProperties: false
            required: [email]
            properties:
              email: {type: string}
`

func writeSpec(t *testing.T, dir, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "jobc.yaml"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGenerateRefusesEditOfLockedVersion: renaming a field inside released version 1
// used to generate cleanly (and fail every queued job); with jobc.lock it is refused
// with the finding `jobc check` gives, at the edited place.
func TestGenerateRefusesEditOfLockedVersion(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeSpec(t, dir, lockedSpec)

	res, err := generator.Generate(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Unlocked {
		t.Error("no jobc.lock, but Unlocked is false")
	}
	p, err := spec.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	l, err := contract.Lock(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := contract.WriteLock(dir, l); err != nil {
		t.Fatal(err)
	}
	if res, err := generator.Generate(ctx, dir); err != nil || res.Unlocked {
		t.Fatalf("unchanged spec with a lock: err %v, unlocked %v", err, res != nil && res.Unlocked)
	}

	writeSpec(t, dir, strings.NewReplacer("[email]", "[recipient]", " email: {", " recipient: {").Replace(lockedSpec))
	_, err = generator.Generate(ctx, dir)
	var ds spec.Diagnostics
	if !errors.As(err, &ds) || len(ds) != 1 {
		t.Fatalf("edited released version: got %v, want one diagnostic", err)
	}
	want := "jobc.yaml:13:13: jobs.send_email.payload.versions.1.schema.properties: released version 1 of send_email changed since jobc.lock: stored jobs and running workers depend on it, so restore it and make the change in a new version (jobc check shows the diff) [RELEASED_VERSION_CHANGED]"
	if got := ds[0].String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	// The same finding as `jobc check`.
	p, err = spec.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := contract.Verify(p, l)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || fs[0].String() != want {
		t.Errorf("check gives %v, generate %s", fs, want)
	}

	// A baseline given as an option replaces jobc.lock.
	if _, err := generator.GenerateWith(ctx, dir, generator.Options{Baseline: contract.NewLock()}); err != nil {
		t.Errorf("empty baseline: %v", err)
	}
}

// TestGenerateWarnsOfRemovedLockedKinds: a kind, alias or event recorded in jobc.lock
// and gone from the spec used to generate silently; generate now returns the findings
// `jobc check` fails on as warnings, and still generates.
func TestGenerateWarnsOfRemovedLockedKinds(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	released := lockedSpec + `    aliases: [email_send]
  send_sms:
    payload:
      versions:
        1: {schema: {type: object, properties: {phone: {type: string}}}}
events:
  email_bounced:
    subject: mail.bounced
    relay: true
    payload:
      versions:
        1: {schema: {type: object, properties: {email: {type: string}}}}
`
	writeSpec(t, dir, released)
	p, err := spec.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	l, err := contract.Lock(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := contract.WriteLock(dir, l); err != nil {
		t.Fatal(err)
	}
	if res, err := generator.Generate(ctx, dir); err != nil || len(res.Warnings) != 0 {
		t.Fatalf("every locked kind declared: err %v, warnings %v", err, res.Warnings)
	}

	writeSpec(t, dir, lockedSpec)
	res, err := generator.Generate(ctx, dir)
	if err != nil {
		t.Fatalf("generate without send_sms, email_send and email_bounced: %v", err)
	}
	if len(res.Files) != 2 {
		t.Errorf("generated %d files, want send_email's and the catalogue", len(res.Files))
	}
	p, err = spec.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := contract.LoadLock(dir) // positions in jobc.lock, as generate reads it
	if err != nil {
		t.Fatal(err)
	}
	want, err := contract.Verify(p, lock)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range res.Warnings {
		got = append(got, f.String())
	}
	var wantLines []string
	for _, f := range want {
		if f.Rule != contract.RuleKindRemoved && f.Rule != contract.RuleEventRemoved {
			t.Fatalf("check finds more than removed kinds and events: %v", want)
		}
		wantLines = append(wantLines, f.String())
	}
	if len(wantLines) != 3 || strings.Join(got, "\n") != strings.Join(wantLines, "\n") {
		t.Errorf("warnings:\n%s\nwant the findings of check:\n%s", strings.Join(got, "\n"), strings.Join(wantLines, "\n"))
	}
}
