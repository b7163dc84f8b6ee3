package contract

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jobc-dev/jobc/generator/internal/compat"
	"github.com/jobc-dev/jobc/generator/internal/names"
	"github.com/jobc-dev/jobc/generator/spec"
)

// NeedsHandWrittenUpcast reports whether version cur needs an upcast the user writes:
// it declares no changes, and it does not accept every payload its predecessor prev
// accepted.
func NeedsHandWrittenUpcast(prev, cur *spec.Version) bool {
	if len(cur.Changes) > 0 {
		return false
	}
	return !compat.Compatible(prev.Schema.Value(), cur.Schema.Value())
}

// Check checks how each payload version of each job and event follows from the one
// before it (jobs and events are payload contracts alike, spec.Contract):
//
//   - with changes, applying them to every payload of the previous version must give
//     a payload this version accepts (CHANGES_INCORRECT, with a note per reason), and
//     the default of each added field must be valid (CHANGE_DEFAULT_INVALID);
//   - without changes, a version that rejects some payloads of the previous one needs
//     a hand-written Upcast<Name>V<n-1>ToV<n> in the output package: UPCAST_MISSING
//     (with a note per reason) when no hand-written file declares it,
//     UPCAST_SIGNATURE when its signature is wrong, and the note UPCAST_HAND_WRITTEN
//     when it is there.
//
// The error is for a failure to read the output package, not for findings.
func Check(p *spec.Project) (Findings, error) {
	c := &collector{}
	if err := check(c, p); err != nil {
		return nil, err
	}
	return c.sorted(), nil
}

func check(c *collector, p *spec.Project) error {
	hw := &handWritten{projectDir: p.Dir, out: p.Out}
	for _, k := range p.Contracts() {
		vs := k.Payload.Versions
		for i := 1; i < len(vs); i++ {
			if vs[i-1].Number != vs[i].Number-1 || vs[i-1].Schema == nil || vs[i].Schema == nil {
				continue // reported by spec.Load
			}
			if err := checkStep(c, hw, p, k, vs[i-1], vs[i]); err != nil {
				return err
			}
		}
	}
	checkSubscribers(c, p)
	checkWorkflows(c, p)
	return nil
}

// upcastNames are the Go names involved in a hand-written upcast into version n.
type upcastNames struct {
	Func, From, To string
}

func namesFor(k spec.Contract, n int) upcastNames {
	if k.IsEvent() {
		e := names.ForEvent(k.Name)
		return upcastNames{Func: e.Upcast(n), From: e.Version(n - 1), To: e.Version(n)}
	}
	if k.IsSignal() {
		wf, sig := k.WorkflowSignal()
		g := names.ForWorkflow(wf).Signal(sig)
		return upcastNames{Func: g.Upcast(n), From: g.Version(n - 1), To: g.Version(n)}
	}
	if k.IsWorkflow() {
		w := names.ForWorkflow(k.Name)
		return upcastNames{Func: w.Upcast(n), From: w.Version(n - 1), To: w.Version(n)}
	}
	if k.IsResult() {
		r := names.ForKind(k.Name).Result()
		return upcastNames{Func: r.Upcast(n), From: r.Version(n - 1), To: r.Version(n)}
	}
	j := names.ForKind(k.Name)
	return upcastNames{Func: j.Upcast(n), From: j.Version(n - 1), To: j.Version(n)}
}

func (u upcastNames) want() string {
	return fmt.Sprintf("func %s(%s) (%s, error)", u.Func, u.From, u.To)
}

func versionPath(k spec.Contract, n int) string {
	return k.At() + ".versions." + strconv.Itoa(n)
}

func outDir(p *spec.Project) string {
	if p.Out == "." || p.Out == "" {
		return "./"
	}
	return filepath.ToSlash(p.Out)
}

func checkStep(c *collector, hw *handWritten, p *spec.Project, k spec.Contract, prev, cur *spec.Version) error {
	vpath := versionPath(k, cur.Number)
	up := namesFor(k, cur.Number)
	if len(cur.Changes) > 0 {
		checkChanges(c, p, k, prev, cur, up)
		return nil
	}
	reasons := compat.Check(prev.Schema.Value(), cur.Schema.Value())
	if len(reasons) == 0 {
		return nil
	}
	fn, ok, err := hw.lookup(up.Func)
	if err != nil {
		return fmt.Errorf("jobc: check %s version %d: %w", k.Name, cur.Number, err)
	}
	switch {
	case !ok:
		c.errorf(k.Name, cur.Pos, vpath, RuleUpcastMissing,
			"needed upcast missing: write %s in %s, or declare changes: version %d rejects some version %d payloads (%s)",
			up.want(), outDir(p), cur.Number, prev.Number, ruleList(reasons))
		explain(c, k.Name, cur.Schema, reasons)
	case fn.Generic || len(fn.Params) != 1 || fn.Params[0] != up.From || len(fn.Results) != 2 || fn.Results[0] != up.To || fn.Results[1] != "error":
		what := "has type " + fn.signature()
		if fn.Generic {
			what = "is generic"
		}
		c.errorf(k.Name, fn.Pos, vpath, RuleUpcastSignature,
			"%s %s; want %s: workers upcast version %d payloads with it", up.Func, what, up.want(), prev.Number)
	default:
		c.notef(k.Name, cur.Pos, vpath, RuleUpcastHandWritten,
			"version %d rejects some version %d payloads (%s), so workers upcast them with the hand-written %s at %s",
			cur.Number, prev.Number, ruleList(reasons), up.Func, fn.Pos)
	}
	return nil
}

func checkChanges(c *collector, p *spec.Project, k spec.Contract, prev, cur *spec.Version, up upcastNames) {
	cpath := versionPath(k, cur.Number) + ".changes"
	model, problems := applyChanges(prev, cur)
	for _, pr := range problems {
		ch := cur.Changes[pr.index]
		c.errorf(k.Name, ch.Pos, cpath+"."+strconv.Itoa(pr.index)+pr.suffix, pr.rule, "%s", pr.msg)
	}
	if model == nil {
		return
	}
	reasons := compat.Check(model, cur.Schema.Value())
	if len(reasons) == 0 {
		return
	}
	c.errorf(k.Name, cur.Changes[0].Pos, cpath, RuleChangesIncorrect,
		"the changes do not turn every version %d payload into a valid version %d payload (%s): fix them, or remove them and write %s in %s",
		prev.Number, cur.Number, ruleList(reasons), up.want(), outDir(p))
	explain(c, k.Name, cur.Schema, reasons)
}

// explain adds a note per compatibility finding, at its place in the new schema.
func explain(c *collector, kind string, s *spec.Schema, reasons []compat.Finding) {
	for _, r := range reasons {
		pos, path := Pointer(s, r.Path)
		c.notef(kind, pos, path, r.Rule, "%s", r.Message)
	}
}

// ruleList names the distinct rules of findings, in order.
func ruleList(fs []compat.Finding) string {
	seen := map[string]bool{}
	var rules []string
	for _, f := range fs {
		if !seen[f.Rule] {
			seen[f.Rule] = true
			rules = append(rules, f.Rule)
		}
	}
	return strings.Join(rules, ", ")
}
