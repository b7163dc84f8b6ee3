package contract_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/generator/contract"
	"github.com/jobc-dev/jobc/generator/spec"
)

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=jobc", "GIT_AUTHOR_EMAIL=jobc@example.com",
		"GIT_COMMITTER_NAME=jobc", "GIT_COMMITTER_EMAIL=jobc@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestGitBaselineOutsideProject: a schema file outside the project directory (a $ref
// to ../shared) is taken from the revision too, and a change to it is reported there.
func TestGitBaselineOutsideProject(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is not installed: jobc check --against needs it, and so does this test")
	}
	repo := t.TempDir()
	gitIn(t, repo, "init", "-q")
	money := `$defs:
  Amount:
    type: object
    required: [cents]
    properties:
      cents: {type: integer, minimum: 0}
`
	writeFiles(t, repo, map[string]string{
		"shared/money.yaml": money,
		"svc/jobc.yaml": header + `  charge:
    payload:
      versions:
        1:
          schema:
            type: object
            properties:
              amount: {$ref: "../shared/money.yaml#/$defs/Amount"}
`,
	})
	gitIn(t, repo, "add", ".")
	gitIn(t, repo, "commit", "-q", "-m", "spec")
	writeFiles(t, repo, map[string]string{"shared/money.yaml": strings.Replace(money, "minimum: 0", "minimum: 1", 1)})

	dir := filepath.Join(repo, "svc")
	base, err := contract.GitBaseline(context.Background(), dir, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	p, err := spec.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := contract.Verify(p, base)
	if err != nil {
		t.Fatal(err)
	}
	got := lines(t, fs)
	want := "../shared/money.yaml:6:30: $defs.Amount.properties.cents.minimum: released version 1 of charge changed since HEAD: stored jobs and running workers depend on it, so restore it and make the change in a new version (jobc check shows the diff) [RELEASED_VERSION_CHANGED]"
	if len(got) == 0 || got[0] != want {
		t.Fatalf("got:\n%s\nwant first line:\n%s", strings.Join(got, "\n"), want)
	}
	if diff := strings.Join(got[1:], "\n"); !strings.Contains(diff, "--- charge version 1 (HEAD)\n+++ charge version 1 (jobc.yaml)") ||
		!strings.Contains(diff, `-          "minimum": 0,`) || !strings.Contains(diff, `+          "minimum": 1,`) {
		t.Errorf("diff:\n%s", diff)
	}
}

func TestGitBaselineErrors(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is not installed: jobc check --against needs it, and so does this test")
	}
	notRepo := t.TempDir()
	if _, err := contract.GitBaseline(context.Background(), notRepo, "HEAD"); err == nil || !strings.Contains(err.Error(), "jobc: --against HEAD: git rev-parse: fatal: not a git repository") {
		t.Errorf("outside a repository: %v", err)
	}
	if _, err := contract.GitBaseline(context.Background(), notRepo, "--output=x"); err == nil || err.Error() != `jobc: --against "--output=x": not a git revision` {
		t.Errorf("an option as revision: %v", err)
	}
}
