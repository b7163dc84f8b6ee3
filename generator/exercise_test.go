package generator_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/generator"
	"github.com/jobc-dev/jobc/generator/contract"
	"github.com/jobc-dev/jobc/generator/spec"
)

const exerciseSpec = `version: 1
package: jobs
out: internal/jobs
jobs:
  tally:
    payload:
      versions:
        1:
          schema:
            type: object
            additionalProperties: false
            required: [count]
            properties:
              count: {type: integer, minimum: 0, maximum: 100}
              unit: {type: string, enum: [kg, lb]}
        2:
          schema:
            type: object
            additionalProperties: false
            required: [count, unit]
            properties:
              count: {type: integer, minimum: 1, maximum: 100}
              unit: {type: string, enum: [kg, lb]}
`

// upcastBelowMinimum keeps count as it is: a version 1 count of 0 is below version
// 2's minimum. jobc check used to pass it with a note (UPCAST_HAND_WRITTEN).
const upcastBelowMinimum = `package jobs

func UpcastTallyV1ToV2(in TallyV1) (TallyV2, error) {
	unit := "kg"
	if in.Unit != nil {
		unit = string(*in.Unit)
	}
	return TallyV2{Count: in.Count, Unit: TallyV1Unit(unit)}, nil
}
`

// TestExerciseFindsAHandWrittenUpcastBelowMinimum: samples of version 1 go through the
// user's hand-written upcast in a throwaway build; the result for count 0 fails
// version 2's minimum, reported at the function with the input, output and error.
func TestExerciseFindsAHandWrittenUpcastBelowMinimum(t *testing.T) {
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	m := &goModule{repo: repo}
	dir := m.module(t, map[string]string{
		"jobc.yaml":               exerciseSpec,
		"internal/jobs/upcast.go": upcastBelowMinimum,
	})
	for _, kv := range offline() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	ctx := context.Background()
	res, err := generator.Generate(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := generator.Write(res); err != nil {
		t.Fatal(err)
	}
	p, err := spec.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := contract.Check(p)
	if err != nil {
		t.Fatal(err)
	}
	if fs.Errors() != 0 {
		t.Fatalf("check without samples: %v", fs)
	}

	ex, err := contract.Exercise(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if ex.Skipped != "" || ex.Samples < 5 {
		t.Fatalf("skipped %q, %d samples", ex.Skipped, ex.Samples)
	}
	// The samples with count 0: without unit, with kg, with lb.
	want := "internal/jobs/upcast.go:3:6: UpcastTallyV1ToV2: a valid version 1 payload upcast to version 2 is not a valid version 2 payload: after upcasting from version 1: invalid tally payload (version 2): /count: minimum: got 0, want 1; workers would fail such jobs (sample below) [UPCAST_OUTPUT_INVALID]"
	if len(ex.Findings) != 3 || ex.Findings.Errors() != 3 {
		t.Fatalf("findings:\n%v", ex.Findings)
	}
	for _, f := range ex.Findings {
		if f.String() != want {
			t.Errorf("finding\n%s\nwant\n%s", f, want)
		}
	}
	f := ex.Findings[0]
	for _, s := range []string{`input (version 1):  {"count":0}`, `output (version 2): {"count":0,"unit":"kg"}`, "minimum"} {
		if !strings.Contains(f.Detail, s) {
			t.Errorf("detail lacks %q:\n%s", s, f.Detail)
		}
	}

	// Fixed, every sample passes.
	writeFiles(t, dir, map[string]string{"internal/jobs/upcast.go": strings.Replace(upcastBelowMinimum, "Count: in.Count", "Count: max(in.Count, 1)", 1)})
	ex, err = contract.Exercise(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Findings) != 0 {
		t.Errorf("findings after the fix:\n%v", ex.Findings)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "internal", "_jobc_check_*")); len(left) != 0 {
		t.Errorf("the throwaway build was left behind: %v", left)
	}
}

// TestExerciseRunsGeneratedChanges: the samples also go through upcasts generated from
// changes (here a rename and a require), and pass.
func TestExerciseRunsGeneratedChanges(t *testing.T) {
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	m := &goModule{repo: repo}
	dir := m.module(t, map[string]string{"jobc.yaml": `version: 1
package: jobs
out: internal/jobs
jobs:
  notify:
    payload:
      versions:
        1: {schema: {type: object, additionalProperties: false, required: [email], properties: {email: {type: string, format: email}, locale: {enum: [en, fr]}}}}
        2:
          changes: [rename: {from: email, to: to}, require: {field: locale, default: en}]
          schema: {type: object, additionalProperties: false, required: [to, locale], properties: {to: {type: string, format: email}, locale: {enum: [en, fr, de]}}}
`})
	for _, kv := range offline() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	ctx := context.Background()
	res, err := generator.Generate(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := generator.Write(res); err != nil {
		t.Fatal(err)
	}
	ex, err := contract.Exercise(ctx, res.Project)
	if err != nil {
		t.Fatal(err)
	}
	// locale absent, en and fr.
	if ex.Samples != 3 || len(ex.Findings) != 0 {
		t.Errorf("%d samples, findings:\n%v", ex.Samples, ex.Findings)
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
