package contract

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/jobc-dev/jobc/generator/spec"
)

// Rule ids of the findings this package makes; notes explaining an incompatibility use
// the rule ids of package compat.
const (
	RuleReleasedVersionChanged = "RELEASED_VERSION_CHANGED"
	RuleUpcastMissing          = "UPCAST_MISSING"
	RuleUpcastSignature        = "UPCAST_SIGNATURE"
	RuleUpcastHandWritten      = "UPCAST_HAND_WRITTEN"
	RuleChangesIncorrect       = "CHANGES_INCORRECT"
	RuleChangeDefaultInvalid   = "CHANGE_DEFAULT_INVALID"
	RuleChangeNotApplicable    = "CHANGE_NOT_APPLICABLE"
	RuleWriteVersionAhead      = "WRITE_VERSION_AHEAD"
	RuleVersionRetired         = "VERSION_RETIRED"
	RuleKindRemoved            = "KIND_REMOVED"
	RuleEventRemoved           = "EVENT_REMOVED"
	RuleResultRemoved          = "RESULT_REMOVED"
	RuleStepIncompatible       = "STEP_INCOMPATIBLE"
	// RuleSubscriberIncompatible is for a subscriber job that cannot take every payload
	// of the event's write version, typed as the event or through its map.
	RuleSubscriberIncompatible = "SUBSCRIBER_INCOMPATIBLE"
)

// Severity says whether a finding fails the check.
type Severity int

const (
	Error Severity = iota // the check fails
	Note                  // information: an explanation, or something to verify by hand
)

// Finding is one result of Check or Verify.
type Finding struct {
	spec.Diagnostic
	Rule     string
	Severity Severity
	// Detail holds more lines printed after the finding, such as a unified diff; "" for
	// none.
	Detail string

	kind string // the job kind it concerns, for ordering
	seq  int    // order of creation, for ordering
}

// String formats the finding on one line: `file:line:col: path: message [RULE]`, with
// "note: " before the message of a note. Detail is not included.
func (f Finding) String() string {
	d := f.Diagnostic
	if f.Severity == Note {
		d.Message = "note: " + d.Message
	}
	return fmt.Sprintf("%s [%s]", d, f.Rule)
}

// Findings is the result of a check, grouped by job kind.
type Findings []Finding

// Errors counts the findings that fail the check.
func (fs Findings) Errors() int {
	n := 0
	for _, f := range fs {
		if f.Severity == Error {
			n++
		}
	}
	return n
}

// Write prints every finding, each followed by its detail lines.
func (fs Findings) Write(w io.Writer) error {
	for _, f := range fs {
		if _, err := fmt.Fprintln(w, f); err != nil {
			return fmt.Errorf("write findings: %w", err)
		}
		if f.Detail != "" {
			if _, err := io.WriteString(w, strings.TrimSuffix(f.Detail, "\n")+"\n"); err != nil {
				return fmt.Errorf("write findings: %w", err)
			}
		}
	}
	return nil
}

// collector accumulates findings in order.
type collector struct{ list Findings }

func (c *collector) add(f Finding) {
	f.seq = len(c.list)
	c.list = append(c.list, f)
}

func (c *collector) errorf(kind string, pos spec.Pos, path, rule, format string, args ...any) {
	c.add(finding(Error, kind, pos, path, rule, fmt.Sprintf(format, args...)))
}

func (c *collector) notef(kind string, pos spec.Pos, path, rule, format string, args ...any) {
	c.add(finding(Note, kind, pos, path, rule, fmt.Sprintf(format, args...)))
}

func finding(sev Severity, kind string, pos spec.Pos, path, rule, msg string) Finding {
	return Finding{Diagnostic: spec.Diagnostic{Pos: pos, Path: path, Message: msg}, Rule: rule, Severity: sev, kind: kind}
}

// sorted returns the findings grouped by kind (in kind order), each group in the order
// the findings were made: a summary stays followed by the notes that explain it.
func (c *collector) sorted() Findings {
	out := append(Findings(nil), c.list...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].kind != out[j].kind {
			return out[i].kind < out[j].kind
		}
		return out[i].seq < out[j].seq
	})
	return out
}
