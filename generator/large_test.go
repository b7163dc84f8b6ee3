package generator_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/generator"
)

// writeCatalog writes a project of n job types, each with a payload of nested objects,
// arrays, enums, optional fields and formats, split over several included files.
func writeCatalog(tb testing.TB, dir string, n int) {
	tb.Helper()
	var cfg strings.Builder
	cfg.WriteString("version: 1\npackage: big\nout: big\ninclude: [jobs/*.yaml]\nerror_classes:\n  transient: {retry: true}\n  invalid: {retry: false}\n")
	if err := os.MkdirAll(filepath.Join(dir, "jobs"), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "jobc.yaml"), []byte(cfg.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	const perFile = 100
	for f := 0; f*perFile < n; f++ {
		var b strings.Builder
		b.WriteString("jobs:\n")
		for i := f * perFile; i < min(n, (f+1)*perFile); i++ {
			fmt.Fprintf(&b, `  job_%04d:
    description: Job number %d of the large catalogue.
    queue: queue_%d
    priority: %d
    timeout: 30s
    retry: {max_attempts: 10, backoff: exponential, initial: 1s, max: 1h, jitter: 0.1}
    errors: [transient, invalid]
    payload:
      versions:
        1:
          schema:
            type: object
            additionalProperties: false
            required: [id, customer, lines]
            properties:
              id: {type: string, format: uuid}
              status: {type: string, enum: [pending, paid, refunded]}
              customer:
                type: object
                required: [email]
                properties:
                  email: {type: string, format: email}
                  name: {type: string}
              lines:
                type: array
                items:
                  type: object
                  required: [sku, quantity]
                  properties:
                    sku: {type: string}
                    quantity: {type: integer, minimum: 1}
                    price: {type: number}
              placed_at: {type: string, format: date-time}
              note: {type: [string, "null"]}
`, i, i, i%10, i%9+1)
		}
		if err := os.WriteFile(filepath.Join(dir, "jobs", fmt.Sprintf("part_%02d.yaml", f)), []byte(b.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkGenerate1000 generates a catalogue of 1,000 job types (load, check, convert,
// emit and gofmt; no writing). `go test -bench Generate1000 ./generator/`.
func BenchmarkGenerate1000(b *testing.B) {
	dir := b.TempDir()
	writeCatalog(b, dir, 1000)
	b.ResetTimer()
	for b.Loop() {
		res, err := generator.Generate(context.Background(), dir)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Files) != 1001 {
			b.Fatalf("%d files", len(res.Files))
		}
	}
}

// TestLargeCatalogCompiles generates 1,000 job types into a package inside this module
// and builds it: the generator's output must compile at scale, not only for the golden
// cases.
func TestLargeCatalogCompiles(t *testing.T) {
	// Inside the module (so the package can import the runtime), under testdata (so
	// that ./... patterns never pick it up).
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("testdata", "large-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	writeCatalog(t, dir, 1000)
	res, err := generator.Generate(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := generator.Write(res); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "vet", "./"+filepath.ToSlash(filepath.Join(dir, "big"))).CombinedOutput()
	if err != nil {
		t.Fatalf("go vet of the generated 1,000-type package: %v\n%s", err, out)
	}
}
