package generator_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/generator"
	"github.com/jobc-dev/jobc/generator/internal/codegen/golang"
)

const outsideConfig = `version: 1
package: jobs
out: gen
producers: {sql: db/producers.sql, typescript: web/jobs.ts}
jobs:
  send_email:
    payload:
      versions:
        1: {schema: {type: object, properties: {to: {type: string}}}}
`

// outsideProject makes a project (proj) next to a directory outside it that holds a
// shell script and a stale generated file, the files a write through a link would
// overwrite or remove.
func outsideProject(t *testing.T) (proj, outside string) {
	t.Helper()
	base := t.TempDir()
	proj, outside = filepath.Join(base, "proj"), filepath.Join(base, "outside")
	for name, content := range map[string]string{
		"proj/jobc.yaml":        outsideConfig,
		"outside/victim.sh":     "#!/bin/sh\necho untouched\n",
		"outside/old.jobc.go":   "// " + golang.Header + "\n\npackage jobs\n",
		"outside/producers.sql": "-- not jobc's\n",
	} {
		p := filepath.Join(base, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return proj, outside
}

// snapshot returns every file under dir with its content.
func snapshot(t *testing.T, dir string) map[string]string {
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

func symlink(t *testing.T, target, name string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

// TestGenerateRefusesOutputsLinkedOutside: an out directory or producers file that is a
// symbolic link leading out of the project (itself or a directory on its way) is a
// diagnostic at its place in the spec, and nothing outside is written.
func TestGenerateRefusesOutputsLinkedOutside(t *testing.T) {
	for _, tc := range []struct {
		name  string
		links map[string]string // in the project → target, relative to the project ("$OUT" for outside)
		want  string
	}{{
		name:  "out",
		links: map[string]string{"gen": "../outside"},
		want:  "jobc.yaml:3:6: out: gen is a symbolic link to a place outside the project: jobc writes only inside the project",
	}, {
		name:  "out by an absolute link",
		links: map[string]string{"gen": "$OUT"},
		want:  "jobc.yaml:3:6: out: gen is a symbolic link to a place outside the project: jobc writes only inside the project",
	}, {
		name:  "producers file",
		links: map[string]string{"db/producers.sql": "../../outside/victim.sh"},
		want:  "jobc.yaml:4:18: producers.sql: db/producers.sql is a symbolic link to a place outside the project: jobc writes only inside the project",
	}, {
		name:  "producers directory",
		links: map[string]string{"db": "../outside", "web": "$OUT"},
		want: "jobc.yaml:4:18: producers.sql: db is a symbolic link to a place outside the project: jobc writes only inside the project\n" +
			"jobc.yaml:4:48: producers.typescript: web is a symbolic link to a place outside the project: jobc writes only inside the project",
	}, {
		name:  "producers file by a dangling link",
		links: map[string]string{"web/jobs.ts": "../../outside/new.ts"},
		want:  "jobc.yaml:4:48: producers.typescript: web/jobs.ts is a symbolic link to a place outside the project: jobc writes only inside the project",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			proj, outside := outsideProject(t)
			for name, target := range tc.links {
				symlink(t, strings.ReplaceAll(target, "$OUT", outside), filepath.Join(proj, name))
			}
			before := snapshot(t, outside)
			res, err := generator.Generate(context.Background(), proj)
			if err == nil {
				err = generator.Write(res)
				t.Fatalf("Generate succeeded (Write: %v), want the error\n%s", err, tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("errors differ\n--- got\n%v\n--- want\n%s", err, tc.want)
			}
			if after := snapshot(t, outside); !reflect.DeepEqual(before, after) {
				t.Errorf("files outside the project changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// TestWriteAndDiffRefuseOutputsLinkedOutside: a link that appears between Generate and
// Write (or Diff) is refused by them too: nothing outside is written, read or removed,
// the stale generated file there included.
func TestWriteAndDiffRefuseOutputsLinkedOutside(t *testing.T) {
	for _, tc := range []struct{ link, target, want string }{
		{"gen", "../outside", "jobc: refusing to use gen: gen is a symbolic link to a place outside the project"},
		{"db/producers.sql", "../../outside/victim.sh", "jobc: refusing to use db/producers.sql: db/producers.sql is a symbolic link to a place outside the project"},
	} {
		t.Run(tc.link, func(t *testing.T) {
			proj, outside := outsideProject(t)
			res, err := generator.Generate(context.Background(), proj)
			if err != nil {
				t.Fatal(err)
			}
			symlink(t, tc.target, filepath.Join(proj, tc.link))
			before := snapshot(t, outside)
			if err := generator.Write(res); err == nil || err.Error() != tc.want {
				t.Errorf("Write: %v, want %s", err, tc.want)
			}
			changes, err := generator.Diff(res)
			if err == nil || err.Error() != tc.want {
				t.Errorf("Diff: %v (changes %v), want %s", err, changes, tc.want)
			}
			if after := snapshot(t, outside); !reflect.DeepEqual(before, after) {
				t.Errorf("files outside the project changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// TestWriteFollowsLinksInsideTheProject: a link that stays inside the project, by a
// relative or an absolute path, is an ordinary choice of layout; the generated file
// goes where it points.
func TestWriteFollowsLinksInsideTheProject(t *testing.T) {
	proj, _ := outsideProject(t)
	symlink(t, "../sql/all.sql", filepath.Join(proj, "db", "producers.sql"))
	symlink(t, filepath.Join(proj, "internal", "gen"), filepath.Join(proj, "gen")) // by absolute path
	if err := os.MkdirAll(filepath.Join(proj, "sql"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(proj, "internal", "gen"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := generator.Generate(context.Background(), proj)
	if err != nil {
		t.Fatal(err)
	}
	if err := generator.Write(res); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sql/all.sql", "internal/gen/jobc.go", "internal/gen/send_email.jobc.go"} {
		if _, err := os.Stat(filepath.Join(proj, filepath.FromSlash(name))); err != nil {
			t.Errorf("%s was not written through the link: %v", name, err)
		}
	}
	if fi, err := os.Lstat(filepath.Join(proj, "db", "producers.sql")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("db/producers.sql is no longer a link: %v", err)
	}
	changes, err := generator.Diff(res)
	if err != nil || len(changes) != 0 {
		t.Errorf("Diff after Write: %v, %v; want no changes", changes, err)
	}
}
