// Package vet lints a loaded jobc project for settings that are legal but likely
// mistakes: a job without a timeout, retries without a bound, a payload contract that
// accepts anything. `jobc vet` prints each finding as file:line:col: path: message
// [rule] and exits 1 when there is any.
package vet

import (
	"fmt"
	"sort"

	"go.yaml.in/yaml/v3"

	"github.com/jobc-dev/jobc/generator/contract"
	"github.com/jobc-dev/jobc/generator/spec"
)

// Finding is one lint result.
type Finding struct {
	spec.Diagnostic
	Rule string
}

func (f Finding) String() string { return fmt.Sprintf("%s [%s]", f.Diagnostic, f.Rule) }

// Rule is one lint.
type Rule struct {
	Name  string
	Doc   string
	check func(in *input, j *spec.Job) []spec.Diagnostic
}

// input is what the rules look at: the project, and its jobc.lock (nil when there is
// none or it does not load; `jobc check` reports an unreadable one).
type input struct {
	p    *spec.Project
	lock *contract.LockFile
}

// Rules returns every lint, in the order they run.
func Rules() []Rule {
	return []Rule{
		{"no-timeout", "a job without a timeout can hold a worker slot forever", noTimeout},
		{"unbounded-retries", "more than 100 attempts retry for longer than anyone will wait", unboundedRetries},
		{"no-required-fields", "a payload without required fields accepts {} and so any mistake in a producer", noRequired},
		{"open-payload", "without additionalProperties: false a misspelt field is accepted and silently ignored", openPayload},
		{"unique-forever", "a unique key held while completed, without a period, makes the job impossible to enqueue again", uniqueForever},
		{"write-version-behind", "write_version is not the newest version although the release in jobc.lock decodes the newest: finish the rollout", writeBehind},
	}
}

// Lint runs every rule not in skip over every job.
func Lint(p *spec.Project, skip map[string]bool) []Finding {
	in := &input{p: p}
	if l, err := contract.LoadLock(p.Dir); err == nil {
		in.lock = l
	}
	var out []Finding
	for _, r := range Rules() {
		if skip[r.Name] {
			continue
		}
		for _, j := range p.Jobs {
			for _, d := range r.check(in, j) {
				out = append(out, Finding{Diagnostic: d, Rule: r.Name})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func at(j *spec.Job, path, format string, args ...any) []spec.Diagnostic {
	return []spec.Diagnostic{{Pos: j.Pos, Path: "jobs." + j.Kind + path, Message: fmt.Sprintf(format, args...)}}
}

func noTimeout(_ *input, j *spec.Job) []spec.Diagnostic {
	if j.Timeout > 0 {
		return nil
	}
	return at(j, "", "no timeout: set timeout (or defaults.timeout) so a stuck handler is cancelled")
}

func unboundedRetries(_ *input, j *spec.Job) []spec.Diagnostic {
	if j.MaxAttempts > 100 {
		return at(j, ".retry.max_attempts", "%d attempts: retries this many are unlikely to succeed; fail the job and alert instead", j.MaxAttempts)
	}
	return nil
}

func rootKeys(v *spec.Version) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	n := v.Schema.Node
	if n == nil || n.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		out[n.Content[i].Value] = n.Content[i+1]
	}
	return out
}

func noRequired(_ *input, j *spec.Job) []spec.Diagnostic {
	if j.Schedule != nil {
		return nil // scheduled jobs are enqueued with an empty payload on purpose
	}
	v := j.Payload.Version(j.Payload.WriteVersion)
	if v == nil {
		return nil
	}
	if r, ok := rootKeys(v)["required"]; ok && len(r.Content) > 0 {
		return nil
	}
	return at(j, fmt.Sprintf(".payload.versions.%d.schema", v.Number), "the payload has no required fields: {} is a valid payload")
}

func openPayload(_ *input, j *spec.Job) []spec.Diagnostic {
	v := j.Payload.Version(j.Payload.WriteVersion)
	if v == nil {
		return nil
	}
	if ap, ok := rootKeys(v)["additionalProperties"]; ok && ap.Value == "false" {
		return nil
	}
	return at(j, fmt.Sprintf(".payload.versions.%d.schema", v.Number), "the payload schema is open: add additionalProperties: false so unknown fields are rejected at enqueue")
}

func uniqueForever(_ *input, j *spec.Job) []spec.Diagnostic {
	u := j.Unique
	if u == nil || u.Period > 0 {
		return nil
	}
	for _, s := range u.While {
		if s == "completed" {
			return at(j, ".unique", "unique while completed and without a period: once one job completes, no other with the same key can ever be enqueued")
		}
	}
	return nil
}

// writeBehind flags a write_version left behind the newest version once the rollout
// can be finished: the released workers (jobc.lock) already decode the newest. Before
// that, writing the older version is step B of the rollout, not a mistake; without a
// lock there is no telling, and nothing is reported.
func writeBehind(in *input, j *spec.Job) []spec.Diagnostic {
	n := j.Payload.Newest().Number
	if j.Payload.WriteVersion >= n || in.lock == nil {
		return nil
	}
	lj := in.lock.Jobs[j.Kind]
	if lj == nil || lj.Highest() < n {
		return nil
	}
	return at(j, ".payload.write_version", "writes version %d while the workers of the release in %s already decode version %d: set write_version: %d to finish the rollout",
		j.Payload.WriteVersion, in.lock.Source, n, n)
}
