package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGenerateAndDiffTypeScriptProducers: with producers.typescript, generate writes
// the TypeScript file (creating its directory) and says so; a changed spec makes diff
// report the file stale, with the change in the diff, until generate runs again.
func TestGenerateAndDiffTypeScriptProducers(t *testing.T) {
	dir := t.TempDir()
	spec := `version: 1
package: jobs
out: internal/jobs
producers:
  sql: db/jobc_producers.sql
  typescript: web/src/jobs.ts
jobs:
  send_welcome_email:
    payload:
      versions:
        1:
          schema:
            type: object
            additionalProperties: false
            required: [user_id]
            properties:
              user_id: {type: integer}
`
	writeFile(t, filepath.Join(dir, "jobc.yaml"), spec)
	_, errOut, code := jobc(t, "generate", "-C", dir)
	if code != 0 || !strings.Contains(errOut, "generated the producers in web/src/jobs.ts") {
		t.Fatalf("generate: exit %d: %s", code, errOut)
	}
	ts, err := os.ReadFile(filepath.Join(dir, "web", "src", "jobs.ts"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ts), "export async function enqueueSendWelcomeEmail(") {
		t.Fatalf("web/src/jobs.ts has no enqueueSendWelcomeEmail:\n%s", ts)
	}
	if out, errOut, code := jobc(t, "diff", "-C", dir); code != 0 {
		t.Fatalf("diff after generate: exit %d: %s%s", code, out, errOut)
	}
	writeFile(t, filepath.Join(dir, "jobc.yaml"), strings.Replace(spec, "user_id: {type: integer}", "user_id: {type: string}", 1))
	out, _, code := jobc(t, "diff", "-C", dir)
	if code != 1 || !strings.Contains(out, "+++ b/web/src/jobs.ts") || !strings.Contains(out, "-  user_id: number;") ||
		!strings.Contains(out, "+  user_id: string;") {
		t.Fatalf("diff after a spec change: exit %d, want 1 and the TypeScript change:\n%s", code, out)
	}
	if _, errOut, code := jobc(t, "generate", "-C", dir); code != 0 {
		t.Fatalf("generate: %s", errOut)
	}
	if out, errOut, code := jobc(t, "diff", "-C", dir); code != 0 {
		t.Fatalf("diff after the second generate: exit %d: %s%s", code, out, errOut)
	}
}
