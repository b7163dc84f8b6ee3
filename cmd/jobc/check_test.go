package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const checkSpecV1 = `version: 1
package: jobs
out: jobs
include: [jobs/*.yaml]
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
              email: {type: string, maxLength: 200}
`

const checkFaxJob = `jobs:
  send_fax:
    payload:
      versions:
        1:
          schema: {type: object, additionalProperties: false, properties: {number: {type: string}}}
`

// TestCheckAndLock: check passes without a lock, lock records the spec, an edit of a
// released version fails check with a diff, lock then refuses unless --force.
func TestCheckAndLock(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "jobc.yaml"), checkSpecV1)
	writeFile(t, filepath.Join(dir, "jobs", "fax.yaml"), checkFaxJob)
	lockPath := filepath.Join(dir, "jobc.lock")

	out, errOut, code := jobc(t, "check", "-C", dir)
	if code != 0 || out != "" || !strings.Contains(errOut, "no jobc.lock: checked the upcasts only") {
		t.Fatalf("check without a lock: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if out, errOut, code := jobc(t, "lock", "-C", dir); code != 0 || out != "" || !strings.Contains(errOut, "locked 2 kind(s), 2 version(s)") {
		t.Fatalf("lock: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	locked, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := jobc(t, "check", "-C", dir); code != 0 || out != "" || errOut != "" {
		t.Fatalf("check after lock: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	// Edit released version 1.
	writeFile(t, filepath.Join(dir, "jobc.yaml"), strings.Replace(checkSpecV1, "maxLength: 200", "maxLength: 100", 1))
	out, errOut, code = jobc(t, "check", "-C", dir)
	wantOut := strings.Join([]string{
		`jobc.yaml:15:37: jobs.send_email.payload.versions.1.schema.properties.email.maxLength: released version 1 of send_email changed since jobc.lock: stored jobs and running workers depend on it, so restore it and make the change in a new version (jobc check shows the diff) [RELEASED_VERSION_CHANGED]`,
		`--- send_email version 1 (jobc.lock)`,
		`+++ send_email version 1 (jobc.yaml)`,
		`@@ -2,7 +2,7 @@`,
		`   "additionalProperties": false,`,
		`   "properties": {`,
		`     "email": {`,
		`-      "maxLength": 200,`,
		`+      "maxLength": 100,`,
		`       "type": "string"`,
		`     }`,
		`   },`,
		``,
	}, "\n")
	if code != 1 || out != wantOut || errOut != "jobc: check: 1 error(s), 0 note(s)\n" {
		t.Fatalf("check after an edit: exit %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", code, out, wantOut, errOut)
	}

	// lock refuses and leaves jobc.lock alone; --force overrides.
	out, errOut, code = jobc(t, "lock", "-C", dir)
	if code != 1 || out != wantOut || !strings.Contains(errOut, "jobc: lock: the check failed with 1 error(s); jobc.lock is unchanged") {
		t.Fatalf("lock after an edit: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if b, err := os.ReadFile(lockPath); err != nil || string(b) != string(locked) {
		t.Fatalf("a refused lock changed jobc.lock (%v):\n%s", err, b)
	}
	if _, errOut, code := jobc(t, "lock", "--force", "-C", dir); code != 0 || !strings.Contains(errOut, "--force: locking despite 1 error(s)") {
		t.Fatalf("lock --force: exit %d\nstderr:\n%s", code, errOut)
	}
	if out, errOut, code := jobc(t, "check", "-C", dir); code != 0 || out != "" || errOut != "" {
		t.Fatalf("check after lock --force: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	// A damaged lock file is reported where it is damaged.
	writeFile(t, lockPath, strings.Replace(string(locked), `"maxLength": 200`, `"maxLength": 300`, 1))
	if _, errOut, code := jobc(t, "check", "-C", dir); code != 1 || !strings.Contains(errOut, "jobc.lock:") || !strings.Contains(errOut, "the lock file was edited by hand") {
		t.Fatalf("check with a damaged lock: exit %d\nstderr:\n%s", code, errOut)
	}
}

// git runs git in dir with a configuration of its own.
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

// TestCheckAgainstGit: --against takes the released contracts from the spec at a git
// revision, in a project below the repository's root, with included files.
func TestCheckAgainstGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is not installed: jobc check --against needs it, and so does this test")
	}
	repo := t.TempDir()
	gitIn(t, repo, "init", "-q")
	writeFile(t, filepath.Join(repo, "README"), "not a spec\n")
	gitIn(t, repo, "add", ".")
	gitIn(t, repo, "commit", "-q", "-m", "before the spec")

	dir := filepath.Join(repo, "svc")
	writeFile(t, filepath.Join(dir, "jobc.yaml"), checkSpecV1)
	writeFile(t, filepath.Join(dir, "jobs", "fax.yaml"), checkFaxJob)

	// A revision without the spec released nothing.
	if out, errOut, code := jobc(t, "check", "-C", dir, "--against", "HEAD"); code != 0 || out != "" || errOut != "" {
		t.Fatalf("check --against a revision without the spec: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	gitIn(t, repo, "add", ".")
	gitIn(t, repo, "commit", "-q", "-m", "spec")
	if out, errOut, code := jobc(t, "check", "-C", dir, "--against", "HEAD"); code != 0 || out != "" || errOut != "" {
		t.Fatalf("check --against HEAD, unchanged: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	// Drop send_fax, and add version 2 of send_email with write_version defaulting to it.
	if err := os.Remove(filepath.Join(dir, "jobs", "fax.yaml")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "jobs", "other.yaml"), "jobs: {}\n")
	writeFile(t, filepath.Join(dir, "jobc.yaml"), checkSpecV1+`        2:
          changes: [add: {field: locale, default: en}]
          schema:
            type: object
            additionalProperties: false
            required: [email, locale]
            properties:
              email: {type: string, maxLength: 200}
              locale: {type: string}
`)
	out, errOut, code := jobc(t, "check", "-C", dir, "--against", "HEAD")
	want := strings.Join([]string{
		`jobc.yaml:8:7: jobs.send_email.payload.write_version: enqueue writes version 2 (write_version defaults to the newest version), but workers of the release in HEAD decode send_email versions up to 1: version 2 jobs enqueued during the rollout, or after a rollback, wait until a worker of this release claims them; roll out in two releases: first deploy version 2 with write_version: 1, then set write_version: 2 once no older worker runs [WRITE_VERSION_AHEAD]`,
		"HEAD:jobs/fax.yaml:2:3: jobs.send_fax: kind send_fax is in HEAD but no longer in the spec: its queued jobs would never run; keep it until `jobc status` shows no unfinished send_fax jobs, or list it under aliases of the kind that replaces it [KIND_REMOVED]",
		``,
	}, "\n")
	if code != 1 || out != want || errOut != "jobc: check: 2 error(s), 0 note(s)\n" {
		t.Fatalf("check --against HEAD: exit %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", code, out, want, errOut)
	}

	if _, errOut, code := jobc(t, "check", "-C", dir, "--against", "no-such-branch"); code != 1 || errOut != "jobc: --against no-such-branch: not a commit in this repository\n" {
		t.Fatalf("check --against an unknown revision: exit %d\nstderr:\n%s", code, errOut)
	}
}

const checkEventSpec = `version: 1
package: jobs
out: jobs
events:
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

// TestCheckEvents: an event's contract is checked and locked like a job's. An event
// version incompatible with the one before it, without changes or a hand-written
// upcast, fails jobc check with a finding at its file:line:col; an edit of a locked
// event version fails it too.
func TestCheckEvents(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "jobc.yaml"), checkEventSpec)
	if out, errOut, code := jobc(t, "lock", "-C", dir); code != 0 || out != "" || !strings.Contains(errOut, "locked 0 kind(s), 1 event(s), 1 version(s)") {
		t.Fatalf("lock: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	writeFile(t, filepath.Join(dir, "jobc.yaml"), checkEventSpec+`        2:
          schema:
            type: object
            additionalProperties: false
            required: [order_id, total]
            properties:
              order_id: {type: string}
              total: {type: integer}
`)
	out, errOut, code := jobc(t, "check", "-C", dir)
	if code != 1 || !strings.HasPrefix(out, "jobc.yaml:18:9: events.order_paid.payload.versions.2: needed upcast missing: write func UpcastOrderPaidV1ToV2(OrderPaidV1) (OrderPaidV2, error) in jobs") ||
		!strings.Contains(out, "[UPCAST_MISSING]") || !strings.Contains(out, "events.order_paid.payload.write_version: Publish writes version 2") {
		t.Fatalf("check of an incompatible event version: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	writeFile(t, filepath.Join(dir, "jobc.yaml"), strings.Replace(checkEventSpec, "amount: {type: integer}", "amount: {type: string}", 1))
	out, errOut, code = jobc(t, "check", "-C", dir)
	if code != 1 || !strings.Contains(out, "released version 1 of event order_paid changed since jobc.lock") || !strings.Contains(out, "[RELEASED_VERSION_CHANGED]") {
		t.Fatalf("check of an edited event version: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
