package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// secret stands for the content of the files a CI runner keeps next to the project: it
// must never appear in a diagnostic.
const secret = "SECRET_e4b1c07d"

// outsideProject makes a directory with a project directory proj in it, and next to it
// a directory "outside" holding files whose content a diagnostic would quote: a YAML
// mapping (unknown keys), a scalar (want a mapping, got ...), broken JSON and YAML.
func outsideProject(t *testing.T, files map[string]string, links map[string]string) (proj string) {
	t.Helper()
	base := t.TempDir()
	proj = filepath.Join(base, "proj")
	all := map[string]string{
		"outside/map.yaml":    secret + ": {" + secret + ": 1}\njobs: {" + secret + ": 1}\n",
		"outside/scalar.yaml": "root:x:0:0:" + secret + ":/root:/bin/sh\n",
		"outside/bad.json":    "{\"" + secret + "\": [1, 2\n",
		"outside/bad.yaml":    secret + ": [a, b\n" + secret + ": {\n",
		"outside/schema.json": `{"type": "object", "properties": {"` + secret + `": {"type": "string"}}}`,
		"outside/jobs.yaml":   "jobs:\n  " + secret + ": {payload: {versions: {1: {schema: {type: object}}}}}\n",
	}
	for name, content := range files {
		all["proj/"+name] = content
	}
	for name, content := range all {
		p := filepath.Join(base, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range links {
		p := filepath.Join(proj, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		target = strings.ReplaceAll(target, "$BASE", base)
		if err := os.Symlink(filepath.FromSlash(target), p); err != nil {
			t.Fatal(err)
		}
	}
	return proj
}

// TestLoadStaysInsideTheProject: refs and includes resolve only under the directory of
// jobc.yaml, by path and through symbolic links, each refusal names the spec's
// file:line:col and the ref or include, and no diagnostic quotes a file outside.
func TestLoadStaysInsideTheProject(t *testing.T) {
	ref := func(r string) string {
		return oneJob("type: object\nproperties:\n  a: {$ref: " + r + "}\n")
	}
	include := func(patterns string) string {
		return "version: 1\npackage: jobs\nout: jobs\ninclude: " + patterns + "\n"
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		links map[string]string
		want  string
	}{{
		name:  "ref up",
		files: map[string]string{"jobc.yaml": ref("../outside/map.yaml")},
		want:  `jobc.yaml:12:25: jobs.j.payload.versions.1.schema.properties.a.$ref: $ref "../outside/map.yaml" leads outside the project: schema files must be inside the directory of jobc.yaml`,
	}, {
		name:  "ref far up",
		files: map[string]string{"jobc.yaml": ref("../../../../../../../../etc/passwd")},
		want:  `jobc.yaml:12:25: jobs.j.payload.versions.1.schema.properties.a.$ref: $ref "../../../../../../../../etc/passwd" leads outside the project: schema files must be inside the directory of jobc.yaml`,
	}, {
		name:  "ref up through a subdirectory",
		files: map[string]string{"jobc.yaml": ref("schemas/../../outside/bad.json#/x")},
		want:  `jobc.yaml:12:25: jobs.j.payload.versions.1.schema.properties.a.$ref: $ref "schemas/../../outside/bad.json#/x" leads outside the project: schema files must be inside the directory of jobc.yaml`,
	}, {
		name:  "ref to a linked file",
		files: map[string]string{"jobc.yaml": ref("schemas/s.json")},
		links: map[string]string{"schemas/s.json": "../../outside/schema.json"},
		want:  `jobc.yaml:12:25: jobs.j.payload.versions.1.schema.properties.a.$ref: $ref "schemas/s.json": cannot read schemas/s.json: schemas/s.json is a symbolic link to a place outside the project`,
	}, {
		name:  "ref to a file by an absolute link",
		files: map[string]string{"jobc.yaml": ref("s.yaml")},
		links: map[string]string{"s.yaml": "$BASE/outside/scalar.yaml"},
		want:  `jobc.yaml:12:25: jobs.j.payload.versions.1.schema.properties.a.$ref: $ref "s.yaml": cannot read s.yaml: s.yaml is a symbolic link to a place outside the project`,
	}, {
		name:  "ref into a linked directory",
		files: map[string]string{"jobc.yaml": ref("schemas/bad.yaml")},
		links: map[string]string{"schemas": "../outside"},
		want:  `jobc.yaml:12:25: jobs.j.payload.versions.1.schema.properties.a.$ref: $ref "schemas/bad.yaml": cannot read schemas/bad.yaml: schemas is a symbolic link to a place outside the project`,
	}, {
		name: "ref in an inlined schema",
		files: map[string]string{
			"jobc.yaml":        ref("schemas/a.yaml"),
			"schemas/a.yaml":   "type: object\nproperties:\n  b: {$ref: ../../outside/schema.json}\n",
			"schemas/ok.yaml":  "type: string\n",
			"schemas/sub/x.md": "",
		},
		want: `schemas/a.yaml:3:13: properties.b.$ref: $ref "../../outside/schema.json" leads outside the project: schema files must be inside the directory of jobc.yaml`,
	}, {
		name:  "include up",
		files: map[string]string{"jobc.yaml": include(`["../outside/*.yaml"]`)},
		want:  `jobc.yaml:4:11: include.0: include pattern "../outside/*.yaml" leads outside the project: patterns are relative to the directory of jobc.yaml and stay inside it`,
	}, {
		name:  "include everything up",
		files: map[string]string{"jobc.yaml": include(`["../*", "/etc/*", "jobs/../../**"]`)},
		want: `jobc.yaml:4:11: include.0: include pattern "../*" leads outside the project: patterns are relative to the directory of jobc.yaml and stay inside it
jobc.yaml:4:19: include.1: include pattern "/etc/*" leads outside the project: patterns are relative to the directory of jobc.yaml and stay inside it
jobc.yaml:4:29: include.2: include pattern "jobs/../../**" leads outside the project: patterns are relative to the directory of jobc.yaml and stay inside it`,
	}, {
		name:  "include a linked file",
		files: map[string]string{"jobc.yaml": include(`["jobs/*.yaml"]`), "jobs/ok.yaml": "jobs: {}\n"},
		links: map[string]string{"jobs/evil.yaml": "../../outside/jobs.yaml"},
		want:  `jobs/evil.yaml:1:1: cannot read: jobs/evil.yaml is a symbolic link to a place outside the project`,
	}, {
		name:  "include from a linked directory",
		files: map[string]string{"jobc.yaml": include(`["jobs/*.yaml"]`)},
		links: map[string]string{"jobs": "../outside"},
		want:  `jobc.yaml:4:11: include.0: include pattern "jobs/*.yaml": jobs is a symbolic link to a place outside the project`,
	}, {
		name:  "include everything with a linked directory",
		files: map[string]string{"jobc.yaml": include(`["**"]`)},
		links: map[string]string{"more": "$BASE/outside"},
		want:  `more:1:1: cannot read: more is a symbolic link to a place outside the project`,
	}, {
		name:  "config file linked",
		links: map[string]string{"jobc.yaml": "../outside/map.yaml"},
		want:  `jobc.yaml:1:1: cannot read: jobc.yaml is a symbolic link to a place outside the project`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := outsideProject(t, tc.files, tc.links)
			_, err := Load(dir)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("a diagnostic quotes a file outside the project:\n%v", err)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("diagnostics differ\n--- got\n%s\n--- want\n%s", got, tc.want)
			}
		})
	}
}

// TestLoadFollowsLinksInsideTheProject: a link that stays inside the project is
// followed, for refs and includes alike.
func TestLoadFollowsLinksInsideTheProject(t *testing.T) {
	dir := outsideProject(t, map[string]string{
		"jobc.yaml":             "version: 1\npackage: jobs\nout: jobs\ninclude: [jobs/*.yaml]\n",
		"shared/jobs/a.yaml":    "jobs:\n  a:\n    payload: {versions: {1: {schema: {$ref: ../schemas/s.yaml}}}}\n",
		"shared/schemas/s.yaml": "type: object\nproperties: {x: {type: string}}\n",
	}, map[string]string{
		"jobs/a.yaml": "../shared/jobs/a.yaml",
		"schemas":     "shared/schemas",
	})
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Jobs) != 1 || p.Jobs[0].Kind != "a" {
		t.Fatalf("jobs = %v, want the one job a", p.Jobs)
	}
}

// TestLoadFollowsAbsoluteLinksInsideTheProject: a link by absolute path to a place
// inside the project is followed too (the open goes to the path it resolves to).
func TestLoadFollowsAbsoluteLinksInsideTheProject(t *testing.T) {
	dir := outsideProject(t, map[string]string{
		"jobc.yaml":             oneJob("$ref: schemas/s.yaml\n"),
		"shared/schemas/s.yaml": "type: object\nproperties: {x: {type: string}}\n",
	}, map[string]string{
		"schemas": "$BASE/proj/shared/schemas",
	})
	if _, err := Load(dir); err != nil {
		t.Fatal(err)
	}
}
