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

// Rule is one lint: of a job's settings (check), or of a payload contract (payload),
// which jobs and events share.
type Rule struct {
	Name    string
	Doc     string
	check   func(in *input, j *spec.Job) []spec.Diagnostic
	payload func(in *input, c spec.Contract, j *spec.Job) []spec.Diagnostic // j: nil for an event
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
		{"no-timeout", "a job without a timeout can hold a worker slot forever", noTimeout, nil},
		{"unbounded-retries", "more than 100 attempts retry for longer than anyone will wait", unboundedRetries, nil},
		{"no-required-fields", "a payload without required fields accepts {} and so any mistake in a producer", nil, noRequired},
		{"open-payload", "without additionalProperties: false a misspelt field is accepted and silently ignored", nil, openPayload},
		{"unique-forever", "a unique key held while completed, without a period, makes the job impossible to enqueue again", uniqueForever, nil},
		{"write-version-behind", "write_version is not the newest version although the release in jobc.lock decodes the newest: finish the rollout", nil, writeBehind},
	}
}

// Lint runs every rule not in skip over every job, and the payload rules over every
// event too.
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
		if r.check != nil {
			for _, j := range p.Jobs {
				for _, d := range r.check(in, j) {
					out = append(out, Finding{Diagnostic: d, Rule: r.Name})
				}
			}
			continue
		}
		for _, j := range p.Jobs {
			for _, d := range r.payload(in, j.Contract(), j) {
				out = append(out, Finding{Diagnostic: d, Rule: r.Name})
			}
		}
		for _, e := range p.Events {
			for _, d := range r.payload(in, e.Contract(), nil) {
				out = append(out, Finding{Diagnostic: d, Rule: r.Name})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func at(j *spec.Job, path, format string, args ...any) []spec.Diagnostic {
	c := j.Contract()
	return []spec.Diagnostic{{Pos: c.Pos, Path: c.Path() + path, Message: fmt.Sprintf(format, args...)}}
}

// atContract is a diagnostic at path under the key that holds c's versions.
func atContract(c spec.Contract, path, format string, args ...any) []spec.Diagnostic {
	return []spec.Diagnostic{{Pos: c.Pos, Path: c.At() + path, Message: fmt.Sprintf(format, args...)}}
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

func noRequired(_ *input, c spec.Contract, j *spec.Job) []spec.Diagnostic {
	if j != nil && j.Schedule != nil {
		return nil // scheduled jobs are enqueued with an empty payload on purpose
	}
	v := c.Payload.Version(c.Payload.WriteVersion)
	if v == nil {
		return nil
	}
	if r, ok := rootKeys(v)["required"]; ok && len(r.Content) > 0 {
		return nil
	}
	return atContract(c, fmt.Sprintf(".versions.%d.schema", v.Number), "the payload has no required fields: {} is a valid payload")
}

func openPayload(_ *input, c spec.Contract, _ *spec.Job) []spec.Diagnostic {
	v := c.Payload.Version(c.Payload.WriteVersion)
	if v == nil {
		return nil
	}
	if ap, ok := rootKeys(v)["additionalProperties"]; ok && ap.Value == "false" {
		return nil
	}
	when := "enqueue"
	if c.IsEvent() {
		when = "publish"
	}
	return atContract(c, fmt.Sprintf(".versions.%d.schema", v.Number), "the payload schema is open: add additionalProperties: false so unknown fields are rejected at %s", when)
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
func writeBehind(in *input, c spec.Contract, _ *spec.Job) []spec.Diagnostic {
	if len(c.Payload.Versions) == 0 || in.lock == nil {
		return nil
	}
	n := c.Payload.Newest().Number
	if c.Payload.WriteVersion >= n {
		return nil
	}
	released := in.lock.Jobs
	who := "workers"
	if c.IsEvent() {
		released, who = in.lock.Events, "consumers and subscriber workers"
	}
	lj := released[c.Name]
	if lj == nil || lj.Highest() < n {
		return nil
	}
	return atContract(c, ".write_version", "writes version %d while the %s of the release in %s already decode version %d: set write_version: %d to finish the rollout",
		c.Payload.WriteVersion, who, in.lock.Source, n, n)
}
