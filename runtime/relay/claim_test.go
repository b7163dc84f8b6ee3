package relay_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/testkit"
	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/relay"
)

// claimReading runs one claim of up to max events (jobc_claim_events, as the relay
// calls it) in a transaction of its own, and returns the ids it leased and how many
// entries it read from the outbox's indexes and rows from its table sequentially
// (the backend's counts before and after it, in the transaction: they hold what
// the session has not reported yet, which a transaction's end does not flush).
func claimReading(t *testing.T, pool *pgxpool.Pool, max int) (ids []int64, entries, seqRows int64) {
	t.Helper()
	ctx := t.Context()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // committed below
	reads := func() (entries, seqRows int64) {
		err := tx.QueryRow(ctx, `SELECT (SELECT sum(pg_stat_get_xact_tuples_returned(indexrelid)) FROM pg_index WHERE indrelid = 'jobc_events'::regclass)::bigint,
			pg_stat_get_xact_tuples_returned('jobc_events'::regclass)`).Scan(&entries, &seqRows)
		if err != nil {
			t.Fatal(err)
		}
		return entries, seqRows
	}
	entries0, seqRows0 := reads()
	rows, err := tx.Query(ctx, `SELECT id FROM jobc_claim_events(1, 30, $1, 3600, 0) ORDER BY id`, max)
	if err != nil {
		t.Fatal(err)
	}
	if ids, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
		t.Fatal(err)
	}
	entries, seqRows = reads()
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return ids, entries - entries0, seqRows - seqRows0
}

// publishRounds publishes depth events for each of keys, round after round (key 0's
// first, key 1's first, ..., key 0's second, ...), in one transaction, and returns
// their ids by key.
func publishRounds(t *testing.T, pool *pgxpool.Pool, et *runtime.EventType, keys, depth int) [][]int64 {
	t.Helper()
	var things []thing
	for n := range keys * depth {
		things = append(things, thing{Key: fmt.Sprintf("k%02d", n%keys), N: n})
	}
	published, err := runtime.PublishMany(t.Context(), pool, et, things)
	if err != nil {
		t.Fatal(err)
	}
	byKey := make([][]int64, keys)
	for n, p := range published {
		byKey[n%keys] = append(byKey[n%keys], p.ID)
	}
	return byKey
}

// TestClaimVisitsKeysNotBacklog: with a few keys, a deep backlog each, and every key's
// oldest event in flight, a claim has nothing to take, and must find that out by
// visiting the keys rather than by reading the backlog. It read every pending event
// (each with a probe for an older one of its key), so 10 keys with 500 events each
// went out at 480-500 events/s (issue 24, bench/results/2026-12-06-relay-keys.txt).
func TestClaimVisitsKeysNotBacklog(t *testing.T) {
	t.Parallel()
	pool := testkit.MigratedSchema(t)
	const keys, depth, batch = 10, 200, 50
	byKey := publishRounds(t, pool, orderedType(t), keys, depth)
	heads := func(n int) []int64 {
		var ids []int64
		for _, k := range byKey {
			ids = append(ids, k[n])
		}
		return ids
	}

	if ids, _, _ := claimReading(t, pool, batch); !slices.Equal(ids, heads(0)) {
		t.Fatalf("first claim took %v, want the oldest event of each key %v", ids, heads(0))
	}
	ids, entries, seqRows := claimReading(t, pool, batch)
	// Its window (batch entries of the claimable index, as many rows), each key's
	// oldest event twice (once from the window's keys, once from the visit) and the
	// visit's descents: a few entries per key beyond the window, against the
	// keys·depth the backlog holds.
	if want := int64(batch + 8*keys); len(ids) != 0 || entries > want || seqRows != 0 {
		t.Fatalf("claim with every key's oldest event in flight: took %v, read %d index entries (want at most %d of the %d pending) and %d rows sequentially",
			ids, entries, want, keys*depth, seqRows)
	}

	if _, err := pool.Exec(t.Context(), `UPDATE jobc_events SET state = 'published', published_at = now() WHERE id = ANY($1)`, heads(0)); err != nil {
		t.Fatal(err)
	}
	if ids, _, _ := claimReading(t, pool, batch); !slices.Equal(ids, heads(1)) {
		t.Fatalf("claim once the first events were published took %v, want each key's second %v", ids, heads(1))
	}
}

// TestClaimReachesEveryKey: a key whose oldest event backs off (its broker refuses it
// for now) with a backlog behind it that fills a claim's window, keys sorted before
// the others that always have an event due, and one key sorted last. The claims that
// look past the window for keys must reach the last one too, not only the keys sorted
// first: they start at the key of a pending event picked at random by id (in 300 runs
// the first claim reached it in 195, the sixth at the latest; the chance of a claim
// falls slowly as the busy keys' new events take ids, so 300 claims leave no room for
// a flake). A visit from the first key never reaches it. The stuck key sends nothing.
func TestClaimReachesEveryKey(t *testing.T) {
	t.Parallel()
	pool := testkit.MigratedSchema(t)
	et := orderedType(t)
	const batch, busy, claims = 10, 20, 300
	stuck := make([]thing, 2*batch)
	for i := range stuck {
		stuck[i] = thing{Key: "m-stuck", N: i}
	}
	stuckIDs := publish(t, pool, et, stuck...)
	if _, err := pool.Exec(t.Context(), `UPDATE jobc_events SET available_at = now() + interval '1 hour', attempts = 1 WHERE id = $1`, stuckIDs[0]); err != nil {
		t.Fatal(err)
	}
	for i := range busy {
		publish(t, pool, et, thing{Key: fmt.Sprintf("a%02d", i)})
	}
	last := publish(t, pool, et, thing{Key: "z-last"})

	sink := &recordSink{}
	r := newRelay(t, pool, relay.Config{Sink: sink, BatchSize: batch})
	var sent []string
	for range claims {
		res := runOnce(t, r)
		if res.Claimed == 0 {
			t.Fatalf("a claim took nothing after %v", sent)
		}
		for _, m := range sink.batches[len(sink.batches)-1] {
			sent = append(sent, m.OrderingKey)
			switch {
			case m.ID == last[0]:
				return
			case m.OrderingKey == "m-stuck":
				t.Fatalf("event %d of the stuck key sent while its oldest backs off", m.ID)
			default:
				publish(t, pool, et, thing{Key: m.OrderingKey}) // the key stays busy
			}
		}
	}
	t.Fatalf("%d claims never reached the key sorted last; they sent %s", claims, strings.Join(sent, " "))
}

// TestRunClaimsAgainAfterKeyedBatch: a batch that sent events with ordering keys made
// their keys' next events claimable, so Run claims again at once instead of waiting
// its PollInterval, and a backlog of a few keys does not go out at one event per key
// per PollInterval.
func TestRunClaimsAgainAfterKeyedBatch(t *testing.T) {
	t.Parallel()
	pool := testkit.MigratedSchema(t)
	const keys, depth = 3, 5
	publishRounds(t, pool, orderedType(t), keys, depth)
	sink := &recordSink{}
	cfg := relay.Config{Sink: sink, PollInterval: time.Minute}
	r := newRelay(t, pool, cfg)
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan error)
	go func() { ran <- r.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-ran; err != nil {
			t.Error(err)
		}
	}()
	// Within half a PollInterval: a relay that waited after the first batch (one event
	// per key) would still be waiting.
	testkit.WaitFor(t, "every event published", 10*time.Millisecond, cfg.PollInterval/2, func() bool {
		s, err := relay.ReadStats(t.Context(), pool)
		return err == nil && s.Pending == 0
	}, func() string {
		sink.mu.Lock()
		defer sink.mu.Unlock()
		return fmt.Sprintf("%d batches sent: %v", len(sink.batches), sink.batches)
	})
}
