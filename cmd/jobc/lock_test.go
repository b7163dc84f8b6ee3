package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGenerateAndDiffReadTheLock: without jobc.lock generate warns that released
// versions are unprotected; after `jobc lock`, an edit of released version 1 that
// used to generate cleanly is refused by generate and by diff with the finding of
// check, and generate leaves the files on disk alone.
func TestGenerateAndDiffReadTheLock(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "jobc.yaml"), checkSpecV1)
	writeFile(t, filepath.Join(dir, "jobs", "fax.yaml"), checkFaxJob)

	_, errOut, code := jobc(t, "generate", "-C", dir)
	if code != 0 || !strings.Contains(errOut, "jobc: warning: no jobc.lock: released versions are unprotected") {
		t.Fatalf("generate without a lock: exit %d\nstderr:\n%s", code, errOut)
	}
	if _, errOut, code := jobc(t, "lock", "-C", dir); code != 0 {
		t.Fatalf("lock: exit %d\nstderr:\n%s", code, errOut)
	}
	if _, errOut, code := jobc(t, "generate", "-C", dir); code != 0 || strings.Contains(errOut, "warning") {
		t.Fatalf("generate with a lock: exit %d\nstderr:\n%s", code, errOut)
	}
	generated := filepath.Join(dir, "jobs", "send_email.jobc.go")
	before, err := os.ReadFile(generated)
	if err != nil {
		t.Fatal(err)
	}

	writeFile(t, filepath.Join(dir, "jobc.yaml"), strings.Replace(checkSpecV1, "maxLength: 200", "maxLength: 100", 1))
	want := "jobc.yaml:15:37: jobs.send_email.payload.versions.1.schema.properties.email.maxLength: released version 1 of send_email changed since jobc.lock: stored jobs and running workers depend on it, so restore it and make the change in a new version (jobc check shows the diff) [RELEASED_VERSION_CHANGED]\n"
	for _, cmd := range []string{"generate", "diff"} {
		out, errOut, code := jobc(t, cmd, "-C", dir)
		if code != 1 || out != "" || errOut != want {
			t.Errorf("%s after an edit of a released version: exit %d\nstdout:\n%s\nstderr:\n%s\nwant stderr:\n%s", cmd, code, out, errOut, want)
		}
	}
	checkOut, _, _ := jobc(t, "check", "-C", dir)
	if first, _, _ := strings.Cut(checkOut, "\n"); first+"\n" != want {
		t.Errorf("check says %q, generate %q", first, want)
	}
	if after, err := os.ReadFile(generated); err != nil || string(after) != string(before) {
		t.Errorf("a refused generate changed %s (%v)", generated, err)
	}
}

// TestGenerateWarnsOfARemovedLockedKind: a kind recorded in jobc.lock and deleted from
// the spec used to generate silently (its queued jobs would never run); generate now
// warns with the finding check fails on, and still writes the code.
func TestGenerateWarnsOfARemovedLockedKind(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "jobc.yaml"), checkSpecV1)
	writeFile(t, filepath.Join(dir, "jobs", "fax.yaml"), checkFaxJob)
	if _, errOut, code := jobc(t, "lock", "-C", dir); code != 0 {
		t.Fatalf("lock: exit %d\nstderr:\n%s", code, errOut)
	}
	if _, errOut, code := jobc(t, "generate", "-C", dir); code != 0 || strings.Contains(errOut, "warning") {
		t.Fatalf("generate with every locked kind: exit %d\nstderr:\n%s", code, errOut)
	}
	writeFile(t, filepath.Join(dir, "jobc.yaml"), strings.Replace(checkSpecV1, "include: [jobs/*.yaml]\n", "", 1))

	checkOut, checkErr, code := jobc(t, "check", "-C", dir)
	finding, _, _ := strings.Cut(checkOut, "\n")
	if code != 1 || !strings.HasSuffix(finding, "[KIND_REMOVED]") {
		t.Fatalf("check without send_fax: exit %d\nstdout:\n%s\nstderr:\n%s", code, checkOut, checkErr)
	}
	where, msg, _ := strings.Cut(finding, " kind send_fax")
	want := where + " warning: kind send_fax" + msg + "\n"
	out, errOut, code := jobc(t, "generate", "-C", dir)
	if code != 0 || out != "" || !strings.HasPrefix(errOut, want) || strings.Count(errOut, "warning") != 1 {
		t.Fatalf("generate without send_fax: exit %d\nstdout:\n%s\nstderr:\n%s\nwant stderr to start with:\n%s", code, out, errOut, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "jobs", "send_fax.jobc.go")); !os.IsNotExist(err) {
		t.Errorf("generate kept the code of the removed kind: %v", err)
	}
}

// TestInitStartsALock: init writes an empty jobc.lock, so that generate does not warn
// and the first `jobc lock` records the first release.
func TestInitStartsALock(t *testing.T) {
	dir := t.TempDir()
	if _, errOut, code := jobc(t, "init", "-C", dir); code != 0 {
		t.Fatalf("init: exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, "jobc.lock"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"jobc_lock\": 1,\n  \"jobs\": {}\n}\n"; string(b) != want {
		t.Errorf("jobc.lock after init:\n%s\nwant:\n%s", b, want)
	}
	if _, errOut, code := jobc(t, "generate", "-C", dir); code != 0 || strings.Contains(errOut, "warning") {
		t.Errorf("generate after init: exit %d\nstderr:\n%s", code, errOut)
	}
	if out, errOut, code := jobc(t, "check", "-C", dir); code != 0 || out != "" || errOut != "" {
		t.Errorf("check after init: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestKindRemovedAgainstGit: a kind deleted from jobc.yaml, with no jobc.lock, is
// reported by check --against at its place in the spec of that revision.
func TestKindRemovedAgainstGit(t *testing.T) {
	repo := t.TempDir()
	gitIn(t, repo, "init", "-q")
	spec := checkSpecV1 + `  send_fax:
    payload:
      versions:
        1: {schema: {type: object, additionalProperties: false, properties: {number: {type: string}}}}
`
	writeFile(t, filepath.Join(repo, "jobc.yaml"), strings.Replace(spec, "include: [jobs/*.yaml]\n", "", 1))
	gitIn(t, repo, "add", ".")
	gitIn(t, repo, "commit", "-q", "-m", "two kinds")
	writeFile(t, filepath.Join(repo, "jobc.yaml"), strings.Replace(checkSpecV1, "include: [jobs/*.yaml]\n", "", 1))
	if _, errOut, code := jobc(t, "generate", "-C", repo); code != 0 || !strings.Contains(errOut, "released versions are unprotected") {
		t.Fatalf("generate: exit %d\n%s", code, errOut)
	}
	out, errOut, code := jobc(t, "check", "-C", repo, "--against", "HEAD")
	want := "HEAD:jobc.yaml:15:3: jobs.send_fax: kind send_fax is in HEAD but no longer in the spec: its queued jobs would never run; keep it until `jobc status` shows no unfinished send_fax jobs, or list it under aliases of the kind that replaces it [KIND_REMOVED]\n"
	if code != 1 || out != want {
		t.Fatalf("check --against HEAD: exit %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", code, out, want, errOut)
	}
}
