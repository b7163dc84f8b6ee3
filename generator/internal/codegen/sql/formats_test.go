package sql_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/internal/dialect"
	"github.com/jobc-dev/jobc/internal/schemadocs"
)

// TestFormatsAgreeWithGo checks every format SQL producers check, with each format's
// samples and a set of awkward strings, against Go's Enqueue: the same decision and
// the same reason.
func TestFormatsAgreeWithGo(t *testing.T) {
	t.Parallel()
	formatSamples := schemadocs.FormatSamples()
	names := dialect.Formats(dialect.SQL)
	for _, f := range names {
		row, _ := dialect.LookupFormat(f)
		formatSamples[f] = append(formatSamples[f], row.Examples...)
	}
	var spec strings.Builder
	spec.WriteString("version: 1\npackage: jobs\nout: jobs\njobs:\n  check_formats:\n    payload:\n      versions:\n        1:\n          schema:\n            type: object\n            properties:\n")
	for i, f := range names {
		fmt.Fprintf(&spec, "              f%d: {type: string, format: %s}\n", i, f)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "jobc.yaml"), []byte(spec.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	kinds, file, refused := project(t, dir)
	if len(refused) > 0 || len(kinds) != 1 {
		t.Fatalf("refused: %v", refused)
	}
	pool := migrated(t, file)
	awkward := []string{"", " ", "é", "a b", "%", "%2", "%zz", "%80", "a:%80", "http://%80/", "http://h/%80", "http://[::1%25%80]/", "http://[fe80::1%25%80]/", "http://%80@h/", "http://h:%80/", "http://h/?%80#%80", "http://[%80::1]/", "//[%80::]/", "http://[::1.2.%80.4]/", "http://[é%E2%82::1]/", `\`, "1", "-", ".", "..", ":", "@", "[", "]", "#", "?", "/", "~", "\t", "0", "P", "T", "Z", "+", "𝄞"}
	n := 0
	for i, f := range names {
		for _, s := range append(append([]string(nil), formatSamples[f]...), awkward...) {
			doc, err := json.Marshal(map[string]string{fmt.Sprintf("f%d", i): s})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := compare(t.Context(), pool, kinds[0], doc); err != nil {
				t.Errorf("format %s: %v", f, err)
			}
			n++
		}
	}
	t.Logf("%d formats, %d strings", len(names), n)
}
