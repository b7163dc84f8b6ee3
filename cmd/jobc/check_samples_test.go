package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckRunsSamplesThroughUpcasts: a hand-written upcast that leaves count at 0,
// below version 2's minimum, used to pass check with a note; check now fails, naming
// the function's file:line:col, and prints the input, the output and the error.
func TestCheckRunsSamplesThroughUpcasts(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/app\n\ngo 1.26\n\nrequire github.com/jobc-dev/jobc v0.0.0\n\nreplace github.com/jobc-dev/jobc => "+repo+"\n")
	writeFile(t, filepath.Join(dir, "go.sum"), string(sum))
	writeFile(t, filepath.Join(dir, "jobc.yaml"), `version: 1
package: jobs
out: internal/jobs
jobs:
  tally:
    payload:
      versions:
        1: {schema: {type: object, additionalProperties: false, required: [count], properties: {count: {type: integer, minimum: 0}}}}
        2: {schema: {type: object, additionalProperties: false, required: [count], properties: {count: {type: integer, minimum: 1}}}}
`)
	writeFile(t, filepath.Join(dir, "internal", "jobs", "upcast.go"), `package jobs

// UpcastTallyV1ToV2 forgets that version 2 counts from 1.
func UpcastTallyV1ToV2(in TallyV1) (TallyV2, error) { return TallyV2{Count: in.Count}, nil }
`)
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOWORK", "off")
	if _, errOut, code := jobc(t, "generate", "-C", dir); code != 0 {
		t.Fatalf("generate: exit %d\n%s", code, errOut)
	}
	if out, errOut, code := jobc(t, "check", "--no-samples", "-C", dir); code != 0 || !strings.Contains(out, "[UPCAST_HAND_WRITTEN]") {
		t.Fatalf("check --no-samples: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	out, errOut, code := jobc(t, "check", "-C", dir)
	want := strings.Join([]string{
		"internal/jobs/upcast.go:4:6: UpcastTallyV1ToV2: a valid version 1 payload upcast to version 2 is not a valid version 2 payload: after upcasting from version 1: invalid tally payload (version 2): /count: minimum: got 0, want 1; workers would fail such jobs (sample below) [UPCAST_OUTPUT_INVALID]",
		`  input (version 1):  {"count":0}`,
		`  output (version 2): {"count":0}`,
		"  error: after upcasting from version 1: invalid tally payload (version 2): /count: minimum: got 0, want 1",
	}, "\n")
	if code != 1 || !strings.Contains(out, want) || !strings.Contains(errOut, "jobc: check: 1 error(s)") {
		t.Fatalf("check: exit %d\nstdout:\n%s\nwant it to contain:\n%s\nstderr:\n%s", code, out, want, errOut)
	}
}

// TestCheckRunsEventSamplesThroughUpcasts: an event's versions are exercised like a
// job's: the hand-written upcast that forgets version 2's minimum fails check.
func TestCheckRunsEventSamplesThroughUpcasts(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/app\n\ngo 1.26\n\nrequire github.com/jobc-dev/jobc v0.0.0\n\nreplace github.com/jobc-dev/jobc => "+repo+"\n")
	writeFile(t, filepath.Join(dir, "go.sum"), string(sum))
	writeFile(t, filepath.Join(dir, "jobc.yaml"), `version: 1
package: jobs
out: internal/jobs
events:
  tallied:
    subject: app.tallied
    relay: true
    payload:
      versions:
        1: {schema: {type: object, additionalProperties: false, required: [count], properties: {count: {type: integer, minimum: 0}}}}
        2: {schema: {type: object, additionalProperties: false, required: [count], properties: {count: {type: integer, minimum: 1}}}}
`)
	writeFile(t, filepath.Join(dir, "internal", "jobs", "upcast.go"), `package jobs

// UpcastTalliedV1ToV2 forgets that version 2 counts from 1.
func UpcastTalliedV1ToV2(in TalliedV1) (TalliedV2, error) { return TalliedV2{Count: in.Count}, nil }
`)
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOWORK", "off")
	if _, errOut, code := jobc(t, "generate", "-C", dir); code != 0 {
		t.Fatalf("generate: exit %d\n%s", code, errOut)
	}
	out, errOut, code := jobc(t, "check", "-C", dir)
	want := "internal/jobs/upcast.go:4:6: UpcastTalliedV1ToV2: a valid version 1 payload upcast to version 2 is not a valid version 2 payload: after upcasting from version 1: invalid tallied payload (version 2): /count: minimum: got 0, want 1; subscribers and consumers would fail to decode such events (sample below) [UPCAST_OUTPUT_INVALID]"
	if code != 1 || !strings.Contains(out, want) {
		t.Fatalf("check: exit %d\nstdout:\n%s\nwant it to contain:\n%s\nstderr:\n%s", code, out, want, errOut)
	}
}
