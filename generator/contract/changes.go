package contract

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/jobc-dev/jobc/generator/spec"
)

// changeProblem is a change that cannot be applied, or whose default is invalid.
type changeProblem struct {
	index  int    // of the change in the version's list
	suffix string // appended to the change's path, e.g. ".default"
	rule   string
	msg    string
}

// upcastModel computes, from the schema of version prev, the schema that describes
// prev's payloads after the declarative changes of cur ran on them, the way the
// runtime's RenameField, AddField and RemoveField do:
//
//   - rename moves the property (and its "required" entry) to its new name;
//   - add gives the property the schema it has in cur, and makes it required, since
//     AddField fills it in whenever it is absent; its default must validate;
//   - require (add of a field prev has) keeps prev's schema for the property and
//     makes it required, since AddField fills it in only where it is absent;
//   - remove leaves the property absent: its schema becomes false, so that a
//     closed or open content model alike says "never present";
//   - widen changes nothing: the compatibility checker accepts a widened type.
//
// A renamed-away name also becomes false. Schemas copied from cur keep their $refs
// working: what they refer to is imported into the model's $defs.
type upcastModel struct {
	root    map[string]any // the model: a copy of prev's schema, changed in place
	cur     any            // cur's schema value
	curSpec *spec.Schema
	// imported maps a JSON pointer into cur to the $defs name of its copy in root.
	imported map[string]string
	// compiler holds cur's schema, compiled on first use to validate defaults;
	// compileErr is set when it does not compile (generation reports that).
	compiler   *jsonschema.Compiler
	compileErr error
}

const modelURL = "jobc:///upcast-target.json"

// applyChanges returns the model of prev's payloads after cur's changes, and the
// changes that could not be applied or carry an invalid default. The model is nil
// when a change could not be applied.
func applyChanges(prev, cur *spec.Version) (any, []changeProblem) {
	root, ok := copyJSON(prev.Schema.Value()).(map[string]any)
	if !ok {
		return nil, []changeProblem{{index: 0, rule: RuleChangeNotApplicable,
			msg: fmt.Sprintf("the schema of version %d is not an object schema, so no change applies to it", prev.Number)}}
	}
	m := &upcastModel{cur: cur.Schema.Value(), curSpec: cur.Schema, imported: map[string]string{}}
	m.root = m.inline(root, root)
	var problems []changeProblem
	applied := true
	for i, c := range cur.Changes {
		var ps []changeProblem
		switch c.Op {
		case spec.Rename:
			ps = m.rename(prev.Number, c)
		case spec.Add:
			if c.Require {
				ps = m.require(cur.Number, c)
			} else {
				ps = m.add(cur.Number, c)
			}
		case spec.Remove:
			ps = m.remove(prev.Number, c)
		case spec.Widen:
			// The compatibility check accepts every widening; nothing to model.
		}
		for _, p := range ps {
			p.index = i
			if p.rule == RuleChangeNotApplicable {
				applied = false
			}
			problems = append(problems, p)
		}
	}
	if !applied {
		return nil, problems
	}
	return m.root, problems
}

// inline replaces an object schema that is a $ref by a copy of what it refers to,
// merged with its other keywords, so that its properties can be changed. refs resolve
// against root.
func (m *upcastModel) inline(obj, root map[string]any) map[string]any {
	for range 32 {
		ref, ok := obj["$ref"].(string)
		if !ok {
			return obj
		}
		target, _, ok := resolveRef(root, ref)
		t, isObj := target.(map[string]any)
		if !ok || !isObj {
			return obj
		}
		merged := copyJSON(t).(map[string]any)
		for k, v := range obj {
			if k != "$ref" {
				merged[k] = v
			}
		}
		obj = merged
	}
	return obj
}

// parent returns the object schema in the model that holds the last element of a
// dotted field path, and that element; or why there is none.
func (m *upcastModel) parent(version int, field string) (map[string]any, string, string) {
	parts := strings.Split(field, ".")
	obj := m.root
	for i, part := range parts[:len(parts)-1] {
		props := properties(obj, false)
		child, ok := props[part].(map[string]any)
		if !ok {
			return nil, "", fmt.Sprintf("version %d has no object field %q", version, strings.Join(parts[:i+1], "."))
		}
		child = m.inline(child, m.root)
		props[part] = child
		obj = child
	}
	return obj, parts[len(parts)-1], ""
}

// target looks a dotted field up in cur: its schema, the JSON pointer of that schema,
// and the object schema holding it.
func (m *upcastModel) target(field string) (any, string, map[string]any, bool) {
	obj, ok := m.cur.(map[string]any)
	if !ok {
		return nil, "", nil, false
	}
	ptr := ""
	parts := strings.Split(field, ".")
	for i, part := range parts {
		for range 32 {
			ref, isRef := obj["$ref"].(string)
			if !isRef {
				break
			}
			t, tp, ok := resolveRef(m.cur, ref)
			tm, isObj := t.(map[string]any)
			if !ok || !isObj {
				return nil, "", nil, false
			}
			obj, ptr = tm, tp
		}
		sub, ok := properties(obj, false)[part]
		if !ok {
			return nil, "", nil, false
		}
		subPtr := ptr + "/properties/" + escapeToken(part)
		if i == len(parts)-1 {
			return sub, subPtr, obj, true
		}
		if obj, ok = sub.(map[string]any); !ok {
			return nil, "", nil, false
		}
		ptr = subPtr
	}
	return nil, "", nil, false
}

func (m *upcastModel) rename(version int, c spec.Change) []changeProblem {
	from, name, why := m.parent(version, c.From)
	if why != "" {
		return []changeProblem{{suffix: ".rename.from", rule: RuleChangeNotApplicable, msg: "cannot rename: " + why}}
	}
	props := properties(from, false)
	sch, ok := props[name]
	if !ok || sch == false {
		return []changeProblem{{suffix: ".rename.from", rule: RuleChangeNotApplicable,
			msg: fmt.Sprintf("cannot rename: version %d has no field %q", version, c.From)}}
	}
	to, newName, why := m.parent(version, c.To)
	if why != "" {
		return []changeProblem{{suffix: ".rename.to", rule: RuleChangeNotApplicable, msg: "cannot rename: " + why}}
	}
	required := isRequired(from, name)
	props[name] = false
	removeRequired(from, name)
	properties(to, true)[newName] = sch
	if required {
		addRequired(to, newName)
	}
	return nil
}

func (m *upcastModel) add(version int, c spec.Change) []changeProblem {
	sch, ptr, _, ok := m.target(c.Field)
	if !ok {
		return []changeProblem{{suffix: ".add.field", rule: RuleChangeNotApplicable,
			msg: fmt.Sprintf("cannot add: version %d has no field %q", version, c.Field)}}
	}
	obj, name, why := m.parent(version-1, c.Field)
	if why != "" {
		return []changeProblem{{suffix: ".add.field", rule: RuleChangeNotApplicable, msg: "cannot add: " + why}}
	}
	properties(obj, true)[name] = m.importSchema(sch)
	addRequired(obj, name)
	if msg := m.validate(ptr, c.Default); msg != "" {
		return []changeProblem{{suffix: ".add.default", rule: RuleChangeDefaultInvalid,
			msg: fmt.Sprintf("default %s of added field %q is not valid under version %d: %s", jsonText(c.Default), c.Field, version, msg)}}
	}
	return nil
}

// require makes an optional field of the previous version required: a payload that
// has it keeps its value, one that lacks it gets the default (AddField).
func (m *upcastModel) require(version int, c spec.Change) []changeProblem {
	_, ptr, _, ok := m.target(c.Field)
	if !ok {
		return []changeProblem{{suffix: ".require.field", rule: RuleChangeNotApplicable,
			msg: fmt.Sprintf("cannot require: version %d has no field %q", version, c.Field)}}
	}
	obj, name, why := m.parent(version-1, c.Field)
	if why != "" {
		return []changeProblem{{suffix: ".require.field", rule: RuleChangeNotApplicable, msg: "cannot require: " + why}}
	}
	if _, ok := properties(obj, false)[name]; !ok {
		return []changeProblem{{suffix: ".require.field", rule: RuleChangeNotApplicable,
			msg: fmt.Sprintf("cannot require: version %d has no field %q", version-1, c.Field)}}
	}
	addRequired(obj, name)
	if msg := m.validate(ptr, c.Default); msg != "" {
		return []changeProblem{{suffix: ".require.default", rule: RuleChangeDefaultInvalid,
			msg: fmt.Sprintf("default %s of required field %q is not valid under version %d: %s", jsonText(c.Default), c.Field, version, msg)}}
	}
	return nil
}

func (m *upcastModel) remove(version int, c spec.Change) []changeProblem {
	obj, name, why := m.parent(version, c.Field)
	if why != "" {
		// The runtime skips a payload whose intermediate object is absent: nothing
		// to model.
		return nil
	}
	properties(obj, true)[name] = false
	removeRequired(obj, name)
	return nil
}

// importSchema copies a schema of cur into the model. Each local $ref in it is
// rewritten to a copy, in the model's $defs, of what it refers to in cur.
func (m *upcastModel) importSchema(v any) any {
	obj, ok := v.(map[string]any)
	if !ok {
		return copyJSON(v)
	}
	out := make(map[string]any, len(obj))
	for k, x := range obj {
		switch {
		case k == "$ref":
			if s, ok := x.(string); ok && strings.HasPrefix(s, "#") {
				out[k] = m.importRef(s)
				continue
			}
			out[k] = copyJSON(x)
		case schemaMapValued(k):
			sub, ok := x.(map[string]any)
			if !ok {
				out[k] = copyJSON(x)
				continue
			}
			o := make(map[string]any, len(sub))
			for name, s := range sub {
				o[name] = m.importSchema(s)
			}
			out[k] = o
		case schemaValued(k):
			if list, ok := x.([]any); ok {
				o := make([]any, len(list))
				for i, s := range list {
					o[i] = m.importSchema(s)
				}
				out[k] = o
				continue
			}
			out[k] = m.importSchema(x)
		default:
			out[k] = copyJSON(x)
		}
	}
	return out
}

func (m *upcastModel) importRef(ref string) string {
	target, ptr, ok := resolveRef(m.cur, ref)
	if !ok {
		return ref // the checker fails closed on it
	}
	name, done := m.imported[ptr]
	if !done {
		name = fmt.Sprintf("jobc_upcast_target_%d", len(m.imported)+1)
		m.imported[ptr] = name
		defs, ok := m.root["$defs"].(map[string]any)
		if !ok {
			defs = map[string]any{}
			m.root["$defs"] = defs
		}
		defs[name] = true // placeholder: a cycle back to it finds the name
		defs[name] = m.importSchema(target)
	}
	return "#/$defs/" + name
}

// validate checks a JSON value against the subschema of cur at ptr, the way the
// runtime validates (draft 2020-12, formats asserted). It returns "" when the value is
// valid or the schema does not compile (generation reports that).
func (m *upcastModel) validate(ptr string, v any) string {
	if m.compiler == nil && m.compileErr == nil {
		m.compiler, m.compileErr = compileTarget(m.curSpec)
	}
	if m.compileErr != nil {
		return ""
	}
	sch, err := m.compiler.Compile(modelURL + "#" + (&url.URL{Fragment: ptr}).EscapedFragment())
	if err != nil {
		return ""
	}
	raw, err := spec.CanonicalJSON(v)
	if err != nil {
		return err.Error()
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err.Error()
	}
	err = sch.Validate(inst)
	if err == nil {
		return ""
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	return validationMessage(ve)
}

func compileTarget(s *spec.Schema) (*jsonschema.Compiler, error) {
	canon, err := s.Canonical()
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(canon))
	if err != nil {
		return nil, fmt.Errorf("decode schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(modelURL, doc); err != nil {
		return nil, fmt.Errorf("add schema: %w", err)
	}
	return c, nil
}

// validationMessage lists the leaf errors of a validation, like the runtime does.
func validationMessage(ve *jsonschema.ValidationError) string {
	p := message.NewPrinter(language.English)
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			msg := e.ErrorKind.LocalizedString(p)
			if len(e.InstanceLocation) > 0 {
				msg = "/" + strings.Join(e.InstanceLocation, "/") + ": " + msg
			}
			out = append(out, msg)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// jsonText renders a JSON value for a message.
func jsonText(v any) string {
	b, err := spec.CanonicalJSON(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
