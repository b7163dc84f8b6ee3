package generator_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/jobc-dev/jobc/generator"
)

// The golden cases under testdata/ are the generator's spec. Each case is a directory
// with a jobc.yaml and either the generated Go it must produce (at the config's out
// directory) or error.txt, the exact diagnostics it must report. Set
// JOBC_UPDATE_GOLDEN=1 to rewrite the expectations from the current generator.
const updateEnv = "JOBC_UPDATE_GOLDEN"

func goldenCases(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("..", "testdata", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []string
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "jobc.yaml")); err == nil {
			cases = append(cases, d)
		}
	}
	if len(cases) == 0 {
		t.Fatal("no golden cases under testdata/")
	}
	return cases
}

func TestGolden(t *testing.T) {
	update := os.Getenv(updateEnv) != ""
	var packages []string
	for _, dir := range goldenCases(t) {
		name := filepath.Base(dir)
		wantErrFile := filepath.Join(dir, "error.txt")
		_, statErr := os.Stat(wantErrFile)
		isErrCase := statErr == nil
		res, err := generator.Generate(context.Background(), dir)
		t.Run(name, func(t *testing.T) {
			if isErrCase {
				if err == nil {
					t.Fatalf("generation succeeded, want the errors in %s", wantErrFile)
				}
				got := err.Error() + "\n"
				if update {
					writeFile(t, wantErrFile, got)
					return
				}
				want, _ := os.ReadFile(wantErrFile)
				if got != string(want) {
					t.Errorf("errors differ\n--- got\n%s--- want\n%s", got, want)
				}
				return
			}
			if err != nil {
				t.Fatalf("generate: %v", err)
			}
			if update {
				if err := generator.Write(res); err != nil {
					t.Fatal(err)
				}
				return
			}
			changes, err := generator.Diff(res)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range changes {
				t.Errorf("%s is %s (rerun with %s=1 to accept):\n%s", c.Path, c.Kind, updateEnv, c.Diff)
			}
		})
		if !isErrCase && err == nil {
			packages = append(packages, "./"+filepath.ToSlash(filepath.Join(dir, res.Project.Out)))
			if len(res.Project.Jobs) > 0 {
				// The typed test helpers, which only tests import.
				packages = append(packages, "./"+filepath.ToSlash(filepath.Join(dir, generator.TestDir(res.Project))))
			}
		}
	}
	t.Run("compiles", func(t *testing.T) {
		if len(packages) == 0 {
			t.Fatal("no generated packages to compile")
		}
		cmd := exec.Command("go", append([]string{"vet"}, packages...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go vet of the generated packages failed: %v\n%s", err, out)
		}
	})
}

// TestGenerateIsDeterministic generates every case twice and compares byte for byte.
func TestGenerateIsDeterministic(t *testing.T) {
	for _, dir := range goldenCases(t) {
		a, errA := generator.Generate(context.Background(), dir)
		b, errB := generator.Generate(context.Background(), dir)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("%s: one run failed and the other did not: %v / %v", dir, errA, errB)
		}
		if errA != nil {
			if errA.Error() != errB.Error() {
				t.Errorf("%s: errors differ between runs:\n%s\n---\n%s", dir, errA, errB)
			}
			continue
		}
		if len(a.Files) != len(b.Files) {
			t.Fatalf("%s: %d files then %d", dir, len(a.Files), len(b.Files))
		}
		for i := range a.Files {
			if a.Files[i].Path != b.Files[i].Path || string(a.Files[i].Content) != string(b.Files[i].Content) {
				t.Errorf("%s: %s differs between runs", dir, a.Files[i].Path)
			}
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
