package generator_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/generator"
)

// TestDiffReportsTypeScript: `jobc diff` holds the TypeScript file to the spec like
// the Go files, missing and stale, and Write creates its directory.
func TestDiffReportsTypeScript(t *testing.T) {
	dir := t.TempDir()
	writeSpec(t, dir, `version: 1
package: jobs
out: jobs
producers: {sql: db/jobc_producers.sql, typescript: web/gen/jobs.ts}
jobs:
  ping:
    payload:
      versions:
        1: {schema: {type: object, additionalProperties: false, properties: {n: {type: integer}}}}
`)
	res, err := generator.Generate(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	const ts = "web/gen/jobs.ts"
	changeOf := func() string {
		t.Helper()
		changes, err := generator.Diff(res)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range changes {
			if c.Path == filepath.FromSlash(ts) {
				return c.Kind
			}
		}
		return ""
	}
	if got := changeOf(); got != "missing" {
		t.Errorf("before Write, %s is %q, want missing", ts, got)
	}
	if err := generator.Write(res); err != nil {
		t.Fatal(err)
	}
	if got := changeOf(); got != "" {
		t.Errorf("after Write, %s is %q, want no change", ts, got)
	}
	path := filepath.Join(dir, ts)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "export async function enqueuePing(") {
		t.Fatalf("%s has no enqueuePing:\n%s", ts, b)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), "n?: number", "n?: string", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := changeOf(); got != "stale" {
		t.Errorf("after an edit, %s is %q, want stale", ts, got)
	}
}
