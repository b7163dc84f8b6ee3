package spec_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/jobc-dev/jobc/generator"
	"github.com/jobc-dev/jobc/generator/spec"
)

// FuzzSchemaJSON feeds mutated specs to jobc generate and to the JSON Schema of
// jobc.yaml (jobc.schema.json): a spec that generates must pass the schema, so that an
// editor never flags a spec jobc accepts. (The schema may pass specs jobc refuses: it
// checks shapes, not references or versions.) The seed corpus and the directories
// are FuzzLoad's.
func FuzzSchemaJSON(f *testing.F) {
	config, _ := spec.SchemaJSON(f)
	cases := goldenCaseDirs(f)
	for i, dir := range cases {
		b, err := os.ReadFile(filepath.Join(dir, "jobc.yaml"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), b)
	}
	const head = "version: 1\npackage: p\nout: o\n"
	for _, extra := range []string{
		head + "jobs:\n  j:\n    payload: {versions: {+1: {schema: {type: object}}}}\n",
		head + "jobs:\n  j:\n    payload: {versions: {01: {schema: {type: object}}}}\n",
		head + "jobs:\n  j:\n    timeout: 1h30m\n    retry: {initial: .5s, max: 7d}\n    payload: {versions: {1: {schema: true}}}\n",
		head + "jobs:\n  j: &j\n    priority: 0x9\n    payload: {versions: {1: {schema: {type: object}}}}\n  k: *j\n",
	} {
		f.Add(uint8(0), []byte(extra))
	}
	f.Fuzz(func(t *testing.T, c uint8, cfg []byte) {
		dir := t.TempDir()
		copyDir(t, cases[int(c)%len(cases)], dir)
		file := filepath.Join(dir, "jobc.yaml")
		if err := os.WriteFile(file, cfg, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := generator.Generate(context.Background(), dir); err != nil {
			return // refused: the schema may or may not
		}
		if err := config.Validate(spec.YAMLInstance(t, file, cfg)); err != nil {
			t.Fatalf("jobc generate accepts the spec, the JSON Schema does not:\n%s\n%v", cfg, err)
		}
	})
}
