package runtime

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// JobSelection selects jobs for the bulk operations (RetryJobs, DeleteJobs and their
// counts) and for ListJobs. Every field narrows the selection; a zero field matches
// every job. A bulk mutation with no filter at all is refused with ErrNoFilter, so that
// a forgotten flag cannot retry or delete every job.
type JobSelection struct {
	IDs        []int64
	Kinds      []string
	Queues     []string
	States     []State
	ErrorClass string    // the class of the job's last recorded error
	Since      time.Time // finished (or, for unfinished jobs, created) at or after
	Limit      int       // 0: no limit for mutations; ListJobs: default 100, max 10,000
}

// BulkResult is what a bulk mutation did.
type BulkResult struct {
	Changed int     // jobs changed
	Skipped int     // matched but left alone (unique key held elsewhere, or state not eligible)
	IDs     []int64 // the changed ids, at most 1,000 (for display): a retry of a million jobs returns a count, not a million ids
	// Refused lists the jobs left alone because the statement failed on them (counted
	// in Skipped): one such job does not stop the others.
	Refused []Refusal
}

// Refusal is a job a bulk operation left alone because the statement failed on it.
type Refusal struct {
	ID     int64
	Reason string // the database's error
}

// allStates lists every State, in the order a job lives through them.
var allStates = [...]State{StateAvailable, StateScheduled, StateRunning, StateCompleted, StateFailed, StateCancelled}

// ParseState returns the State for s, or an error listing the valid states.
func ParseState(s string) (State, error) {
	for _, st := range allStates {
		if string(st) == s {
			return st, nil
		}
	}
	return "", fmt.Errorf("jobc: unknown state %q: valid states are %s", s, validStates())
}

func validStates() string {
	names := make([]string, len(allStates))
	for i, st := range allStates {
		names[i] = string(st)
	}
	return strings.Join(names, ", ")
}

// empty reports whether s has no filter (Limit is not one).
func (s JobSelection) empty() bool {
	return len(s.IDs) == 0 && len(s.Kinds) == 0 && len(s.Queues) == 0 && len(s.States) == 0 &&
		s.ErrorClass == "" && s.Since.IsZero()
}

// selectionParams is the selection as the statements take it: NULL (nil) for "any".
type selectionParams struct {
	IDs        []int64
	Kinds      []string
	Queues     []string
	States     []string
	ErrorClass *string
	Since      *time.Time
}

// params checks s and returns it as statement parameters. An error names the field.
func (s JobSelection) params() (selectionParams, error) {
	var p selectionParams
	if s.Limit < 0 {
		return p, fmt.Errorf("jobc: job selection: limit %d is negative", s.Limit)
	}
	for _, k := range s.Kinds {
		if k == "" {
			return p, errors.New("jobc: job selection: an empty kind")
		}
	}
	for _, q := range s.Queues {
		if q == "" {
			return p, errors.New("jobc: job selection: an empty queue name")
		}
	}
	if len(s.IDs) > 0 {
		p.IDs = s.IDs
	}
	if len(s.Kinds) > 0 {
		p.Kinds = s.Kinds
	}
	if len(s.Queues) > 0 {
		p.Queues = s.Queues
	}
	for _, st := range s.States {
		if _, err := ParseState(string(st)); err != nil {
			return p, fmt.Errorf("jobc: job selection: %w", err)
		}
		p.States = append(p.States, string(st))
	}
	if s.ErrorClass != "" {
		p.ErrorClass = &s.ErrorClass
	}
	if !s.Since.IsZero() {
		p.Since = &s.Since
	}
	return p, nil
}

// mutationParams is params for a bulk mutation: it refuses an empty selection, and
// returns the limit as the statements take it (nil: no limit).
func (s JobSelection) mutationParams() (selectionParams, *int64, error) {
	if s.empty() {
		return selectionParams{}, nil, ErrNoFilter
	}
	p, err := s.params()
	if err != nil {
		return p, nil, err
	}
	var limit *int64
	if s.Limit > 0 {
		l := int64(s.Limit)
		limit = &l
	}
	return p, limit, nil
}
