package runtime

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// Limit is the flow control of one kind or queue as it stands in the database: what
// the spec declares (as the most recently started worker recorded it), what an
// operator set over it, and what is in force, with the jobs that wait and run under
// it.
type Limit struct {
	Scope LimitScope
	Name  string // the kind or the queue
	By    []string
	Fair  bool
	// Sequence: one job per key at a time, in enqueue order.
	Sequence bool
	// Spec holds the spec's numbers; Override an operator's (zero: none); Effective
	// what claims apply: the override where there is one, else the spec's.
	Spec, Override, Effective LimitValues
	RegisteredAt              time.Time
	ChangedAt                 *time.Time // when an operator last set or reset it
	ChangedBy                 string
	// Waiting and Running count the available and running jobs with a flow key of
	// the kind or queue; Keys, the keys among them.
	Waiting, Running, Keys int64
}

// LimitValues are the numbers of a limit; zero fields limit nothing.
type LimitValues struct {
	Concurrency int
	Rate        Rate
}

// ListLimits returns every kind's and queue's flow control, kinds first, by name.
func ListLimits(ctx context.Context, dbtx DBTX) ([]Limit, error) {
	rows, err := db.New(dbtx).ListLimits(ctx)
	if err != nil {
		return nil, fmt.Errorf("jobc: list limits: %w", dberr.Describe(err))
	}
	out := make([]Limit, len(rows))
	for i, r := range rows {
		l := Limit{
			Scope: LimitScope(r.Scope), Name: r.Name, By: r.ByFields, Fair: r.Fair, Sequence: r.Sequence,
			Spec:         limitValues(r.SpecConcurrency, r.SpecRateLimit, r.SpecRatePerSeconds),
			Override:     limitValues(r.Concurrency, r.RateLimit, r.RatePerSeconds),
			Effective:    limitValues(&r.EffectiveConcurrency, &r.EffectiveRateLimit, r.EffectiveRatePerSeconds),
			RegisteredAt: r.RegisteredAt, ChangedAt: r.ChangedAt, ChangedBy: r.ChangedBy,
			Waiting: r.Waiting, Running: r.Running, Keys: r.Keys,
		}
		out[i] = l
	}
	return out, nil
}

// check says whether v's numbers can be limits: each at most what jobc_limits holds
// (an int4; a larger one would wrap when stored), a rate's limit and period given
// together, and the period at least a millisecond (the database keeps microseconds).
func (v LimitValues) check() error {
	switch {
	case v.Concurrency < 0 || v.Concurrency > math.MaxInt32:
		return fmt.Errorf("concurrency %d, want 1 to %d (0: none)", v.Concurrency, math.MaxInt32)
	case v.Rate.Limit < 0 || v.Rate.Limit > math.MaxInt32 || (v.Rate.Limit > 0) != (v.Rate.Per > 0) ||
		(v.Rate.Limit > 0 && v.Rate.Per < time.Millisecond):
		return fmt.Errorf("rate %d per %s, want a limit of 1 to %d and a period of at least 1ms", v.Rate.Limit, v.Rate.Per, math.MaxInt32)
	}
	return nil
}

// columns are v's numbers as jobc_limits holds them, NULL for none.
func (v LimitValues) columns() (concurrency, rate *int32, perSeconds *float64) {
	if v.Concurrency > 0 {
		n := int32(v.Concurrency)
		concurrency = &n
	}
	if !v.Rate.IsZero() {
		n, per := int32(v.Rate.Limit), v.Rate.Per.Seconds()
		rate, perSeconds = &n, &per
	}
	return concurrency, rate, perSeconds
}

// limitValues reads the numbers of a limit from jobc_limits' columns, where NULL (or
// 0) is none.
func limitValues(concurrency, rate *int32, perSeconds float64) LimitValues {
	var v LimitValues
	if concurrency != nil {
		v.Concurrency = int(*concurrency)
	}
	if rate != nil && *rate > 0 {
		v.Rate = Rate{Limit: int(*rate), Per: time.Duration(perSeconds * float64(time.Second))}
	}
	return v
}

// LimitChange is an operator's change to a kind's or queue's limits: each field set
// (non-zero) replaces the spec's value until ResetLimit; zero fields are left as they
// are.
type LimitChange struct {
	Scope LimitScope
	Name  string
	// Concurrency: at most this many running jobs per key (per kind or queue for
	// one without by fields).
	Concurrency int
	Rate        Rate
	By          string // who changed it, for the record (e.g. "cli:alice")
}

// SetLimit records an operator's limits for a kind or queue whose spec declares flow
// control; the next claim of every worker applies them. It returns ErrNoLimit for
// one without.
func SetLimit(ctx context.Context, dbtx DBTX, c LimitChange) error {
	what := string(c.Scope) + " " + c.Name
	v := LimitValues{Concurrency: c.Concurrency, Rate: c.Rate}
	if c.Scope != LimitKind && c.Scope != LimitQueue {
		return fmt.Errorf("jobc: set limit of %s: scope %q, want kind or queue", what, c.Scope)
	}
	if err := v.check(); err != nil {
		return fmt.Errorf("jobc: set limit of %s: %w", what, err)
	}
	if c.Concurrency == 0 && c.Rate.IsZero() {
		return fmt.Errorf("jobc: set limit of %s: nothing to set (concurrency or rate)", what)
	}
	p := db.SetLimitParams{Scope: string(c.Scope), Name: c.Name, ChangedBy: &c.By}
	p.Concurrency, p.RateLimit, p.RatePerSeconds = v.columns()
	_, err := db.New(dbtx).SetLimit(ctx, p)
	return limitResult("set limit of "+what, err)
}

// ResetLimit drops an operator's limits for a kind or queue: the spec's apply again
// from the next claim. It returns ErrNoLimit for one without flow control.
func ResetLimit(ctx context.Context, dbtx DBTX, scope LimitScope, name, by string) error {
	_, err := db.New(dbtx).ResetLimit(ctx, db.ResetLimitParams{Scope: string(scope), Name: name, ChangedBy: &by})
	return limitResult(fmt.Sprintf("reset limit of %s %s", scope, name), err)
}

func limitResult(what string, err error) error {
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("jobc: %s: %w (the spec declares none for it, or no worker has started with it)", what, ErrNoLimit)
	case err != nil:
		return fmt.Errorf("jobc: %s: %w", what, dberr.Describe(err))
	}
	return nil
}
