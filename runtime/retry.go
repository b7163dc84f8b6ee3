package runtime

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// BackoffKind is how the delay between attempts grows.
type BackoffKind uint8

const (
	BackoffExponential BackoffKind = iota // Initial, 2×Initial, 4×Initial, ... up to Max
	BackoffLinear                         // Initial, 2×Initial, 3×Initial, ... up to Max
	BackoffConstant                       // always Initial
)

func (k BackoffKind) String() string {
	switch k {
	case BackoffExponential:
		return "exponential"
	case BackoffLinear:
		return "linear"
	case BackoffConstant:
		return "constant"
	}
	return fmt.Sprintf("BackoffKind(%d)", uint8(k))
}

// Backoff computes the delay before the next attempt.
type Backoff struct {
	Kind    BackoffKind
	Initial time.Duration
	Max     time.Duration // 0: no cap
	Jitter  float64       // 0..1: the delay is spread uniformly over ±Jitter of itself
}

// DefaultBackoff returns the backoff of job types that declare none.
func DefaultBackoff() Backoff {
	return Backoff{Kind: BackoffExponential, Initial: time.Second, Max: time.Hour, Jitter: 0.1}
}

// Delay returns the delay after the given failed attempt (1 for the first). random
// returns a number in [0, 1); nil uses math/rand/v2.
func (b Backoff) Delay(attempt int, random func() float64) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	base := float64(b.Initial)
	switch b.Kind {
	case BackoffExponential:
		base *= math.Pow(2, float64(attempt-1))
	case BackoffLinear:
		base *= float64(attempt)
	}
	if b.Max > 0 && base > float64(b.Max) {
		base = float64(b.Max)
	}
	if b.Jitter > 0 {
		if random == nil {
			random = rand.Float64
		}
		base *= 1 + b.Jitter*(2*random()-1)
	}
	if base > float64(math.MaxInt64) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(base)
}

// ErrorClass says what happens after a handler fails with an error of that class.
type ErrorClass struct {
	Name string
	// Retry false sends the job straight to failed.
	Retry bool
	// Backoff, if set, replaces the job's backoff for errors of this class.
	Backoff *Backoff
	// DelayFromError makes the handler's RetryAfter the delay (rate limits).
	DelayFromError bool
	// MaxAttempts, if positive, replaces the job's max attempts for failures of this
	// class: a job that fails with it on attempt MaxAttempts (or later) fails for good.
	MaxAttempts int
}

// Classify wraps err in a ClassError of the given class.
func Classify(class string, err error) error {
	return &ClassError{Class: class, Err: err}
}

// RetryAfter wraps err in a ClassError whose next attempt runs after d.
func RetryAfter(class string, d time.Duration, err error) error {
	return &ClassError{Class: class, RetryAfter: d, Err: err}
}

func classOf(err error) (*ClassError, bool) {
	var ce *ClassError
	if errors.As(err, &ce) {
		return ce, true
	}
	return nil, false
}
