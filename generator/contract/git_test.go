package contract_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/generator/contract"
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
// to ../shared) is refused at the revision as it is in the working tree: the spec
// there does not load, and the error says why.
func TestGitBaselineOutsideProject(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is not installed: jobc check --against needs it, and so does this test")
	}
	repo := t.TempDir()
	gitIn(t, repo, "init", "-q")
	writeFiles(t, repo, map[string]string{
		"shared/money.yaml": "$defs:\n  Amount: {type: object, properties: {cents: {type: integer}}}\n",
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
	_, err := contract.GitBaseline(context.Background(), filepath.Join(repo, "svc"), "HEAD")
	const want = `jobc: --against HEAD: the spec at that revision does not load:
HEAD:jobc.yaml:12:30: jobs.charge.payload.versions.1.schema.properties.amount.$ref: $ref "../shared/money.yaml#/$defs/Amount" leads outside the project: schema files must be inside the directory of jobc.yaml`
	if err == nil || err.Error() != want {
		t.Fatalf("GitBaseline: %v\nwant %s", err, want)
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
