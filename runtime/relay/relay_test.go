package relay_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/internal/testkit"
	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/relay"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// The relay's own rules (claims, keys, leases, retries) are tested here with a sink that
// records what it is given; each broker's sink is tested against a real broker in its
// module (contrib/nats, contrib/rabbitmq, contrib/kafka).

// recordSink records every batch and answers with fail's errors (nil: confirmed). When
// gate is set, Publish waits for it to close first, ignoring ctx, like a broker whose
// confirmation is slow to come.
type recordSink struct {
	mu      sync.Mutex
	batches [][]relay.Message
	fail    func(m relay.Message) error
	gate    chan struct{}
	entered chan struct{} // receives once per Publish, when set
}

func (s *recordSink) Publish(_ context.Context, msgs []relay.Message) []error {
	s.mu.Lock()
	s.batches = append(s.batches, slices.Clone(msgs))
	gate, entered, fail := s.gate, s.entered, s.fail
	s.mu.Unlock()
	if entered != nil {
		entered <- struct{}{}
	}
	if gate != nil {
		<-gate
	}
	if fail == nil {
		return nil
	}
	var errs []error
	for i, m := range msgs {
		if err := fail(m); err != nil {
			if errs == nil {
				errs = make([]error, len(msgs))
			}
			errs[i] = err
		}
	}
	return errs
}

func (s *recordSink) Close() error { return nil }

// ids returns the event ids of batch i.
func (s *recordSink) ids(i int) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int64
	for _, m := range s.batches[i] {
		out = append(out, m.ID)
	}
	return out
}

// orderedType is a relayed event ordered by its "key" field.
func orderedType(t *testing.T) *runtime.EventType {
	t.Helper()
	et, err := runtime.NewEventType(runtime.EventType{Name: "thing_moved", Subject: "things.moved", OrderingKey: []string{"key"},
		Relay: true, WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object","properties":{"key":{"type":"string"},"n":{"type":"integer"}}}`}}})
	if err != nil {
		t.Fatal(err)
	}
	return et
}

// unorderedType is a relayed event without an ordering key.
func unorderedType(t *testing.T) *runtime.EventType {
	t.Helper()
	et, err := runtime.NewEventType(runtime.EventType{Name: "thing_noted", Subject: "things.noted",
		Relay: true, WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}}})
	if err != nil {
		t.Fatal(err)
	}
	return et
}

type thing struct {
	Key string `json:"key,omitempty"`
	N   int    `json:"n"`
}

// publish publishes things in one transaction each and returns their ids.
func publish(t *testing.T, pool *pgxpool.Pool, et *runtime.EventType, things ...thing) []int64 {
	t.Helper()
	var ids []int64
	for _, th := range things {
		p, err := runtime.Publish(t.Context(), pool, et, th)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	return ids
}

func newRelay(t *testing.T, pool *pgxpool.Pool, cfg relay.Config) *relay.Relay {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Events == nil {
		cfg.Events = []*runtime.EventType{orderedType(t), unorderedType(t)}
	}
	r, err := relay.New(pool, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func runOnce(t *testing.T, r *relay.Relay) relay.BatchResult {
	t.Helper()
	res, err := r.RunOnce(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// row is an outbox row's relay columns.
type row struct {
	State     string
	Attempts  int
	Leased    bool
	DueIn     time.Duration // available_at - now()
	LastError string
}

func readRow(t *testing.T, pool *pgxpool.Pool, id int64) row {
	t.Helper()
	var r row
	var lastErr *string
	var dueSeconds float64
	err := pool.QueryRow(t.Context(), `SELECT state, attempts, lease_token IS NOT NULL,
		extract(epoch FROM available_at - now())::float8, last_error FROM jobc_events WHERE id = $1`, id).
		Scan(&r.State, &r.Attempts, &r.Leased, &dueSeconds, &lastErr)
	if err != nil {
		t.Fatalf("event %d: %v", id, err)
	}
	r.DueIn = time.Duration(dueSeconds * float64(time.Second))
	if lastErr != nil {
		r.LastError = *lastErr
	}
	return r
}

// TestKeyOrder: per (event, key) one event is in flight, the oldest; a second relay
// claiming meanwhile takes only unordered events and other keys; once the first batch
// is confirmed, each key's next event goes.
func TestKeyOrder(t *testing.T) {
	t.Parallel()
	pool := testkit.MigratedSchema(t)
	et := orderedType(t)
	a := publish(t, pool, et, thing{Key: "a", N: 1}, thing{Key: "a", N: 2}, thing{Key: "a", N: 3})
	b := publish(t, pool, et, thing{Key: "b", N: 1}, thing{Key: "b", N: 2})
	slow := &recordSink{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	first := newRelay(t, pool, relay.Config{Sink: slow})
	done := make(chan relay.BatchResult)
	go func() {
		res, err := first.RunOnce(context.Background())
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	<-slow.entered
	if got, want := slow.ids(0), []int64{a[0], b[0]}; !slices.Equal(got, want) {
		t.Fatalf("first batch %v, want the oldest of each key %v", got, want)
	}

	// While a1 and b1 are in flight, a later unordered event goes, but no event of a or b.
	unordered := publish(t, pool, unorderedType(t), thing{N: 9})
	c := publish(t, pool, et, thing{Key: "c", N: 1})
	fast := &recordSink{}
	second := newRelay(t, pool, relay.Config{Sink: fast})
	if res := runOnce(t, second); res.Claimed != 2 || !slices.Equal(fast.ids(0), []int64{unordered[0], c[0]}) {
		t.Fatalf("second relay while a1, b1 are in flight: %+v %v; want the unordered event and c1 only", res, fast.batches)
	}
	close(slow.gate)
	if res := <-done; res != (relay.BatchResult{Claimed: 2, Published: 2}) {
		t.Fatalf("first batch: %+v, want 2 claimed and published", res)
	}
	for _, want := range [][]int64{{a[1], b[1]}, {a[2]}} {
		res := runOnce(t, second)
		if got := fast.ids(len(fast.batches) - 1); res.Published != len(want) || !slices.Equal(got, want) {
			t.Fatalf("next batch %v (%+v), want %v", got, res, want)
		}
	}
	if res := runOnce(t, second); res.Claimed != 0 {
		t.Fatalf("a batch after everything was published: %+v", res)
	}
}

// TestRetryBackoff: a failed publication gives the event back with its error, its
// attempt counted and a jittered backoff; the later events of its key wait behind it,
// and it goes again once due.
func TestRetryBackoff(t *testing.T) {
	t.Parallel()
	pool := testkit.MigratedSchema(t)
	et := orderedType(t)
	ids := publish(t, pool, et, thing{Key: "k", N: 1}, thing{Key: "k", N: 2})
	down := true
	sink := &recordSink{fail: func(relay.Message) error {
		if down {
			return errors.New("broker unreachable")
		}
		return nil
	}}
	const initial, jitter = 300 * time.Millisecond, 0.2
	r := newRelay(t, pool, relay.Config{Sink: sink, RetryInitial: initial, RetryMax: time.Minute, RetryJitter: jitter})
	if res := runOnce(t, r); res != (relay.BatchResult{Claimed: 1, Retried: 1}) {
		t.Fatalf("batch %+v, want 1 claimed and retried", res)
	}
	got := readRow(t, pool, ids[0])
	lo, hi := time.Duration(float64(initial)*(1-jitter))-50*time.Millisecond, time.Duration(float64(initial)*(1+jitter))
	if got.State != "pending" || got.Attempts != 1 || got.Leased || got.LastError != "broker unreachable" || got.DueIn < lo || got.DueIn > hi {
		t.Fatalf("after a failed publication: %+v; want pending, 1 attempt, no lease, the error, due in [%s, %s]", got, lo, hi)
	}
	if res := runOnce(t, r); res.Claimed != 0 {
		t.Fatalf("before the backoff ends: %+v; want nothing (k2 waits behind k1)", res)
	}
	time.Sleep(got.DueIn)
	down = false
	if res := runOnce(t, r); res != (relay.BatchResult{Claimed: 1, Published: 1}) || sink.ids(1)[0] != ids[0] {
		t.Fatalf("once due: %+v %v; want k1 published", res, sink.ids(1))
	}
	if got := readRow(t, pool, ids[0]); got.State != "published" || got.Attempts != 2 {
		t.Fatalf("k1: %+v, want published on attempt 2", got)
	}
}

// TestPoisonAndMaxAttempts: an error marked Poison fails its event at once; with
// MaxAttempts, a transient error fails it on the last attempt; both stay visible
// with their errors and RetryFailed makes them pending again.
func TestPoisonAndMaxAttempts(t *testing.T) {
	t.Parallel()
	pool := testkit.MigratedSchema(t)
	ids := append(publish(t, pool, unorderedType(t), thing{N: 1}, thing{N: 2}),
		publish(t, pool, orderedType(t), thing{Key: "x", N: 3}, thing{Key: "x", N: 4})...)
	sink := &recordSink{fail: func(m relay.Message) error {
		switch m.ID {
		case ids[0]:
			return relay.Poison(errors.New("message too large"))
		case ids[1]:
			return errors.New("timeout")
		}
		return nil
	}}
	r := newRelay(t, pool, relay.Config{Sink: sink, MaxAttempts: 2, RetryInitial: time.Millisecond, RetryMax: time.Millisecond})
	if res := runOnce(t, r); res != (relay.BatchResult{Claimed: 3, Published: 1, Retried: 1, Failed: 1}) {
		t.Fatalf("first batch %+v", res)
	}
	time.Sleep(10 * time.Millisecond)
	if res := runOnce(t, r); res != (relay.BatchResult{Claimed: 2, Published: 1, Failed: 1}) {
		t.Fatalf("second batch %+v (the timeout's last attempt and x's second event)", res)
	}
	for id, want := range map[int64]row{ids[0]: {State: "failed", Attempts: 1, LastError: "message too large"}, ids[1]: {State: "failed", Attempts: 2, LastError: "timeout"}} {
		got := readRow(t, pool, id)
		got.DueIn = 0
		if got != want {
			t.Errorf("event %d: %+v, want %+v", id, got, want)
		}
	}
	failed, err := relay.ListFailed(t.Context(), pool, 10)
	if err != nil || len(failed) != 2 || failed[0].ID != ids[1] || failed[1].Error != "message too large" {
		t.Fatalf("ListFailed: %+v, %v; want both, newest first", failed, err)
	}
	stats, err := relay.ReadStats(t.Context(), pool)
	if err != nil || stats != (relay.Stats{Failed: 2}) {
		t.Fatalf("stats %+v, %v; want 2 failed, nothing pending", stats, err)
	}
	if n, err := relay.RetryFailed(t.Context(), pool, []int64{ids[0]}); err != nil || n != 1 {
		t.Fatalf("RetryFailed(one): %d, %v", n, err)
	}
	sink.fail = nil
	if res := runOnce(t, r); res != (relay.BatchResult{Claimed: 1, Published: 1}) {
		t.Fatalf("after RetryFailed: %+v", res)
	}
	if n, err := relay.RetryFailed(t.Context(), pool, nil); err != nil || n != 1 {
		t.Fatalf("RetryFailed(all): %d, %v; want the one left", n, err)
	}
}

// TestExpiredLeaseTakenOver: a relay that stalls past its lease loses the batch: a
// second relay sends it again, and the first one's late confirmation changes nothing
// (its records are conditioned on its lease token) and is counted as lost.
func TestExpiredLeaseTakenOver(t *testing.T) {
	t.Parallel()
	pool := testkit.MigratedSchema(t)
	et := orderedType(t)
	ids := publish(t, pool, et, thing{Key: "k", N: 1}, thing{Key: "k", N: 2})
	const lease = 300 * time.Millisecond
	stalled := &recordSink{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	first := newRelay(t, pool, relay.Config{Sink: stalled, LeaseDuration: lease, PublishTimeout: lease / 2})
	done := make(chan relay.BatchResult)
	go func() {
		res, err := first.RunOnce(context.Background())
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	<-stalled.entered
	second := newRelay(t, pool, relay.Config{Sink: &recordSink{}})
	if res := runOnce(t, second); res.Claimed != 0 {
		t.Fatalf("while the lease holds: %+v", res)
	}
	time.Sleep(lease)
	if res := runOnce(t, second); res != (relay.BatchResult{Claimed: 1, Published: 1}) {
		t.Fatalf("after the lease expired: %+v; want k1 taken over", res)
	}
	close(stalled.gate)
	if res := <-done; res != (relay.BatchResult{Claimed: 1, Lost: 1}) {
		t.Fatalf("the stalled relay: %+v; want its one event lost", res)
	}
	if got := readRow(t, pool, ids[0]); got.State != "published" || got.Attempts != 2 {
		t.Fatalf("k1: %+v, want published on attempt 2", got)
	}
	if res := runOnce(t, second); res.Published != 1 {
		t.Fatalf("k2: %+v", res)
	}
}

// TestRunShutdownAndHooks: Run relays everything, reports each batch and the outbox's
// stats to its hooks, and on cancellation finishes the batch in flight (recording its
// confirmation) before it returns.
func TestRunShutdownAndHooks(t *testing.T) {
	t.Parallel()
	pool := testkit.MigratedSchema(t)
	et := orderedType(t)
	var things []thing
	for i := range 25 {
		things = append(things, thing{Key: fmt.Sprintf("k%d", i%5), N: i})
	}
	ids := publish(t, pool, et, things...)
	hook := &recordHook{}
	sink := &recordSink{}
	cfg := relay.Config{Sink: sink, Hooks: []runtime.Hook{hook}, BatchSize: 4, Concurrency: 2, PollInterval: 10 * time.Millisecond, StatsInterval: 10 * time.Millisecond}
	r := newRelay(t, pool, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error)
	go func() { ran <- r.Run(ctx) }()
	testkit.WaitFor(t, "every event published", cfg.PollInterval, 100*cfg.PollInterval*time.Duration(len(ids)), func() bool {
		s, err := relay.ReadStats(t.Context(), pool)
		return err == nil && s.Pending == 0
	}, hook.String)

	// The next event's batch is in flight when Run is cancelled.
	sink.mu.Lock()
	sink.gate, sink.entered = make(chan struct{}), make(chan struct{}, 1)
	sink.mu.Unlock()
	last := publish(t, pool, et, thing{Key: "z"})
	<-sink.entered
	testkit.WaitFor(t, "the stats to show the event in flight", cfg.StatsInterval, 100*cfg.StatsInterval, func() bool {
		_, stats := hook.totals()
		return len(stats) > 0 && stats[len(stats)-1].Pending == 1 && stats[len(stats)-1].Lag > 0
	}, hook.String)
	cancel()
	close(sink.gate)
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if got := readRow(t, pool, last[0]); got.State != "published" {
		t.Fatalf("the batch in flight at shutdown: %+v, want published", got)
	}
	if published, _ := hook.totals(); published != len(ids)+1 {
		t.Errorf("hooks saw %d events published, want %d; %s", published, len(ids)+1, hook)
	}
}

// recordHook records the relay's maintenance events.
type recordHook struct {
	mu     sync.Mutex
	events []runtime.Event
}

func (h *recordHook) OnEvent(_ context.Context, e runtime.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e)
}

// totals returns the events published according to the "relay" events, and the
// "relay_stats" results in order.
func (h *recordHook) totals() (published int, stats []relay.Stats) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.events {
		switch r := e.Result.(type) {
		case relay.BatchResult:
			published += r.Published
		case relay.Stats:
			stats = append(stats, r)
		}
	}
	return published, stats
}

func (h *recordHook) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b strings.Builder
	for _, e := range h.events {
		fmt.Fprintf(&b, "%s %+v %v; ", e.Service, e.Result, e.Err)
	}
	return b.String()
}

// TestPrunerRunOnce: the pruner deletes the events published before the retention, in
// batches, and keeps newer, pending and failed ones.
func TestPrunerRunOnce(t *testing.T) {
	t.Parallel()
	pool := testkit.MigratedSchema(t)
	var things []thing
	for i := range 7 {
		things = append(things, thing{N: i})
	}
	ids := publish(t, pool, unorderedType(t), things...)
	// ids 0-3 published an hour ago, 4 a second ago, 5 failed an hour ago, 6 pending.
	exec := func(sql string, args ...any) {
		if _, err := pool.Exec(t.Context(), sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`UPDATE jobc_events SET state = 'published', published_at = now() - interval '1 hour' WHERE id = ANY($1)`, ids[:4])
	exec(`UPDATE jobc_events SET state = 'published', published_at = now() - interval '1 second' WHERE id = $1`, ids[4])
	exec(`UPDATE jobc_events SET state = 'failed', created_at = now() - interval '1 hour' WHERE id = $1`, ids[5])
	p := relay.NewPruner(pool, relay.PrunerConfig{Retention: time.Minute, BatchSize: 3})
	if n, err := p.RunOnce(t.Context()); err != nil || n != 4 {
		t.Fatalf("RunOnce: %d, %v; want 4 deleted (two statements of at most 3)", n, err)
	}
	var left []int64
	rows, err := pool.Query(t.Context(), `SELECT id FROM jobc_events ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		left = append(left, id)
	}
	if !slices.Equal(left, ids[4:]) {
		t.Fatalf("left %v, want %v", left, ids[4:])
	}
	if n, err := p.RunOnce(t.Context()); err != nil || n != 0 {
		t.Fatalf("second RunOnce: %d, %v; want nothing", n, err)
	}
}

// TestConfig: a relay needs a sink, the declared events (each once) and a publication
// timeout shorter than its lease.
func TestConfig(t *testing.T) {
	t.Parallel()
	events := []*runtime.EventType{unorderedType(t)}
	if _, err := relay.New(nil, relay.Config{Events: events}); err == nil || !strings.Contains(err.Error(), "Sink") {
		t.Errorf("New without a sink: %v", err)
	}
	if _, err := relay.New(nil, relay.Config{Sink: &recordSink{}}); err == nil || !strings.Contains(err.Error(), "Config.Events is empty") {
		t.Errorf("New without events: %v", err)
	}
	if _, err := relay.New(nil, relay.Config{Sink: &recordSink{}, Events: []*runtime.EventType{nil}}); err == nil || !strings.Contains(err.Error(), "Events[0] is nil") {
		t.Errorf("New with a nil event: %v", err)
	}
	if _, err := relay.New(nil, relay.Config{Sink: &recordSink{}, Events: []*runtime.EventType{{Name: "literal", Subject: "s"}}}); err == nil || !strings.Contains(err.Error(), "build it with runtime.NewEventType") {
		t.Errorf("New with an event type not built by NewEventType: %v", err)
	}
	twice := append(events, unorderedType(t))
	if _, err := relay.New(nil, relay.Config{Sink: &recordSink{}, Events: twice}); err == nil || !strings.Contains(err.Error(), "thing_noted twice") {
		t.Errorf("New with an event declared twice: %v", err)
	}
	_, err := relay.New(nil, relay.Config{Sink: &recordSink{}, Events: events, LeaseDuration: time.Second, PublishTimeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "PublishTimeout") {
		t.Errorf("New with PublishTimeout = LeaseDuration: %v", err)
	}
	_, err = relay.New(nil, relay.Config{Sink: &recordSink{}, Events: events, PublishTimeout: time.Minute}) // the default lease: 30s
	if err == nil || !strings.Contains(err.Error(), "LeaseDuration 30s") {
		t.Errorf("New with PublishTimeout above the default lease: %v", err)
	}
}

// lockingSink confirms every message, then holds an exclusive lock on the outbox for
// hold, so that the relay's first attempts to record the batch time out.
type lockingSink struct {
	pool *pgxpool.Pool
	hold time.Duration
	done chan error
}

func (s *lockingSink) Publish(ctx context.Context, _ []relay.Message) []error {
	tx, err := s.pool.Begin(ctx)
	if err == nil {
		_, err = tx.Exec(ctx, "LOCK TABLE jobc_events IN ACCESS EXCLUSIVE MODE")
	}
	if err != nil {
		return relay.AllErrors(1, err)
	}
	go func() {
		time.Sleep(s.hold)
		s.done <- tx.Commit(context.Background())
	}()
	return nil
}

func (s *lockingSink) Close() error { return nil }

// TestRecordRetried: when recording the broker's confirmation fails (here: statement
// timeouts behind a lock), the relay retries it within the lease instead of leaving
// the batch to be sent again.
func TestRecordRetried(t *testing.T) {
	t.Parallel()
	pool := testkit.MigratedSchema(t)
	ids := publish(t, pool, unorderedType(t), thing{N: 1})
	const timeout = 200 * time.Millisecond
	sink := &lockingSink{pool: pool, hold: 3 * timeout, done: make(chan error, 1)}
	r := newRelay(t, pool, relay.Config{Sink: sink, StatementTimeout: timeout, PollInterval: timeout / 2, LeaseDuration: 20 * timeout})
	res, err := r.RunOnce(t.Context())
	if err != nil || res != (relay.BatchResult{Claimed: 1, Published: 1}) {
		t.Fatalf("batch %+v, %v; want the confirmation recorded after the lock is gone", res, err)
	}
	if err := <-sink.done; err != nil {
		t.Fatal(err)
	}
	if got := readRow(t, pool, ids[0]); got.State != "published" || got.Attempts != 1 {
		t.Fatalf("event: %+v, want published on its first attempt", got)
	}
}

// TestRunCommitsAsynchronously: given a pool, Run's statements commit with
// synchronous_commit off (a trigger records the setting of every outbox update).
func TestRunCommitsAsynchronously(t *testing.T) {
	t.Parallel()
	pool := testkit.MigratedSchema(t)
	for _, sql := range []string{
		`CREATE TABLE commit_modes (mode text)`,
		`CREATE FUNCTION log_commit_mode() RETURNS trigger LANGUAGE plpgsql AS $$
		 BEGIN INSERT INTO commit_modes VALUES (current_setting('synchronous_commit')); RETURN NEW; END $$`,
		`CREATE TRIGGER log_commit_mode AFTER UPDATE ON jobc_events FOR EACH ROW EXECUTE FUNCTION log_commit_mode()`,
	} {
		if _, err := pool.Exec(t.Context(), sql); err != nil {
			t.Fatal(err)
		}
	}
	var server string
	if err := pool.QueryRow(t.Context(), `SHOW synchronous_commit`).Scan(&server); err != nil || server == "off" {
		t.Fatalf("the test database's synchronous_commit is %q (%v); this test needs a default that waits for the flush", server, err)
	}
	publish(t, pool, unorderedType(t), thing{N: 1})
	cfg := relay.Config{Sink: &recordSink{}, PollInterval: 10 * time.Millisecond}
	r := newRelay(t, pool, cfg)
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan error)
	go func() { ran <- r.Run(ctx) }()
	var modes []string
	testkit.WaitFor(t, "the claim and the mark", cfg.PollInterval, 500*cfg.PollInterval, func() bool {
		modes = modes[:0]
		rows, err := pool.Query(t.Context(), `SELECT mode FROM commit_modes`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var m string
			if err := rows.Scan(&m); err != nil {
				t.Fatal(err)
			}
			modes = append(modes, m)
		}
		return len(modes) == 2
	}, func() string { return fmt.Sprint(modes) })
	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(modes, []string{"off", "off"}) {
		t.Errorf("the relay's updates committed with synchronous_commit %v, want off", modes)
	}
}
