package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestParseDuration(t *testing.T) {
	cases := map[string]time.Duration{
		"90s": 90 * time.Second, "2m": 2 * time.Minute, "1h30m": 90 * time.Minute,
		"7d": 7 * 24 * time.Hour, "0d": 0, "250ms": 250 * time.Millisecond,
	}
	for in, want := range cases {
		got, err := parseDuration(in)
		if err != nil || got != want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "d", "1.5d", "7 days", "1w", "-", "1h1d", "99999999999999999d"} {
		if d, err := parseDuration(bad); err == nil && d > 0 {
			t.Errorf("parseDuration(%q) = %v, want an error", bad, d)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	cases := map[time.Duration]string{
		7 * 24 * time.Hour: "7d", time.Hour: "1h", 90 * time.Minute: "1h30m", 90 * time.Second: "1m30s",
		30 * time.Second: "30s", 250 * time.Millisecond: "250ms", 25 * time.Hour: "25h", 2 * time.Minute: "2m",
	}
	for in, want := range cases {
		if got := formatDuration(in); got != want {
			t.Errorf("formatDuration(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestDurationDiagnostics(t *testing.T) {
	cfg := `version: 1
package: jobs
out: jobs
jobs:
  a:
    timeout: 30
    retry: {initial: 2h}
    payload: {versions: {1: {schema: {type: object}}}}
  b:
    timeout: -5s
    retry: {initial: 1m, max: 30s}
    payload: {versions: {1: {schema: {type: object}}}}
`
	got := loadErrors(t, map[string]string{"jobc.yaml": cfg})
	want := `jobc.yaml:6:14: jobs.a.timeout: want a duration with a unit, such as 30s, 5m, 2h or 7d, got 30
jobc.yaml:10:14: jobs.b.timeout: want a positive duration such as 30s, 5m, 2h or 7d, got "-5s"
jobc.yaml:11:31: jobs.b.retry.max: max 30s is shorter than initial 1m`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"queue", "priority", "timeout", "retry", "errors", "default_error"}
	cases := map[string]string{
		"quue": "queue", "priorty": "priority", "timout": "timeout", "erors": "errors",
		"default_errors": "default_error", "payload": "", "x": "", "": "",
	}
	for in, want := range cases {
		if got := Suggest(in, known); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Suggest("abc", nil); got != "" {
		t.Errorf("Suggest with no candidates = %q", got)
	}
}

func TestGlob(t *testing.T) {
	dir := writeProject(t, map[string]string{
		"jobs/a.yaml": "", "jobs/b.yml": "", "jobs/x/c.yaml": "", "jobs/x/y/d.yaml": "",
		"other/e.yaml": "", "top.yaml": "",
	})
	cases := map[string][]string{
		"jobs/*.yaml":    {"jobs/a.yaml"},
		"jobs/*":         {"jobs/a.yaml", "jobs/b.yml"},
		"jobs/**/*.yaml": {"jobs/a.yaml", "jobs/x/c.yaml", "jobs/x/y/d.yaml"},
		"**/d.yaml":      {"jobs/x/y/d.yaml"},
		"jobs/x/**":      {"jobs/x/c.yaml", "jobs/x/y/d.yaml"},
		"./top.yaml":     {"top.yaml"},
		"nowhere/*.yaml": nil,
		"jobs/?.yaml":    {"jobs/a.yaml"},
	}
	for pattern, want := range cases {
		got, err := glob(dir, pattern)
		if err != nil {
			t.Errorf("glob(%q): %v", pattern, err)
			continue
		}
		for i := range got {
			got[i] = strings.ReplaceAll(got[i], "\\", "/")
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("glob(%q) = %v, want %v", pattern, got, want)
		}
	}
	if _, err := glob(dir, "jobs/[a-"); err == nil {
		t.Error("a bad pattern was accepted")
	}
}

func TestAliasChecks(t *testing.T) {
	cases := map[string]string{
		"recursive": "a: &a [1, *a]\n",
		"bomb": `a: &a ["x","x","x","x","x","x","x","x","x","x"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]
`,
	}
	want := map[string]string{
		"recursive": "jobc.yaml:1:11: YAML alias *a refers to a node that contains it",
		"bomb":      "jobc.yaml:5:4: YAML aliases expand this to more than 100073 nodes: the file has 73, and aliases may add at most 100000",
	}
	for name, cfg := range cases {
		got := loadErrors(t, map[string]string{"jobc.yaml": cfg})
		if got != want[name] {
			t.Errorf("%s: got\n%s\nwant %s", name, got, want[name])
		}
	}
	// Aliases within the limit are fine, and expanded in schemas.
	s := loadSchema(t, map[string]string{"jobc.yaml": oneJob(`type: object
properties:
  a: &str {type: string}
  b: *str`)})
	if got := canonical(t, s); got != `{"properties":{"a":{"type":"string"},"b":{"type":"string"}},"type":"object"}` {
		t.Errorf("canonical = %s", got)
	}
}

func TestDiagnosticIsOneLine(t *testing.T) {
	d := Diagnostic{Pos: Pos{File: "a.yaml", Line: 1, Col: 2}, Path: "x.a\nb", Message: "bad\r\nvalue"}
	if got, want := d.String(), `a.yaml:1:2: x.a\nb: bad\r\nvalue`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestCheckValue(t *testing.T) {
	var root yaml.Node
	src := `type: object
properties:
  n: {type: integer, minimum: 1, maximum: 10, multipleOf: 2}
  s: {type: string, minLength: 2, maxLength: 3, pattern: "^[a-z]+$"}
  e: {enum: [a, 1, null]}
  c: {const: {x: [1]}}
  d: {type: string, format: date-time}
  u: {type: [string, "null"]}
  list: {type: array, items: {type: integer}, maxItems: 2}
  obj:
    type: object
    required: [k]
    additionalProperties: false
    properties: {k: {type: boolean}}
  m: {type: object, additionalProperties: {type: number}}
  r: {$ref: "#/$defs/pos"}
$defs:
  pos: {type: integer, exclusiveMinimum: 0}
`
	if err := yaml.Unmarshal([]byte(src), &root); err != nil {
		t.Fatal(err)
	}
	s := &Schema{Node: root.Content[0]}
	prop := func(name string) *yaml.Node { return mapGet(mapGet(s.Node, "properties"), name) }
	cases := []struct {
		prop string
		v    any
		want string
	}{
		{"n", int64(4), ""}, {"n", 4.0, ""}, {"n", 4.5, "want integer, got 4.5"},
		{"n", int64(12), "12 is more than the maximum 10"}, {"n", int64(0), "0 is less than the minimum 1"},
		{"n", int64(3), "3 is not a multiple of 2"}, {"n", "4", `want integer, got "4"`},
		{"s", "ab", ""}, {"s", "a", "has 1 character, fewer than minLength 2"}, {"s", "AB", `"AB" does not match pattern "^[a-z]+$"`},
		{"e", int64(1), ""}, {"e", nil, ""}, {"e", 1.0, ""}, {"e", "b", `want one of "a", 1, null, got "b"`},
		{"c", map[string]any{"x": []any{int64(1)}}, ""}, {"c", map[string]any{"x": []any{}}, `want {"x":[1]}, got {"x":[]}`},
		{"d", "2024-05-01T10:00:00Z", ""}, {"d", "2024-05-01", `want a date-time such as 2024-05-01T09:30:00Z, got "2024-05-01"`},
		{"u", nil, ""}, {"u", true, "want string or null, got true"},
		{"list", []any{int64(1)}, ""}, {"list", []any{"x"}, `at /0: want integer, got "x"`},
		{"list", []any{int64(1), int64(2), int64(3)}, "has 3 items, more than maxItems 2"},
		{"obj", map[string]any{"k": true}, ""}, {"obj", map[string]any{}, `missing required property "k"`},
		{"obj", map[string]any{"k": true, "z": int64(1)}, `unknown property "z" (additionalProperties: false)`},
		{"obj", map[string]any{"k": "yes"}, `at /k: want boolean, got "yes"`},
		{"m", map[string]any{"a/b": "x"}, `at /a~1b: want number, got "x"`},
		{"r", int64(1), ""}, {"r", int64(0), "0 is not more than the exclusive minimum 0"},
	}
	for _, c := range cases {
		if got := s.CheckValue(prop(c.prop), c.v); got != c.want {
			t.Errorf("CheckValue(%s, %#v) = %q, want %q", c.prop, c.v, got, c.want)
		}
	}
}

func TestUniqueWhileMustHoldUnfinishedStates(t *testing.T) {
	cfg := `version: 1
package: jobs
out: jobs
jobs:
  a:
    unique: {key: [id], while: [available, scheduled]}
    payload: {versions: {1: {schema: {type: object, properties: {id: {type: string}}}}}}
`
	got := loadErrors(t, map[string]string{"jobc.yaml": cfg})
	want := `jobc.yaml:6:32: jobs.a.unique.while: while must include available, scheduled and running: a unique key is held from insert until the job finishes (add completed, failed or cancelled to hold it after)`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestUniqueOnConflict: on_conflict defaults to skip; replace (the debounce)
// holds the key while the job waits, by default and as the spec writes it.
func TestUniqueOnConflict(t *testing.T) {
	cfg := `version: 1
package: jobs
out: jobs
jobs:
  skipped:
    unique: {key: [id]}
    payload: {versions: {1: {schema: {type: object, properties: {id: {type: string}}}}}}
  replaced:
    unique: {key: [id], while: [scheduled, available], on_conflict: replace}
    payload: {versions: {1: {schema: {type: object, properties: {id: {type: string}}}}}}
  replaced_by_default:
    unique: {key: [id], on_conflict: replace}
    payload: {versions: {1: {schema: {type: object, properties: {id: {type: string}}}}}}
`
	p, err := Load(writeProject(t, map[string]string{"jobc.yaml": cfg}))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		onConflict string
		while      []string
	}{
		"skipped":             {"skip", []string{"available", "scheduled", "running"}},
		"replaced":            {"replace", []string{"scheduled", "available"}},
		"replaced_by_default": {"replace", []string{"available", "scheduled"}},
	}
	for _, j := range p.Jobs {
		w := want[j.Kind]
		if j.Unique == nil || j.Unique.OnConflict != w.onConflict || !slices.Equal(j.Unique.While, w.while) {
			t.Errorf("%s: unique %+v, want on_conflict %s while %v", j.Kind, j.Unique, w.onConflict, w.while)
		}
	}
}

func TestInitialAboveTheDefaultMaxRaisesTheCap(t *testing.T) {
	cfg := `version: 1
package: jobs
out: jobs
jobs:
  a:
    retry: {backoff: constant, initial: 2h}
    payload: {versions: {1: {schema: {type: object}}}}
`
	p, err := Load(writeProject(t, map[string]string{"jobc.yaml": cfg}))
	if err != nil {
		t.Fatal(err)
	}
	if b := p.Jobs[0].Backoff; b.Initial != 2*time.Hour || b.Max != 2*time.Hour {
		t.Errorf("backoff %+v, want initial and max 2h", b)
	}
}

// TestLargeSpecIsNoAliasBomb: a spec whose one file declares 84,000 jobs, with no alias,
// has far more nodes than aliases may add; it loads. (The alias check used to count the
// file's own nodes, and refused it as an alias bomb.) Past the size bound, the error is
// the size, naming the file.
func TestLargeSpecIsNoAliasBomb(t *testing.T) {
	const jobs = 84_000
	var b strings.Builder
	b.WriteString("version: 1\npackage: jobs\nout: jobs\njobs:\n")
	for i := range jobs {
		fmt.Fprintf(&b, "  j%d: {payload: {versions: {1: {schema: {type: object}}}}}\n", i)
	}
	p, err := Load(writeProject(t, map[string]string{"jobc.yaml": b.String()}))
	if err != nil {
		t.Fatalf("Load: %.500s", err)
	}
	if len(p.Jobs) != jobs {
		t.Fatalf("%d jobs loaded, want %d", len(p.Jobs), jobs)
	}

	for b.Len() <= maxFileSize {
		fmt.Fprintf(&b, "  j%d: {payload: {versions: {1: {schema: {type: object}}}}}\n", b.Len())
	}
	got := loadErrors(t, map[string]string{"jobc.yaml": b.String()})
	if want := "jobc.yaml:1:1: cannot read: larger than 8 MiB"; got != want {
		t.Errorf("a config file past the size bound: got %.500s, want %s", got, want)
	}
}

// An empty value where a name is wanted is refused, not taken as "here" or skipped.
func TestEmptyNamesAreRefused(t *testing.T) {
	const job = "jobs:\n  j:\n    payload: {versions: {1: {schema: {type: object}}}}\n"
	cases := map[string]struct{ spec, want string }{
		"out": {"version: 1\npackage: jobs\nout: \"\"\n" + job,
			`jobc.yaml:3:6: out: is empty: name a directory inside the project ("." for the project's own)`},
		"subscriber": {"version: 1\npackage: jobs\nout: jobs\n" + job +
			"events:\n  e:\n    relay: false\n    subscribers: [\"\"]\n    payload: {versions: {1: {schema: {type: object}}}}\n",
			"jobc.yaml:10:19: events.e.subscribers.0: is empty: name a job kind"},
	}
	for name, c := range cases {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "jobc.yaml"), []byte(c.spec), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(dir)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Load = %v, want a diagnostic %q", name, err, c.want)
		}
	}
}
