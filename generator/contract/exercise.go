package contract

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jobc-dev/jobc/generator/internal/gomod"
	"github.com/jobc-dev/jobc/generator/internal/samples"
	"github.com/jobc-dev/jobc/generator/spec"
)

// Rules of Exercise's findings.
const (
	RuleUpcastOutputInvalid = "UPCAST_OUTPUT_INVALID"
	RuleUpcastFailed        = "UPCAST_FAILED"
)

// maxFailuresShown bounds the failing samples shown per kind and version; the rest
// are counted.
const maxFailuresShown = 3

// ExerciseResult is what Exercise found.
type ExerciseResult struct {
	Findings Findings
	Samples  int // sample documents run
	// Skipped says why nothing ran ("" when samples ran): no older versions, or no
	// go.mod above the project.
	Skipped string
}

// Exercise makes sample documents of every payload version older than the newest
// (package samples) and runs them, in a throwaway build of the user's generated
// package, through what a worker does before it calls the handler
// (runtime.JobType.CheckUpcast): the upcast chain — generated from changes, or the
// hand-written functions — then validation as the newest version. Each sample whose
// result is rejected (UPCAST_OUTPUT_INVALID), or whose upcast returns an error
// (UPCAST_FAILED), is a finding at the last upcast of the chain: the hand-written
// function, or the changes; its Detail holds the input, the output and the error.
//
// The generated package must be up to date (jobc diff) and the upcasts present
// (Check); the build runs `go run` in the module that holds the project, in a
// directory it creates there and removes.
func Exercise(ctx context.Context, p *spec.Project) (*ExerciseResult, error) {
	type step struct {
		job  spec.Contract // a job's or an event's
		from *spec.Version
	}
	var steps []step
	var input bytes.Buffer
	enc := json.NewEncoder(&input)
	res := &ExerciseResult{}
	older := false
	for _, j := range p.Contracts() {
		vs := j.Payload.Versions
		if len(vs) == 0 {
			continue
		}
		older = older || len(vs) > 1
		for _, v := range vs[:len(vs)-1] {
			docs, err := samples.Documents(v.Schema.Value())
			if err != nil {
				return nil, fmt.Errorf("jobc: samples of %s version %d: %w", j.Name, v.Number, err)
			}
			for _, d := range docs {
				payload, err := json.Marshal(d)
				if err != nil {
					return nil, fmt.Errorf("jobc: samples of %s version %d: %w", j.Name, v.Number, err)
				}
				if err := enc.Encode(sampleIn{Kind: j.Path(), Version: v.Number, Payload: payload}); err != nil {
					return nil, fmt.Errorf("jobc: samples: %w", err)
				}
				steps = append(steps, step{j, v})
			}
		}
	}
	if len(steps) == 0 {
		res.Skipped = "no job or event has more than one payload version"
		if older {
			res.Skipped = "no sample document could be made for the older payload versions (samples cover a subset of JSON Schema)"
		}
		return res, nil
	}
	outAbs, err := filepath.Abs(filepath.Join(p.Dir, p.Out))
	if err != nil {
		return nil, fmt.Errorf("jobc: %w", err)
	}
	importPath, root, err := gomod.ImportPath(outAbs)
	if err != nil {
		return nil, err
	}
	if root == "" {
		res.Skipped = "no go.mod in " + p.Dir + " or above it, so no build of the generated package"
		return res, nil
	}
	// Beside the output package, so that an internal package may be imported.
	near := filepath.Dir(outAbs)
	if r, err := filepath.Rel(root, near); err != nil || strings.HasPrefix(r, "..") {
		near = root
	}
	results, err := runSamples(ctx, root, near, importPath, len(p.Events) > 0, len(p.Workflows) > 0, input.Bytes())
	if err != nil {
		return nil, err
	}
	if len(results) != len(steps) {
		return nil, fmt.Errorf("jobc: exercising the upcasts: %d results for %d samples", len(results), len(steps))
	}
	res.Samples = len(steps)
	c := &collector{}
	hw := &handWritten{projectDir: p.Dir, out: p.Out}
	type key struct {
		kind    string // the contract's path: jobs.<kind>, events.<name>
		version int
	}
	failed := map[key]int{}
	inputs := bytes.Split(bytes.TrimSpace(input.Bytes()), []byte("\n"))
	for i, r := range results {
		if r.Error == "" {
			continue
		}
		st := steps[i]
		k := key{st.job.Path(), st.from.Number}
		failed[k]++
		if failed[k] > maxFailuresShown {
			continue
		}
		var in sampleIn
		if err := json.Unmarshal(inputs[i], &in); err != nil {
			return nil, fmt.Errorf("jobc: exercising the upcasts: %w", err)
		}
		pos, path, err := lastUpcast(hw, p, st.job, st.from.Number)
		if err != nil {
			return nil, err
		}
		newest := st.job.Payload.Newest().Number
		rule, what := RuleUpcastOutputInvalid, fmt.Sprintf("is not a valid version %d payload", newest)
		if len(r.Output) == 0 {
			rule, what = RuleUpcastFailed, "fails"
		}
		who := "workers would fail such jobs"
		switch {
		case st.job.IsResult():
			who = "readers would fail to decode such results"
		case st.job.IsEvent():
			who = "subscribers and consumers would fail to decode such events"
		}
		f := finding(Error, st.job.Name, pos, path, rule, fmt.Sprintf(
			"a valid version %d payload upcast to version %d %s: %s; %s (sample below)",
			st.from.Number, newest, what, firstLine(r.Error), who))
		f.Detail = fmt.Sprintf("  input (version %d):  %s\n", st.from.Number, in.Payload)
		if len(r.Output) > 0 {
			f.Detail += fmt.Sprintf("  output (version %d): %s\n", newest, r.Output)
		}
		f.Detail += "  error: " + strings.ReplaceAll(strings.TrimSpace(r.Error), "\n", "\n         ") + "\n"
		c.add(f)
	}
	keys := make([]key, 0, len(failed))
	for k := range failed {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		if keys[a].kind != keys[b].kind {
			return keys[a].kind < keys[b].kind
		}
		return keys[a].version < keys[b].version
	})
	for _, k := range keys {
		if n := failed[k]; n > maxFailuresShown {
			j := contractOf(p, k.kind)
			c.notef(j.Name, j.Payload.Pos, j.At(), RuleUpcastOutputInvalid,
				"%d more version %d samples of %s fail the same way", n-maxFailuresShown, k.version, j.Name)
		}
	}
	res.Findings = c.sorted()
	return res, nil
}

// contractOf returns the contract at path (jobs.<kind>, events.<name>).
func contractOf(p *spec.Project, path string) spec.Contract {
	for _, k := range p.Contracts() {
		if k.Path() == path {
			return k
		}
	}
	return spec.Contract{}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// lastUpcast is where the last upcast a payload of version from goes through is
// declared: the hand-written function, or the changes; the newest version when every
// step is compatible and has none.
func lastUpcast(hw *handWritten, p *spec.Project, j spec.Contract, from int) (spec.Pos, string, error) {
	vs := j.Payload.Versions
	for i := len(vs) - 1; i > 0 && vs[i].Number > from; i-- {
		cur := vs[i]
		if len(cur.Changes) > 0 {
			return cur.Changes[0].Pos, versionPath(j, cur.Number) + ".changes", nil
		}
		if NeedsHandWrittenUpcast(vs[i-1], cur) {
			up := namesFor(j, cur.Number)
			fn, ok, err := hw.lookup(up.Func)
			if err != nil {
				return spec.Pos{}, "", fmt.Errorf("jobc: check %s version %d: %w", j.Name, cur.Number, err)
			}
			if ok {
				return fn.Pos, up.Func, nil
			}
			return cur.Pos, versionPath(j, cur.Number), nil
		}
	}
	n := j.Payload.Newest()
	return n.Pos, versionPath(j, n.Number), nil
}

type sampleIn struct {
	Kind    string          `json:"kind"` // the contract's path: jobs.<kind>, events.<name>
	Version int             `json:"version"`
	Payload json.RawMessage `json:"payload"`
}

type sampleOut struct {
	Output json.RawMessage `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// exerciseMain is the throwaway program: it reads samples as JSON lines and writes
// one result line each.
const exerciseMain = `// Code generated by jobc check, removed when it ends. DO NOT EDIT.

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	jobs %q
)

type sample struct {
	Kind    string          ` + "`json:\"kind\"`" + `
	Version int             ` + "`json:\"version\"`" + `
	Payload json.RawMessage ` + "`json:\"payload\"`" + `
}

type result struct {
	Output json.RawMessage ` + "`json:\"output,omitempty\"`" + `
	Error  string          ` + "`json:\"error,omitempty\"`" + `
}

func main() {
	types := map[string]func(int, []byte) ([]byte, error){}
	for _, jt := range jobs.JobTypes() {
		types["jobs."+jt.Kind] = jt.CheckUpcast
		if jt.HasResult() {
			types["jobs."+jt.Kind+".result"] = jt.CheckResultUpcast
		}
	}
%s
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 64<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var s sample
		var r result
		if err := json.Unmarshal(in.Bytes(), &s); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if check := types[s.Kind]; check == nil {
			r.Error = "the generated package has no " + s.Kind + ": run jobc generate"
		} else {
			b, err := check(s.Version, s.Payload)
			if json.Valid(b) {
				r.Output = b
			}
			if err != nil {
				r.Error = err.Error()
			}
		}
		if err := out.Encode(r); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
`

// eventCheckers is the part of the throwaway program that registers the events' and
// the workflows' upcast checks; a package without them declares no EventTypes or
// WorkflowTypes.
func eventCheckers(events, workflows bool) string {
	var out string
	if events {
		out += "\tfor _, et := range jobs.EventTypes() {\n\t\ttypes[\"events.\"+et.Name] = et.CheckUpcast\n\t}\n"
	}
	if workflows {
		out += "\tfor _, wt := range jobs.WorkflowTypes() {\n\t\ttypes[\"workflows.\"+wt.Name] = wt.CheckUpcast\n" +
			"\t\tfor _, g := range wt.Signals {\n\t\t\ttypes[\"workflows.\"+wt.Name+\".signals.\"+g.Name] = g.CheckUpcast\n\t\t}\n\t}\n"
	}
	return out
}

// runSamples builds and runs the throwaway program in the module at root, in a new
// directory in parent.
func runSamples(ctx context.Context, root, parent, importPath string, events, workflows bool, input []byte) ([]sampleOut, error) {
	// A leading underscore keeps the directory out of ./... patterns while it exists.
	dir, err := os.MkdirTemp(parent, "_jobc_check_")
	if err != nil {
		return nil, fmt.Errorf("jobc: exercising the upcasts: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "main.go"), fmt.Appendf(nil, exerciseMain, importPath, eventCheckers(events, workflows)), 0o644); err != nil {
		return nil, fmt.Errorf("jobc: exercising the upcasts: %w", err)
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return nil, fmt.Errorf("jobc: exercising the upcasts: %w", err)
	}
	cmd := exec.CommandContext(ctx, "go", "run", "./"+filepath.ToSlash(rel))
	cmd.Dir = root
	cmd.Stdin = bytes.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("jobc: exercising the upcasts: go run in %s: %w\n%s", root, err, strings.TrimSpace(stderr.String()))
	}
	var out []sampleOut
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var r sampleOut
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("jobc: exercising the upcasts: %w", err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}
