package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// appModule makes a module requiring jobc from this repository, with what it selects
// downloaded, so that the tests can then run the go command offline: the workspace's
// build of these tests may have cached other versions (a fresh module cache held
// golang.org/x/text v0.44.0, the workspace's, not v0.41.0, the module's own).
func appModule(t *testing.T) string {
	t.Helper()
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
	cmd := exec.Command("go", "mod", "download", "all")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go mod download in %s: %v\n%s", dir, err, out)
	}
	return dir
}

// TestCheckRunsSamplesThroughUpcasts: a hand-written upcast that leaves count at 0,
// below version 2's minimum, used to pass check with a note; check now fails, naming
// the function's file:line:col, and prints the input, the output and the error.
func TestCheckRunsSamplesThroughUpcasts(t *testing.T) {
	dir := appModule(t)
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
	dir := appModule(t)
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
