package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// Config tunes a Relay; every zero field takes its default.
type Config struct {
	// Sink publishes to the broker; required.
	Sink Sink
	// Events are the events the relay may publish: the generated package's
	// EventTypes(), or what jobc relay builds from jobc.yaml; required. A claimed row
	// of an event not among them, of a version they do not declare, with another
	// subject than its event's, with an ordering key its event does not declare (or
	// without the one it does) or with a payload its version's schema rejects is
	// never handed to the Sink: it fails, with the reason as its last error (see the
	// package documentation).
	Events []*runtime.EventType
	// Logger receives the relay's records; default slog.Default().
	Logger *slog.Logger
	// Hooks observe the relay through the runtime's hook API: an EventMaintenance with
	// Service "relay" and a BatchResult per batch that claimed anything or failed, and
	// one with Service "relay_stats" and a Stats (the relay lag above all) every
	// StatsInterval.
	Hooks []runtime.Hook
	// BatchSize is the most events one claim takes and one Publish call sends;
	// default 500.
	BatchSize int
	// Concurrency is the number of batches in flight at once; default 2, so that one
	// batch is claimed and recorded while another waits for the broker. That pays when
	// most pending events are unordered or the only pending one of their key; when most
	// are held back by the keys of the batches in flight, a claim reads them to find few,
	// and the relay then claims one batch at a time for a while (see pipeline), so
	// a higher Concurrency costs little there. Figures: bench/results/2026-12-01-relay.txt.
	Concurrency int
	// PollInterval is how long a relay that found nothing to send waits before it
	// claims again; default 100ms. A full batch is followed by the next at once, and
	// so is one that sent events with ordering keys, whose keys' next events it has
	// just made claimable. It is also how long a claim waits, at most, for the open
	// publishers of a key whose oldest event has been skipped for ten poll intervals
	// (see keyStarved).
	PollInterval time.Duration
	// LeaseDuration is how long a claimed batch stays with this relay: when it dies,
	// another relay sends the batch again after this long. Default 30s.
	LeaseDuration time.Duration
	// PublishTimeout bounds one Publish call, and must leave the relay time to record
	// the confirmations before the lease ends; default LeaseDuration/2.
	PublishTimeout time.Duration
	// StatementTimeout bounds each statement; default 5s.
	StatementTimeout time.Duration
	// RetryInitial and RetryMax bound the backoff after a failed publication: the
	// n-th attempt waits RetryInitial·2^(n-1), at most RetryMax, varied by
	// ±RetryJitter (a fraction). Defaults 1s, 5m and 0.2.
	RetryInitial, RetryMax time.Duration
	RetryJitter            float64
	// MaxAttempts fails an event for good after this many failed publications;
	// 0 (the default) retries for as long as it takes, as a broker outage must not
	// fail events.
	MaxAttempts int
	// StatsInterval is how often the relay reads the outbox's stats for its hooks;
	// default 10s. Without hooks it reads none.
	StatsInterval time.Duration
	// Retention, when positive, runs a Pruner every PruneInterval (default 1m) that
	// deletes events published longer ago than Retention.
	Retention, PruneInterval time.Duration
}

func (c Config) withDefaults() Config {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.BatchSize <= 0 {
		c.BatchSize = 500
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 2
	}
	if c.PollInterval <= 0 {
		c.PollInterval = 100 * time.Millisecond
	}
	if c.LeaseDuration <= 0 {
		c.LeaseDuration = 30 * time.Second
	}
	if c.PublishTimeout <= 0 {
		c.PublishTimeout = c.LeaseDuration / 2
	}
	if c.StatementTimeout <= 0 {
		c.StatementTimeout = 5 * time.Second
	}
	if c.RetryInitial <= 0 {
		c.RetryInitial = time.Second
	}
	if c.RetryMax <= 0 {
		c.RetryMax = 5 * time.Minute
	}
	if c.RetryJitter <= 0 || c.RetryJitter >= 1 {
		c.RetryJitter = 0.2
	}
	if c.StatsInterval <= 0 {
		c.StatsInterval = 10 * time.Second
	}
	if c.PruneInterval <= 0 {
		c.PruneInterval = time.Minute
	}
	return c
}

// Relay publishes the outbox's pending events to a Sink. Run it in any number of
// processes: claims never overlap.
type Relay struct {
	cfg    Config
	dbtx   runtime.DBTX
	q      *db.Queries
	pruner *Pruner
	pipe   pipeline
	events catalogue
}

// BatchResult is what one batch did: how many events it claimed, and of those how
// many the broker confirmed, how many will be retried and how many failed for good.
// Lost counts events whose lease another relay had taken over before this one could
// record them (their outcome is left to that relay).
type BatchResult struct {
	Claimed, Published, Retried, Failed, Lost int
}

// New returns a relay over dbtx (a *pgxpool.Pool, which Run copies; see Run) that
// publishes to cfg.Sink.
func New(dbtx runtime.DBTX, cfg Config) (*Relay, error) {
	if cfg.Sink == nil {
		return nil, errors.New("relay: Config.Sink is nil")
	}
	events, err := newCatalogue(cfg.Events)
	if err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if cfg.PublishTimeout >= cfg.LeaseDuration {
		return nil, fmt.Errorf("relay: PublishTimeout %s must be shorter than LeaseDuration %s, or a batch could be sent twice at once", cfg.PublishTimeout, cfg.LeaseDuration)
	}
	r := &Relay{cfg: cfg, dbtx: dbtx, q: db.New(dbtx), events: events}
	if cfg.Retention > 0 {
		r.pruner = NewPruner(dbtx, PrunerConfig{Retention: cfg.Retention, StatementTimeout: cfg.StatementTimeout})
	}
	return r, nil
}

// Run relays until ctx ends, then lets the batches in flight finish (each is bounded
// by PublishTimeout and StatementTimeout) and returns nil. Failures of the database
// or the broker are logged and retried, never returned.
//
// Given a *pgxpool.Pool, Run opens a pool of its own from its configuration whose
// sessions commit with synchronous_commit off, as a worker's claims do: a server crash
// can then take back the last few claims and records, which only makes their events
// pending again, to be published once more (JetStream drops the copies; consumers of
// the other brokers deduplicate by event id, as they must anyway).
func (r *Relay) Run(ctx context.Context) error {
	q := r.q
	if pool, ok := r.dbtx.(*pgxpool.Pool); ok {
		cfg := pool.Config().Copy()
		cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
		cfg.MaxConns = int32(r.cfg.Concurrency + 2) // the batches, stats and the pruner
		cfg.MinConns = 0
		own, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			return fmt.Errorf("relay: open the relay's connections: %w", err)
		}
		defer own.Close()
		q = db.New(own)
	}
	var wg sync.WaitGroup
	for range r.cfg.Concurrency {
		wg.Go(func() { r.loop(ctx, q) })
	}
	if len(r.cfg.Hooks) > 0 {
		wg.Go(func() { r.every(ctx, r.cfg.StatsInterval, r.reportStats) })
	}
	if r.pruner != nil {
		wg.Go(func() {
			r.every(ctx, r.cfg.PruneInterval, func(ctx context.Context) {
				began := time.Now()
				n, err := r.pruner.RunOnce(ctx)
				if err != nil && ctx.Err() == nil {
					r.cfg.Logger.WarnContext(ctx, "relay: prune published events", slog.Any("error", err))
				}
				r.emit(ctx, runtime.Event{Kind: runtime.EventMaintenance, Service: "relay_pruner", RunTime: time.Since(began), Result: n, Err: err})
			})
		})
	}
	wg.Wait()
	return nil
}

// loop runs batches back to back while they come back full or free keyed events
// (claiming while the relay's other batches are in flight as the pipeline allows, else
// once the batch in flight ends), and waits PollInterval
// after an empty one; after failed ones (the database is gone) it waits twice as long
// each time, up to RetryMax, so that an outage costs a log record now and then.
func (r *Relay) loop(ctx context.Context, q *db.Queries) {
	failures := 0
	for ctx.Err() == nil {
		ok, overlapping, ended := r.pipe.begin()
		if !ok {
			select {
			case <-ended:
			case <-ctx.Done():
			}
			continue
		}
		res, freed, err := r.runAndReport(ctx, q)
		r.pipe.end(overlapping, res.Claimed, r.cfg.BatchSize)
		switch {
		case err != nil && ctx.Err() == nil:
			failures++
			wait := min(r.cfg.PollInterval<<min(failures, 16), r.cfg.RetryMax)
			r.cfg.Logger.WarnContext(ctx, "relay: batch failed", slog.Any("error", err), slog.Int("failures_in_a_row", failures), slog.Duration("next_in", wait))
			sleep(ctx, wait)
			continue
		case err == nil && (res.Claimed == r.cfg.BatchSize || freed):
			failures = 0
			continue
		}
		failures = 0
		sleep(ctx, r.cfg.PollInterval)
	}
}

// every runs f every interval until ctx ends.
func (r *Relay) every(ctx context.Context, interval time.Duration, f func(ctx context.Context)) {
	for {
		f(ctx)
		if !sleep(ctx, interval) {
			return
		}
	}
}

// sleep waits d or until ctx ends; it reports whether ctx is still alive.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// RunOnce claims one batch, publishes it and records the broker's answers. Once the
// claim succeeded, the batch is finished even if ctx ends (the publication bounded by
// PublishTimeout, the records retried within the lease), so a shutdown leaves no event
// to wait for its lease.
func (r *Relay) RunOnce(ctx context.Context) (BatchResult, error) {
	res, _, err := r.runAndReport(ctx, r.q)
	return res, err
}

// runAndReport runs one batch through q and reports it to the hooks.
func (r *Relay) runAndReport(ctx context.Context, q *db.Queries) (BatchResult, bool, error) {
	began := time.Now()
	res, freed, err := r.runOnce(ctx, q)
	if res.Claimed > 0 || (err != nil && ctx.Err() == nil) {
		r.emit(ctx, runtime.Event{Kind: runtime.EventMaintenance, Service: "relay", RunTime: time.Since(began), Result: res, Err: err})
	}
	return res, freed, err
}

// runOnce runs one batch through q. It also reports whether the batch published or
// failed an event with an ordering key: that key's next event may be claimable now,
// so the loop claims again at once rather than after PollInterval (a backlog of a
// few keys otherwise goes out at one event per key per PollInterval).
func (r *Relay) runOnce(ctx context.Context, q *db.Queries) (BatchResult, bool, error) {
	token := rand.Int64()
	claimed := time.Now()
	rows, err := claim(ctx, q, token, r.cfg)
	if err != nil || len(rows) == 0 {
		return BatchResult{}, false, err
	}
	freed := false
	res := BatchResult{Claimed: len(rows)}
	var failIDs []int64
	var failErrs []string
	msgs := make([]Message, 0, len(rows))
	for _, row := range rows {
		m := Message{ID: row.ID, Event: row.Event, Version: int(row.Version), Subject: row.Subject,
			Payload: row.Payload, CreatedAt: row.CreatedAt, Attempt: int(row.Attempts)}
		if row.OrderingKey != nil {
			m.OrderingKey = *row.OrderingKey
		}
		if err := r.events.check(&m, row.OrderingKey != nil); err != nil {
			freed = freed || row.OrderingKey != nil
			failIDs = append(failIDs, m.ID)
			failErrs = append(failErrs, err.Error())
			r.cfg.Logger.ErrorContext(ctx, "relay: event refused, not published", slog.Int64("event_id", m.ID),
				slog.String("event", m.Event), slog.Any("error", err))
			continue
		}
		msgs = append(msgs, m)
	}

	// The batch is ours until its lease ends: finish it whatever happens to ctx.
	bg := context.WithoutCancel(ctx)
	var errs []error
	if len(msgs) > 0 {
		pubCtx, cancel := context.WithTimeout(bg, r.cfg.PublishTimeout)
		errs = r.cfg.Sink.Publish(pubCtx, msgs)
		cancel()
		if errs != nil && len(errs) != len(msgs) {
			errs = AllErrors(len(msgs), fmt.Errorf("relay: the sink returned %d results for %d messages", len(errs), len(msgs)))
		}
	}

	var published, retryIDs []int64
	var retryDelays []float64
	var retryErrs []string
	for i, m := range msgs {
		var e error
		if errs != nil {
			e = errs[i]
		}
		switch {
		case e == nil:
			freed = freed || m.OrderingKey != ""
			published = append(published, m.ID)
		case IsPoison(e) || (r.cfg.MaxAttempts > 0 && m.Attempt >= r.cfg.MaxAttempts):
			freed = freed || m.OrderingKey != ""
			failIDs = append(failIDs, m.ID)
			failErrs = append(failErrs, e.Error())
			r.cfg.Logger.ErrorContext(ctx, "relay: event failed for good", slog.Int64("event_id", m.ID),
				slog.String("event", m.Event), slog.Int("attempt", m.Attempt), slog.Any("error", e))
		default:
			retryIDs = append(retryIDs, m.ID)
			retryDelays = append(retryDelays, r.backoff(m.Attempt).Seconds())
			retryErrs = append(retryErrs, e.Error())
		}
	}
	if len(retryIDs) > 0 {
		r.cfg.Logger.WarnContext(ctx, "relay: publication failed; retrying after a backoff",
			slog.Int("events", len(retryIDs)), slog.Int64("first_event_id", retryIDs[0]), slog.String("error", retryErrs[0]))
	}

	var errsOut []error
	// Recording is retried while the lease lasts: an outcome not recorded means the
	// batch is sent again once the lease expires.
	leaseEnd := claimed.Add(r.cfg.LeaseDuration)
	record := func(what string, want int, f func(ctx context.Context) (int64, error)) int {
		if want == 0 {
			return 0
		}
		for attempt := 1; ; attempt++ {
			sctx, cancel := context.WithTimeout(bg, r.cfg.StatementTimeout)
			n, err := f(sctx)
			cancel()
			if err == nil {
				res.Lost += want - int(n)
				return int(n)
			}
			wait := min(time.Duration(attempt)*r.cfg.PollInterval, time.Second)
			if time.Now().Add(wait + r.cfg.StatementTimeout).After(leaseEnd) {
				errsOut = append(errsOut, fmt.Errorf("relay: record %d %s events (%d attempts): %w", want, what, attempt, err))
				return 0
			}
			r.cfg.Logger.WarnContext(ctx, "relay: recording a batch failed; retrying", slog.String("outcome", what), slog.Any("error", err))
			time.Sleep(wait)
		}
	}
	res.Published = record("published", len(published), func(ctx context.Context) (int64, error) {
		return q.MarkEventsPublished(ctx, db.MarkEventsPublishedParams{IDs: published, Token: token})
	})
	res.Retried = record("retried", len(retryIDs), func(ctx context.Context) (int64, error) {
		return q.RetryEvents(ctx, db.RetryEventsParams{Token: token, IDs: retryIDs, DelaySeconds: retryDelays, Errors: retryErrs})
	})
	res.Failed = record("failed", len(failIDs), func(ctx context.Context) (int64, error) {
		return q.FailEvents(ctx, db.FailEventsParams{Token: token, IDs: failIDs, Errors: failErrs})
	})
	if res.Lost > 0 {
		r.cfg.Logger.WarnContext(ctx, "relay: another relay took over events whose lease had expired; their publication may repeat",
			slog.Int("events", res.Lost), slog.Duration("lease", r.cfg.LeaseDuration))
	}
	return res, freed, errors.Join(errsOut...)
}

// keyStarved is how many poll intervals a keyed event waits, skipped while its key's
// publishers are open, before a claim waits for them (one poll interval at most, with
// the key's new publishers queued behind it): without that wait, a key published
// without pause could hold its events back for ever.
const keyStarved = 10

// claim leases up to cfg.BatchSize events under token.
func claim(ctx context.Context, q *db.Queries, token int64, cfg Config) ([]db.ClaimEventsRow, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.StatementTimeout)
	defer cancel()
	rows, err := q.ClaimEvents(ctx, db.ClaimEventsParams{
		Token: token, LeaseSeconds: cfg.LeaseDuration.Seconds(), Max: int32(cfg.BatchSize),
		WaitAfter: (keyStarved * cfg.PollInterval).Seconds(), WaitMs: int32(cfg.PollInterval.Milliseconds()),
	})
	if err != nil {
		return nil, fmt.Errorf("relay: claim events: %w", err)
	}
	return rows, nil
}

// backoff is the delay after the attempt-th failed publication.
func (r *Relay) backoff(attempt int) time.Duration {
	d := float64(r.cfg.RetryInitial) * math.Pow(2, float64(max(attempt-1, 0)))
	d = min(d, float64(r.cfg.RetryMax))
	d *= 1 + r.cfg.RetryJitter*(2*rand.Float64()-1)
	return time.Duration(d)
}

// reportStats reads the outbox's stats and hands them to the hooks.
func (r *Relay) reportStats(ctx context.Context) {
	began := time.Now()
	sctx, cancel := context.WithTimeout(ctx, r.cfg.StatementTimeout)
	defer cancel()
	s, err := ReadStats(sctx, r.dbtx)
	if err != nil && ctx.Err() != nil {
		return
	}
	r.emit(ctx, runtime.Event{Kind: runtime.EventMaintenance, Service: "relay_stats", RunTime: time.Since(began), Result: s, Err: err})
}

func (r *Relay) emit(ctx context.Context, e runtime.Event) {
	for _, h := range r.cfg.Hooks {
		h.OnEvent(ctx, e)
	}
}
