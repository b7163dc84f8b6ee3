package relay

import (
	"context"
	"errors"
)

// Sink publishes messages to a broker. The relay calls Publish from one goroutine per
// Config.Concurrency, so a Sink must be safe for concurrent use.
type Sink interface {
	// Publish sends msgs, in order, and waits until the broker has confirmed each or
	// ctx ends. It returns nil when the broker confirmed them all, and otherwise one
	// error per message, nil for each confirmed one. An error wrapped with Poison
	// fails its event for good; any other is retried after a backoff.
	Publish(ctx context.Context, msgs []Message) []error
	// Close releases the sink's connection.
	Close() error
}

// poisonError marks an error as permanent.
type poisonError struct{ err error }

func (e *poisonError) Error() string { return e.err.Error() }
func (e *poisonError) Unwrap() error { return e.err }

// Poison marks err as one the broker will always return for this message: it rejected
// it, could not route it, or it is too large. The relay fails the event for good,
// keeping err as its last error. Poison(nil) is nil.
func Poison(err error) error {
	if err == nil {
		return nil
	}
	return &poisonError{err}
}

// IsPoison reports whether err (or an error it wraps) was marked with Poison.
func IsPoison(err error) bool {
	var p *poisonError
	return errors.As(err, &p)
}

// AllErrors returns a result for Sink.Publish that fails every one of n messages with err.
func AllErrors(n int, err error) []error {
	errs := make([]error, n)
	for i := range errs {
		errs[i] = err
	}
	return errs
}
