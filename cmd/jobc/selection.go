package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
	"github.com/jobc-dev/jobc/runtime"
)

// selectionFlags are the filters of jobs list, jobs retry and jobs delete.
type selectionFlags struct {
	kinds, queues, states []string
	errorClass            string
	since                 sinceValue
}

func (s *selectionFlags) register(f *pflag.FlagSet) {
	f.StringSliceVar(&s.kinds, "kind", nil, "only jobs of this kind (repeat or separate with commas for several)")
	f.StringSliceVar(&s.queues, "queue", nil, "only jobs in this queue (repeatable)")
	f.StringSliceVar(&s.states, "state", nil, "only jobs in this state: available, scheduled, running, completed, failed, cancelled (repeatable)")
	f.StringVar(&s.errorClass, "error-class", "", "only jobs whose last recorded error has this class")
	f.Var(&s.since, "since", "only jobs finished (unfinished: created) since: a duration back from now (1h, 30m) or a time (2026-01-02T15:04:05Z, 2026-01-02)")
}

// any reports whether at least one filter was given.
func (s *selectionFlags) any() bool {
	return len(s.kinds) > 0 || len(s.queues) > 0 || len(s.states) > 0 || s.errorClass != "" || s.since.set
}

// selection returns the filters as a runtime.JobSelection; an unknown state is a usage
// error of cmd listing the valid ones.
func (s *selectionFlags) selection(cmd *cobra.Command, now time.Time) (runtime.JobSelection, error) {
	sel := runtime.JobSelection{Kinds: s.kinds, Queues: s.queues, ErrorClass: s.errorClass}
	for _, name := range s.states {
		st, err := runtime.ParseState(name)
		if err != nil {
			return sel, cli.AsUsage(cmd, err)
		}
		sel.States = append(sel.States, st)
	}
	if s.since.set {
		sel.Since = s.since.at(now)
	}
	return sel, nil
}

// sinceValue is a --since flag: a duration back from the moment the command runs, or
// an absolute time.
type sinceValue struct {
	set  bool
	ago  time.Duration
	when time.Time
	text string
}

func (v *sinceValue) String() string { return v.text }
func (v *sinceValue) Type() string   { return "duration|time" }

func (v *sinceValue) Set(s string) error {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return fmt.Errorf("a duration back from now must not be negative")
		}
		*v = sinceValue{set: true, ago: d, text: s}
		return nil
	}
	for _, layout := range []string{time.RFC3339Nano, time.DateTime, time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			*v = sinceValue{set: true, when: t, text: s}
			return nil
		}
	}
	return fmt.Errorf("want a duration (1h, 90m) or a time (2026-01-02T15:04:05Z, 2026-01-02)")
}

// at is the moment the flag names, for a command running at now.
func (v *sinceValue) at(now time.Time) time.Time {
	if !v.when.IsZero() {
		return v.when
	}
	return now.Add(-v.ago)
}
