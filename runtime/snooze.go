package runtime

import (
	"errors"
	"fmt"
	"time"
)

// Snooze returns an error value that, returned from a handler, reschedules the job
// after d without counting the attempt and without recording an error: "not yet"
// rather than "failed" (River's JobSnooze). A d of 0 or less makes the job available at
// once. The outcome is reported as "snoozed".
func Snooze(d time.Duration) error {
	return &snoozeError{d: max(d, 0)}
}

// Snooze is runtime.Snooze for the handle a handler receives: return job.Snooze(d).
func (j *Job) Snooze(d time.Duration) error {
	return Snooze(d)
}

// snoozeError is the value Snooze returns; the worker recognises it with errors.As,
// also when a handler wraps it.
type snoozeError struct{ d time.Duration }

func (e *snoozeError) Error() string { return fmt.Sprintf("jobc: snooze for %s", e.d) }

// snoozed returns how long err asks to snooze, and whether it does.
func snoozed(err error) (time.Duration, bool) {
	var se *snoozeError
	if errors.As(err, &se) {
		return se.d, true
	}
	return 0, false
}
