package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/jobc-dev/jobc/generator/spec"
)

// Verify runs Check and compares p with a baseline of released contracts (jobc.lock,
// or the spec at a git revision; nil for none):
//
//   - RELEASED_VERSION_CHANGED: a released version's canonical schema differs; the
//     finding is at the first difference and its Detail is a unified diff of the
//     pretty-printed canonical schemas;
//   - WRITE_VERSION_AHEAD: write_version is higher than the highest released version
//     of the kind, which released workers cannot decode;
//   - VERSION_RETIRED (a note): a released version is no longer declared;
//   - KIND_REMOVED: a released kind or alias is neither a kind nor an alias any more;
//   - EVENT_REMOVED: a released event is no longer declared.
//
// Events are held to their released contracts as jobs are: their subscribers' workers
// and the consumers behind a broker decode them with the released versions.
//
// A released kind that is now an alias of another kind is checked against that kind:
// its queued jobs are decoded with that kind's versions.
func Verify(p *spec.Project, base *LockFile) (Findings, error) {
	c := &collector{}
	if err := check(c, p); err != nil {
		return nil, err
	}
	if base != nil {
		verifyBaseline(c, p, base)
	}
	return c.sorted(), nil
}

func verifyBaseline(c *collector, p *spec.Project, base *LockFile) {
	jobs := map[string]*spec.Job{}
	aliasOf := map[string]*spec.Job{}
	for _, j := range p.Jobs {
		jobs[j.Kind] = j
		for _, a := range j.Aliases {
			aliasOf[a] = j
		}
	}
	for _, kind := range sortedKeys(base.Jobs) {
		lj := base.Jobs[kind]
		switch {
		case jobs[kind] != nil:
			j := jobs[kind].Contract()
			compareVersions(c, base, kind, lj, j)
			writeAhead(c, base, lj, j)
		case aliasOf[kind] != nil:
			compareVersions(c, base, kind, lj, aliasOf[kind].Contract())
		default:
			c.errorf(kind, lj.pos, "jobs."+kind, RuleKindRemoved,
				"kind %s is in %s but no longer in the spec: its queued jobs would never run; keep it until `jobc status` shows no unfinished %s jobs, or list it under aliases of the kind that replaces it",
				kind, base.Source, kind)
		}
		for _, a := range lj.Aliases {
			if jobs[a] == nil && aliasOf[a] == nil {
				c.errorf(kind, lj.pos, "jobs."+kind+".aliases", RuleKindRemoved,
					"alias %s of %s is in %s but no longer in the spec: queued %s jobs would never run; keep the alias until `jobc status` shows no unfinished %s jobs",
					a, kind, base.Source, a, a)
			}
		}
	}
	events := map[string]*spec.Event{}
	for _, e := range p.Events {
		events[e.Name] = e
	}
	for _, name := range sortedKeys(base.Events) {
		le := base.Events[name]
		e := events[name]
		if e == nil {
			c.errorf(name, le.pos, "events."+name, RuleEventRemoved,
				"event %s is in %s but no longer in the spec: its unpublished outbox rows are still relayed and its consumers still decode it; keep it until `jobc status` shows no unpublished %s events and no consumer needs it",
				name, base.Source, name)
			continue
		}
		compareVersions(c, base, name, le, e.Contract())
		writeAhead(c, base, le, e.Contract())
	}
	// A workflow's input is read by its steps' maps, recorded with each workflow as it
	// starts: a released version must not change under running workflows. A workflow
	// removed from the spec leaves nothing behind that needs it: the database runs its
	// running workflows to their end.
	workflows := map[string]*spec.Workflow{}
	for _, w := range p.Workflows {
		workflows[w.Name] = w
	}
	for _, name := range sortedKeys(base.Workflows) {
		if w := workflows[name]; w != nil {
			compareVersions(c, base, name, base.Workflows[name], w.Contract())
		}
	}
	// So is a signal's, by wait steps' maps; a signal removed from the spec is sent
	// no more.
	for _, name := range sortedKeys(base.Signals) {
		wf, sig, _ := strings.Cut(name, ".")
		if w := workflows[wf]; w != nil && w.Signal(sig) != nil {
			compareVersions(c, base, name, base.Signals[name], w.SignalContract(w.Signal(sig)))
		}
	}
	for _, kind := range sortedKeys(base.Results) {
		lr := base.Results[kind]
		j := jobs[kind]
		if j == nil || j.Result == nil {
			c.errorf(kind, lr.pos, "jobs."+kind+".result", RuleResultRemoved,
				"the result of %s is in %s but no longer in the spec: the results completed jobs stored could no longer be read; keep it, and add versions to change it",
				kind, base.Source)
			continue
		}
		compareVersions(c, base, kind, lr, j.ResultContract())
		writeAhead(c, base, lr, j.ResultContract())
	}
}

// compareVersions compares the released versions of kind with those of job j: j is
// the kind itself, or the kind it is now an alias of.
func compareVersions(c *collector, base *LockFile, kind string, lj *LockedJob, j spec.Contract) {
	who := kind
	if j.Name != kind {
		who = fmt.Sprintf("%s (now an alias of %s)", kind, j.Name)
	}
	for _, lv := range lj.Versions {
		v := j.Payload.Version(lv.Version)
		if v == nil {
			if j.IsWorkflow() || j.IsSignal() {
				continue // nothing decodes a started workflow's input or a kept signal again
			}
			if j.IsResult() {
				c.notef(j.Name, j.Payload.Pos, j.At()+".versions", RuleVersionRetired,
					"result version %d of %s is in %s but no longer declared: this release cannot read the version %d results that completed jobs stored; retire it only once retention has pruned them",
					lv.Version, kind, base.Source, lv.Version)
				continue
			}
			c.notef(j.Name, j.Payload.Pos, j.At()+".versions", RuleVersionRetired,
				"version %d of %s is in %s but no longer declared: workers stop decoding it, so unfinished version %d jobs would never run; check with `jobc status` that none remain before deploying",
				lv.Version, who, base.Source, lv.Version)
			continue
		}
		canon, err := v.Schema.Canonical()
		if err != nil || hash(canon) == lv.SHA256 {
			continue // an unencodable schema is reported by generate
		}
		old, err := canonicalRaw(lv.Schema)
		if err != nil {
			continue // ParseLock checked it
		}
		pos, path := Pointer(v.Schema, firstDifference(old, canon))
		var msg string
		switch {
		case j.IsSignal():
			wf, sig := j.WorkflowSignal()
			msg = fmt.Sprintf("released version %d of signal %s of workflow %s changed since %s: running workflows keep signals sent with it and their steps' maps read them, so restore it and make the change in a new version (jobc check shows the diff)",
				lv.Version, sig, wf, base.Source)
		case j.IsWorkflow():
			msg = fmt.Sprintf("released version %d of the input of workflow %s changed since %s: running workflows were started with it and their steps' maps read it, so restore it and make the change in a new version (jobc check shows the diff)",
				lv.Version, kind, base.Source)
		case j.IsResult():
			msg = fmt.Sprintf("released version %d of the result of %s changed since %s: the results completed jobs stored and the readers of the release depend on it, so restore it and make the change in a new version (jobc check shows the diff)",
				lv.Version, kind, base.Source)
		case j.IsEvent():
			msg = fmt.Sprintf("released version %d of event %s changed since %s: unpublished outbox rows, subscriber jobs and the consumers that decode the event depend on it, so restore it and make the change in a new version (jobc check shows the diff)",
				lv.Version, kind, base.Source)
		case j.Name == kind:
			msg = fmt.Sprintf("released version %d of %s changed since %s: stored jobs and running workers depend on it, so restore it and make the change in a new version (jobc check shows the diff)",
				lv.Version, kind, base.Source)
		default:
			msg = fmt.Sprintf("released version %d of %s changed since %s: %s is now an alias of %s, whose version %d must stay identical because queued %s jobs are decoded with it (jobc check shows the diff)",
				lv.Version, kind, base.Source, kind, j.Name, lv.Version, kind)
		}
		f := finding(Error, j.Name, pos, path, RuleReleasedVersionChanged, msg)
		was, is := kind, j.Name
		if j.IsResult() {
			was, is = kind+" result", j.Name+" result"
		}
		f.Detail = schemaDiff(
			fmt.Sprintf("%s version %d (%s)", was, lv.Version, base.Source), old,
			fmt.Sprintf("%s version %d (%s)", is, v.Number, v.Schema.File), canon)
		c.add(f)
	}
}

func writeAhead(c *collector, base *LockFile, lj *LockedJob, j spec.Contract) {
	released, w := lj.Highest(), j.Payload.WriteVersion
	if released == 0 || w <= released {
		return
	}
	pos, how := j.Payload.Pos, "write_version defaults to the newest version"
	if set := j.Payload.WriteVersionPos; set.Line > 0 {
		pos, how = set, "set by write_version"
	}
	// The version to write during the rollout: the newest one that both the released
	// workers and this release's decode.
	safe := 0
	for _, v := range j.Payload.Versions {
		if v.Number <= released {
			safe = v.Number
		}
	}
	var advice string
	if safe > 0 {
		advice = fmt.Sprintf("roll out in two releases: first deploy version %d with write_version: %d, then set write_version: %d once no older worker runs",
			w, safe, w)
	} else {
		advice = fmt.Sprintf("this release declares none of the versions they decode, so no write_version is safe: declare version %d again (restored from %s) and write it until no older worker runs, then retire it",
			released, base.Source)
	}
	if j.IsResult() {
		c.errorf(j.Name, pos, j.At()+".write_version", RuleWriteVersionAhead,
			"handlers store result version %d (%s), but the readers of the release in %s decode %s results up to version %d: results stored during the rollout, or after a rollback, cannot be read by them; %s",
			w, how, base.Source, j.Name, released, strings.ReplaceAll(advice, "worker", "reader"))
		return
	}
	if j.IsEvent() {
		c.errorf(j.Name, pos, j.At()+".write_version", RuleWriteVersionAhead,
			"Publish writes version %d (%s), but consumers and subscriber workers of the release in %s decode %s versions up to %d: version %d events published during the rollout, or after a rollback, are not understood by them; %s",
			w, how, base.Source, j.Name, released, w, strings.ReplaceAll(advice, "worker", "consumer"))
		return
	}
	c.errorf(j.Name, pos, j.At()+".write_version", RuleWriteVersionAhead,
		"enqueue writes version %d (%s), but workers of the release in %s decode %s versions up to %d: version %d jobs enqueued during the rollout, or after a rollback, wait until a worker of this release claims them; %s",
		w, how, base.Source, j.Name, released, w, advice)
}

// firstDifference returns the JSON pointer of the first place, in key order, where two
// canonical JSON documents differ: a member or element present in only one of them
// gives its pointer (Pointer then finds the nearest existing ancestor).
func firstDifference(a, b []byte) string {
	av, err1 := decodeJSON(a)
	bv, err2 := decodeJSON(b)
	if err1 != nil || err2 != nil {
		return ""
	}
	ptr, _ := diffAt(av, bv, "")
	return ptr
}

func diffAt(a, b any, ptr string) (string, bool) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return ptr, true
		}
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		for _, k := range sortedKeys(keys) {
			xv, inX := x[k]
			yv, inY := y[k]
			sub := ptr + "/" + escapeToken(k)
			if inX != inY {
				return sub, true
			}
			if p, differ := diffAt(xv, yv, sub); differ {
				return p, true
			}
		}
		return "", false
	case []any:
		y, ok := b.([]any)
		if !ok {
			return ptr, true
		}
		for i := range max(len(x), len(y)) {
			sub := ptr + "/" + strconv.Itoa(i)
			if i >= len(x) || i >= len(y) {
				return sub, true
			}
			if p, differ := diffAt(x[i], y[i], sub); differ {
				return p, true
			}
		}
		return "", false
	}
	if a != b {
		return ptr, true
	}
	return "", false
}

// schemaDiff is a unified diff of two canonical schemas, pretty-printed (SplitLines
// ends the last line).
func schemaDiff(fromName string, from []byte, toName string, to []byte) string {
	d := difflib.UnifiedDiff{
		A:        difflib.SplitLines(pretty(from)),
		B:        difflib.SplitLines(pretty(to)),
		FromFile: fromName,
		ToFile:   toName,
		Context:  3,
	}
	s, err := difflib.GetUnifiedDiffString(d)
	if err != nil {
		return fmt.Sprintf("(no diff: %v)\n", err)
	}
	return s
}

func pretty(canon []byte) string {
	var b bytes.Buffer
	if err := json.Indent(&b, canon, "", "  "); err != nil {
		return string(canon)
	}
	return b.String()
}
