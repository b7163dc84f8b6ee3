package vet_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/generator/spec"
	"github.com/jobc-dev/jobc/generator/vet"
)

func load(t *testing.T, yaml string) *spec.Project {
	t.Helper()
	dir := t.TempDir()
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

func TestEveryRuleFires(t *testing.T) {
	fs := vet.Lint(load(t, sloppy), nil)
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
	if got := vet.Lint(load(t, sloppy), map[string]bool{"no-timeout": true}); len(got) != len(fs)-1 {
		t.Errorf("skipping no-timeout left %d findings, want %d", len(got), len(fs)-1)
	}
}
