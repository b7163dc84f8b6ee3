package spec_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/generator"
	"github.com/jobc-dev/jobc/generator/spec"
)

// FuzzLoadRefs attacks the project boundary: a fuzzed jobc.yaml, a fuzzed schema file
// (schemas/a.yaml) and a fuzzed job file (jobs/a.yaml) in a project that sits next to
// a directory of files holding a secret, with symbolic links into that directory
// chosen by links (one bit each). Whatever the spec says, loading and generating must
// not panic, must report problems as diagnostics, and neither a diagnostic nor a
// generated file may contain the secret; when generation succeeds, writing it must
// leave the outside directory as it was.
func FuzzLoadRefs(f *testing.F) {
	const head = "version: 1\npackage: jobs\nout: jobs\n"
	job := func(schema string) string {
		return head + "jobs:\n  j:\n    payload:\n      versions:\n        1:\n          schema: " + schema + "\n"
	}
	for _, s := range []struct {
		config, schema, jobs string
		links                uint8
	}{
		{job("{$ref: ../outside/map.yaml}"), "", "", 0},
		{job("{$ref: ../../../../../../../../etc/passwd}"), "", "", 0},
		{job("{$ref: schemas/a.yaml}"), "{type: object, properties: {x: {$ref: ../../outside/schema.json}}}", "", 0},
		{job("{$ref: schemas/link.yaml}"), "", "", 1},
		{job("{$ref: 'up/bad.json#/a'}"), "", "", 4},
		{job("{$ref: 'schemas/a.yaml#/$defs/X'}"), "$defs: {X: {$ref: ../up/scalar.yaml}}\n", "", 4},
		{job("{$ref: abs/map.yaml}"), "", "", 8},
		{job("{type: object, properties: {a: {$ref: 'schemas/a.yaml'}}}"), "{$ref: link.yaml}", "", 1},
		{head + "include: ['../*']\n", "", "", 0},
		{head + "include: ['../outside/*.yaml', '/etc/*']\n", "", "", 0},
		{head + "include: ['jobs/*.yaml']\n", "", "jobs: {a: {payload: {versions: {1: {schema: {$ref: ../up/schema.json}}}}}}\n", 6},
		{head + "include: ['**']\n", "", "", 15},
		{head + "include: ['up/*.yaml']\n", "", "", 4},
		{head + "producers: {sql: up/victim.sh, typescript: abs/x.ts}\njobs: {a: {payload: {versions: {1: {schema: {type: object}}}}}}\n", "", "", 12},
		{"version: 1\npackage: jobs\nout: up\njobs: {a: {payload: {versions: {1: {schema: {type: object}}}}}}\n", "", "", 4},
	} {
		f.Add([]byte(s.config), []byte(s.schema), []byte(s.jobs), s.links)
	}
	f.Fuzz(func(t *testing.T, config, schema, jobs []byte, links uint8) {
		// A fresh secret each run: the fuzzer cannot write it into the spec itself.
		var raw [12]byte
		if _, err := rand.Read(raw[:]); err != nil {
			t.Fatal(err)
		}
		secret := "SECRET" + hex.EncodeToString(raw[:])
		base := t.TempDir()
		proj, outside := filepath.Join(base, "proj"), filepath.Join(base, "outside")
		files := map[string]string{
			"outside/map.yaml":    secret + ": {" + secret + ": 1}\njobs: {" + secret + ": 1}\n",
			"outside/scalar.yaml": "root:x:0:0:" + secret + ":/root:/bin/sh\n",
			"outside/bad.json":    "{\"" + secret + "\": [1, 2\n",
			"outside/schema.json": `{"type": "object", "description": "` + secret + `", "properties": {"` + secret + `": {"type": "string", "default": "` + secret + `"}}}`,
			"outside/jobs.yaml":   "jobs:\n  " + secret[:20] + "x:\n    description: " + secret + "\n    payload: {versions: {1: {schema: {type: object, description: " + secret + "}}}}\n",
			"outside/victim.sh":   "#!/bin/sh\n# " + secret + "\n",
			"proj/jobc.yaml":      string(config),
			"proj/schemas/a.yaml": string(schema),
			"proj/jobs/a.yaml":    string(jobs),
		}
		for name, content := range files {
			p := filepath.Join(base, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for bit, l := range []struct{ name, target string }{
			{"schemas/link.yaml", "../../outside/map.yaml"},
			{"jobs/link.yaml", "../../outside/jobs.yaml"},
			{"up", "../outside"},
			{"abs", outside},
		} {
			if links&(1<<bit) != 0 {
				if err := os.Symlink(l.target, filepath.Join(proj, filepath.FromSlash(l.name))); err != nil {
					t.Fatal(err)
				}
			}
		}
		before := tree(t, outside)
		_, err := spec.Load(proj)
		checkDiagnostics(t, err)
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Fatalf("a diagnostic of spec.Load quotes a file outside the project:\n%v", err)
		}
		res, err := generator.Generate(context.Background(), proj)
		checkDiagnostics(t, err)
		if err != nil {
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("a diagnostic of Generate quotes a file outside the project:\n%v", err)
			}
			return
		}
		for _, f := range res.Files {
			if strings.Contains(string(f.Content), secret) {
				t.Fatalf("generated %s holds content of a file outside the project", f.Path)
			}
		}
		if err := generator.Write(res); err != nil && strings.Contains(err.Error(), secret) {
			t.Fatalf("Write's error quotes a file outside the project: %v", err)
		}
		if after := tree(t, outside); !reflect.DeepEqual(before, after) {
			t.Fatalf("Write changed the files outside the project:\nbefore %v\nafter  %v", before, after)
		}
	})
}

// tree returns every file under dir with its content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		files[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
