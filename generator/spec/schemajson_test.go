package spec

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// schemaFile is the JSON Schema of jobc.yaml that editors read through the modeline
// jobc init writes, relative to this package.
const schemaFile = "../../jobc.schema.json"

// SchemaJSON compiles the JSON Schema of jobc.yaml (offline: the 2020-12 metaschema
// is built into the validator) and returns the schema of a config file and of a job
// file named by include. It is exported for the fuzz targets of package spec_test.
func SchemaJSON(t testing.TB) (config, jobFile *jsonschema.Schema) {
	t.Helper()
	b, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", schemaFile, err)
	}
	const url = "file:///jobc.schema.json"
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(url, doc); err != nil {
		t.Fatalf("%s: %v", schemaFile, err)
	}
	if config, err = c.Compile(url); err != nil {
		t.Fatalf("%s: %v", schemaFile, err)
	}
	if jobFile, err = c.Compile(url + "#/$defs/jobFile"); err != nil {
		t.Fatalf("%s: %v", schemaFile, err)
	}
	return config, jobFile
}

// yamlInstance converts a YAML spec file to the JSON value an editor checks against
// the schema.
func yamlInstance(t *testing.T, file string) any {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return YAMLInstance(t, file, b)
}

// YAMLInstance converts the YAML spec b, read from file, to the JSON value an editor
// checks against the schema: mapping keys become strings (versions' integer keys
// included), numbers stay exact. It is exported for package spec_test.
func YAMLInstance(t testing.TB, file string, b []byte) any {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(doc.Content) == 0 {
		t.Fatalf("%s: empty document", file)
	}
	j, err := json.Marshal(JSONValue(doc.Content[0]))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return v
}

// specFiles returns the config file of the project in dir and the job files its
// include patterns name, as Load reads them.
func specFiles(t *testing.T, dir string, p *Project) (config string, jobFiles []string) {
	t.Helper()
	for _, pattern := range p.Include {
		m, err := glob(dir, pattern)
		if err != nil {
			t.Fatalf("%s: include %q: %v", dir, pattern, err)
		}
		for _, f := range m {
			if f != p.File && !slices.Contains(jobFiles, f) {
				jobFiles = append(jobFiles, f)
			}
		}
	}
	return p.File, jobFiles
}

// refusedAfterLoad lists the golden error cases that the loader lets through and a
// later stage of jobc generate refuses for their shape, which the JSON Schema refuses
// too: why, by case.
var refusedAfterLoad = map[string]string{
	"error_payload_not_object": "a payload schema is an object or a boolean, not 42",
}

// TestSchemaJSONAcceptsValidSpecs: every spec the loader accepts — each golden case
// under testdata/ that loads without a diagnostic, and every example project — passes
// the JSON Schema of jobc.yaml, and so does each job file it includes, against the
// schema's jobFile. An editor that checks with the schema never flags a valid spec.
func TestSchemaJSONAcceptsValidSpecs(t *testing.T) {
	config, jobFile := SchemaJSON(t)
	var dirs []string
	golden, err := filepath.Glob("../../testdata/*/jobc.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range golden {
		dirs = append(dirs, filepath.Dir(f))
	}
	var examples []string
	err = filepath.WalkDir("../../examples", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && slices.Contains(ConfigNames(), d.Name()) {
			examples = append(examples, filepath.Dir(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(examples) == 0 {
		t.Fatal("no example project under ../../examples")
	}
	checked, jobFiles := 0, 0
	for _, dir := range append(dirs, examples...) {
		p, err := Load(dir)
		if err != nil {
			if slices.Contains(examples, dir) {
				t.Errorf("%s: example does not load: %v", dir, err)
			}
			continue // the loader refuses it: the schema may or may not
		}
		if why, ok := refusedAfterLoad[filepath.Base(dir)]; ok {
			if err := config.Validate(yamlInstance(t, filepath.Join(dir, p.File))); err == nil {
				t.Errorf("%s: the JSON Schema accepts it, want it refused: %s", dir, why)
			}
			continue
		}
		cfg, files := specFiles(t, dir, p)
		if err := config.Validate(yamlInstance(t, filepath.Join(dir, cfg))); err != nil {
			t.Errorf("%s: the loader accepts it, the JSON Schema does not:\n%v", filepath.Join(dir, cfg), err)
		}
		for _, f := range files {
			if err := jobFile.Validate(yamlInstance(t, filepath.Join(dir, f))); err != nil {
				t.Errorf("%s: the loader accepts it, the JSON Schema's jobFile does not:\n%v", filepath.Join(dir, f), err)
			}
		}
		checked++
		jobFiles += len(files)
	}
	// The golden cases that load cover most of the language; fewer means the walk
	// above missed them.
	if checked < 20 || jobFiles < 5 {
		t.Errorf("checked %d valid specs and %d job files, want at least 20 and 5", checked, jobFiles)
	}
}

// TestSchemaJSONRefusesBadShapes: specs the loader refuses for their shape — an
// unknown key, a value of the wrong type, a missing required key — fail the JSON
// Schema too, at the field the loader names.
func TestSchemaJSONRefusesBadShapes(t *testing.T) {
	config, jobFile := SchemaJSON(t)
	const head = "version: 1\npackage: jobs\nout: jobs\n"
	const payload = "    payload: {versions: {1: {schema: {type: object}}}}\n"
	cases := []struct {
		name, spec string
		file       bool   // the spec is a job file, not a config file
		loaderWant string // in the loader's diagnostics
		schemaWant string // in the schema's error: the instance location and what
	}{
		{"unknown top-level key", head + "packages: x\n", false, `unknown key "packages"`, `at '': additional properties 'packages'`},
		{"unknown job key", head + "jobs:\n  a:\n    quue: email\n" + payload, false, `unknown key "quue"`, `at '/jobs/a': additional properties 'quue'`},
		{"priority out of range", head + "jobs:\n  a:\n    priority: 12\n" + payload, false, "priority must be between 1", `'/jobs/a/priority'`},
		{"priority a string", head + "jobs:\n  a:\n    priority: high\n" + payload, false, "want an integer", `'/jobs/a/priority'`},
		{"timeout without a unit", head + "jobs:\n  a:\n    timeout: 30\n" + payload, false, "want a duration", `'/jobs/a/timeout'`},
		{"queue a list", head + "jobs:\n  a:\n    queue: [email]\n" + payload, false, "want a string", `'/jobs/a/queue'`},
		{"missing payload", head + "jobs:\n  a:\n    queue: email\n", false, `missing required key "payload"`, `'/jobs/a'`},
		{"missing out", "version: 1\npackage: jobs\n", false, `missing required key "out"`, `''`},
		{"version 2", "version: 2\npackage: jobs\nout: jobs\n", false, "unsupported config version 2", `'/version'`},
		{"class without retry", head + "error_classes:\n  transient: {backoff: linear}\n", false, `missing required key "retry"`, `'/error_classes/transient'`},
		{"unknown change", head + "jobs:\n  a:\n    payload:\n      versions:\n        1: {schema: {type: object}}\n        2: {schema: {type: object}, changes: [{rnme: {from: a, to: b}}]}\n", false, `unknown change "rnme"`, `'/jobs/a/payload/versions/2/changes/0'`},
		{"event without subject", head + "events:\n  paid:\n    relay: true\n" + payload, false, `missing required key "subject"`, `'/events/paid'`},
		{"while without running", head + "jobs:\n  a:\n    unique: {key: [id], while: [available, scheduled]}\n" + payload, false, "while must include available, scheduled and running", `'/jobs/a/unique/while'`},
		{"on_conflict unknown", head + "jobs:\n  a:\n    unique: {key: [id], on_conflict: overwrite}\n" + payload, false, `unknown on_conflict "overwrite"`, `'/jobs/a/unique/on_conflict'`},
		{"replace while running", head + "jobs:\n  a:\n    unique: {key: [id], while: [available, scheduled, running], on_conflict: replace}\n" + payload, false, "with on_conflict: replace, while must be [available, scheduled]", `'/jobs/a/unique/while/2'`},
		{"settings of a class never retried", head + "error_classes:\n  invalid: {retry: false, backoff: linear}\n", false, "has no effect: class invalid is never retried", `'/error_classes/invalid/backoff'`},
		{"key of an event not relayed", head + "jobs:\n  a:\n" + payload + "events:\n  paid:\n    subject: paid\n    key: [id]\n    subscribers: [a]\n" + strings.Replace(payload, "type: object", "type: object, required: [id], properties: {id: {type: string}}", 1), false, "the key orders delivery through the relay", `'/events/paid'`},
		{"event that writes nothing", head + "events:\n  paid:\n    subject: paid\n" + payload, false, "publishing it would write nothing", `'/events/paid'`},
		{"sequence with concurrency", head + "jobs:\n  a:\n    sequence: {by: [id]}\n    concurrency: 2\n" + payload, false, "a sequence already runs one job per key at a time", `'/jobs/a/concurrency'`},
		{"rate without per", head + "jobs:\n  a:\n    rate: {limit: 10}\n" + payload, false, `missing required key "per"`, `'/jobs/a/rate'`},
		{"concurrency 0", head + "jobs:\n  a:\n    concurrency: 0\n" + payload, false, "concurrency must be at least 1", `'/jobs/a/concurrency'`},
		{"fairness without by", head + "jobs:\n  a:\n    fairness: {}\n" + payload, false, `missing required key "by"`, `'/jobs/a/fairness'`},
		{"queue limit by a field", head + "queues:\n  q: {rate: {limit: 10, per: 1s, by: [id]}}\njobs:\n  a:\n    queue: q\n" + payload, false, "a queue's limits apply to the queue as a whole", `'/queues/q/rate'`},
		{"queue without limits", head + "queues:\n  q: {}\njobs:\n  a:\n    queue: q\n" + payload, false, "limits nothing", `'/queues/q'`},
		{"config key in a job file", "jobs:\n  a:\n" + payload + "package: jobs\n", true, `unknown key "package"`, `at '': additional properties 'package'`},
	}
	for _, c := range cases {
		dir := t.TempDir()
		cfg, name := filepath.Join(dir, "jobc.yaml"), "jobc.yaml"
		sch := config
		if c.file {
			name, sch = "jobs.yaml", jobFile
			if err := os.WriteFile(cfg, []byte(head+"include: [jobs.yaml]\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(c.spec), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), c.loaderWant) {
			t.Errorf("%s: loader error %v, want one containing %q", c.name, err, c.loaderWant)
		}
		err := sch.Validate(yamlInstance(t, file))
		if err == nil || !strings.Contains(err.Error(), c.schemaWant) {
			t.Errorf("%s: JSON Schema error %v, want one containing %s", c.name, err, c.schemaWant)
		}
	}
	// The golden cases of shape errors fail the schema as well.
	for _, dir := range []string{"error_unknown_key", "error_wrong_type", "error_missing_required_key"} {
		f := filepath.Join("../../testdata", dir, "jobc.yaml")
		if err := config.Validate(yamlInstance(t, f)); err == nil {
			t.Errorf("%s: the JSON Schema accepts it, want it refused", f)
		}
	}
}
