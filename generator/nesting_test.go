package generator_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/generator"
	"github.com/jobc-dev/jobc/generator/spec"
)

// writeNested writes a project whose one job has a payload nested depth schema levels
// deep: objects with an integer beside the next object, and an integer at the last
// level (the payload object is level 1).
func writeNested(tb testing.TB, dir string, depth int) {
	tb.Helper()
	var b strings.Builder
	b.WriteString("version: 1\npackage: deep\nout: deep\njobs:\n  deep:\n    payload:\n      versions:\n        1:\n          schema: ")
	for range depth - 1 {
		b.WriteString("{type: object, properties: {n: {type: integer}, c: ")
	}
	b.WriteString("{type: integer}")
	b.WriteString(strings.Repeat("}}", depth-1))
	b.WriteString("\n")
	if err := os.WriteFile(filepath.Join(dir, "jobc.yaml"), []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkNested generates a payload nested depth levels deep, up to the bound: the
// cost of each level grows with its depth (the names of nested types are their
// parents' names and theirs), and the bound keeps the whole in hand.
// `go test -run X -bench Nested ./generator/`.
func BenchmarkNested(b *testing.B) {
	for _, depth := range []int{8, 16, 32, spec.MaxSchemaDepth} {
		b.Run(fmt.Sprint(depth), func(b *testing.B) {
			dir := b.TempDir()
			writeNested(b, dir, depth)
			for b.Loop() {
				if _, err := generator.Generate(context.Background(), dir); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNestedTooDeep: a payload far past the bound is refused at a cost linear in
// its size. (Past about 5,000 levels the YAML parser refuses the file first, at its
// own bound of 10,000 nested collections.)
func BenchmarkNestedTooDeep(b *testing.B) {
	for _, depth := range []int{500, 1000, 2000, 4000} {
		b.Run(fmt.Sprint(depth), func(b *testing.B) {
			dir := b.TempDir()
			writeNested(b, dir, depth)
			for b.Loop() {
				if _, err := generator.Generate(context.Background(), dir); err == nil {
					b.Fatal("a payload nested past the bound was accepted")
				}
			}
		})
	}
}

// TestNestingBound: a payload nested MaxSchemaDepth levels generates; one level more is
// refused, at the schema past the bound, with the bound in the message.
func TestNestingBound(t *testing.T) {
	dir := t.TempDir()
	writeNested(t, dir, spec.MaxSchemaDepth)
	res, err := generator.Generate(context.Background(), dir)
	if err != nil {
		t.Fatalf("a payload nested %d levels: %v", spec.MaxSchemaDepth, err)
	}
	if len(res.Files) != 2 {
		t.Errorf("%d files generated, want the job's and the catalogue", len(res.Files))
	}

	writeNested(t, dir, spec.MaxSchemaDepth+1)
	_, err = generator.Generate(context.Background(), dir)
	// The first schema past the bound is the integer n beside the 64th object, written
	// after 64 openings on line 9, behind "          schema: ".
	opening := "{type: object, properties: {n: {type: integer}, c: "
	path := "jobs.deep.payload.versions.1.schema" + strings.Repeat(".properties.c", spec.MaxSchemaDepth-1) + ".properties.n"
	col := len("          schema: ") + (spec.MaxSchemaDepth-1)*len(opening) + len("{type: object, properties: {n: ") + 1
	want := fmt.Sprintf("jobc.yaml:9:%d: %s: the schema nests deeper than 64 levels: move the inner schemas into $defs and refer to them with $ref", col, path)
	if err == nil || err.Error() != want {
		t.Errorf("a payload nested %d levels:\n got %v\nwant %s", spec.MaxSchemaDepth+1, err, want)
	}
}
