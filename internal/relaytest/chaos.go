package relaytest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime"
)

// ChaosBroker is what the chaos scenario needs from one broker's tests.
type ChaosBroker struct {
	Name   string // for messages: "NATS JetStream", "RabbitMQ"
	URL    string // the broker the relay children connect to
	Target string // passed to the children's NewSink (a stream, an exchange)
	Prefix string // the events' subject is Prefix.happened
	// Restart stops the broker, leaves it down for down, and starts it again with
	// the same data.
	Restart func(ctx context.Context, down time.Duration) error
	// Read returns every message the broker received for the test, in the order it
	// delivers them; it is called once the outbox is empty, with the number of
	// committed events (a lower bound).
	Read func(ctx context.Context, atLeast int) ([]Delivery, error)
	// ExactlyOnce: the broker must hold each event once (JetStream's deduplication).
	ExactlyOnce bool
}

// ChaosConfig sizes the scenario.
type ChaosConfig struct {
	Transactions  int // business transactions, each writing PerTx events
	PerTx         int
	RollbackEvery int // every n-th transaction rolls back
	Keys          int // ordering keys
	Producers     int // concurrent producers
	// Pace is each producer's pause between transactions, so that the events flow
	// while the relay is killed and the broker restarted rather than before.
	Pace     time.Duration
	Settings ChildSettings
}

// DefaultChaos is the scenario of the issue: 10,000 events in 2,000 transactions of 5,
// 10% of the transactions rolled back, 64 ordering keys, 4 producers.
func DefaultChaos() ChaosConfig {
	return ChaosConfig{Transactions: 2000, PerTx: 5, RollbackEvery: 10, Keys: 64, Producers: 4,
		Pace: 12 * time.Millisecond, Settings: DefaultSettings()}
}

// slowdown multiplies the intervals a wait derives from: on a loaded machine a process
// gets the CPU late, and the test must pass there too.
const slowdown = 5

// within returns base plus slowdown times the sum of intervals.
func within(base time.Duration, intervals ...time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range intervals {
		sum += d
	}
	return base + slowdown*sum
}

// processStart allows for exec, connect and the first claim on a loaded machine.
const processStart = 20 * time.Second

// Chaos runs the scenario: producers write events in business transactions (some
// rolled back) while relay A runs as a child process; once a fifth of the events is
// published A is killed with SIGKILL and relay B started; once half is published the
// broker restarts. When the producers are done and the outbox has nothing pending, it
// checks what the broker received: every committed event at least once (exactly once
// with b.ExactlyOnce), each key's events in id order, no event of a rolled-back
// transaction, and an outbox with no pending or failed row.
func Chaos(t *testing.T, pool *pgxpool.Pool, database string, b ChaosBroker, c ChaosConfig) {
	ctx := t.Context()
	s := c.Settings
	if _, err := pool.Exec(ctx, `CREATE TABLE orders (tx int PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}

	et := ChaosEventType(b.Prefix)
	relayA := StartRelay(t, "A", database, b.URL, b.Target, b.Prefix, s)

	var mu sync.Mutex
	committed := map[int64]Payload{} // by event id
	rolledBack := map[int]bool{}     // transactions
	var prodErr error
	var wg sync.WaitGroup
	next := make(chan int)
	go func() {
		defer close(next)
		for tx := range c.Transactions {
			select {
			case next <- tx:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range c.Producers {
		wg.Go(func() {
			for n := range next {
				ids, ps, err := produce(ctx, pool, et, n, c)
				mu.Lock()
				switch {
				case err != nil:
					prodErr = err
				case ids == nil:
					rolledBack[n] = true
				default:
					for i, id := range ids {
						committed[id] = ps[i]
					}
				}
				mu.Unlock()
				if err != nil {
					return
				}
				time.Sleep(c.Pace)
			}
		})
	}
	total := c.Transactions * c.PerTx
	published := func() int {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM jobc_events WHERE state = 'published'`).Scan(&n); err != nil {
			return -1
		}
		return n
	}
	state := func() string {
		mu.Lock()
		defer mu.Unlock()
		return fmt.Sprintf("%d committed, %d transactions rolled back; %s", len(committed), len(rolledBack), OutboxCounts(ctx, pool))
	}

	// A fifth published: kill A in the middle of a batch, with events leased.
	leased := func() int {
		var n int
		_ = pool.QueryRow(ctx, `SELECT count(*) FROM jobc_events WHERE state = 'pending' AND lease_token IS NOT NULL`).Scan(&n)
		return n
	}
	waitFor(t, "a fifth of the events to be published by relay A", within(processStart, s.Poll, s.Lease), func() (bool, string) {
		ok, how := relayA.Exited()
		if ok {
			t.Fatalf("relay A %s before it was killed:\n%s", how, relayA.Output())
		}
		return published() >= total/5, state()
	})
	// Batches are in flight for milliseconds at a time while the producers run: the
	// wait polls every millisecond, for as long as the producers have left.
	waitFor(t, "relay A to hold a batch", within(0, s.Poll, c.Pace, s.Lease), func() (bool, string) {
		return leased() > 0, state()
	})
	relayA.Kill(t)
	t.Logf("killed relay A, leaving %d events leased; %s", leased(), state())
	relayB := StartRelay(t, "B", database, b.URL, b.Target, b.Prefix, s)

	// Half published: restart the broker under relay B, down for long enough that
	// publications time out.
	waitFor(t, "half of the events to be published", within(processStart, s.Lease, s.Poll), func() (bool, string) {
		return published() >= total/2, state()
	})
	began := time.Now()
	if err := b.Restart(ctx, 2*s.PublishTimeout); err != nil {
		t.Fatalf("restart %s: %v", b.Name, err)
	}
	t.Logf("restarted %s in %s; %s", b.Name, time.Since(began).Round(time.Millisecond), state())

	wg.Wait()
	if prodErr != nil {
		t.Fatalf("producer: %v", prodErr)
	}
	// Everything pending goes out: the wait restarts whenever the outbox shrinks, so it
	// fails only when the relay makes no progress for as long as a lease, a backoff, a
	// publication and a poll would take.
	stall := within(0, s.Lease, s.RetryMax, s.PublishTimeout, s.Poll)
	last, lastAt := -1, time.Now()
	for {
		var pending int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM jobc_events WHERE state = 'pending'`).Scan(&pending); err != nil {
			t.Fatal(err)
		}
		if pending == 0 {
			break
		}
		if pending != last {
			last, lastAt = pending, time.Now()
		}
		if time.Since(lastAt) > stall {
			t.Fatalf("the outbox stopped draining: %d pending for %s; %s\nrelay B, with its goroutines after SIGQUIT:\n%s", pending, stall, state(), relayB.Goroutines())
		}
		time.Sleep(s.Poll)
	}
	relayB.Stop(t, within(0, s.PublishTimeout, time.Second))
	t.Logf("outbox drained; %s", state())
	if !strings.Contains(relayB.Output(), "publication failed") {
		t.Errorf("relay B logged no failed publication: did the broker's restart reach it?\n%s", tailOf(relayB.Output()))
	}

	deliveries, err := b.Read(ctx, len(committed))
	if err != nil {
		t.Fatalf("read what %s received: %v", b.Name, err)
	}
	checkDeliveries(t, b, committed, rolledBack, deliveries)
	var notDone int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM jobc_events WHERE state <> 'published'`).Scan(&notDone); err != nil {
		t.Fatal(err)
	}
	if notDone != 0 {
		t.Errorf("%d outbox rows are not published; %s", notDone, state())
	}
}

// produce runs business transaction n: an order and PerTx events with random keys,
// committed, or rolled back when n is a multiple of RollbackEvery. It returns the ids
// and payloads of the committed events, nil for a rollback.
func produce(ctx context.Context, pool *pgxpool.Pool, et *runtime.EventType, n int, c ChaosConfig) ([]int64, []Payload, error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit, a no-op
	if _, err := tx.Exec(ctx, `INSERT INTO orders (tx) VALUES ($1)`, n); err != nil {
		return nil, nil, fmt.Errorf("transaction %d: %w", n, err)
	}
	ids := make([]int64, c.PerTx)
	ps := make([]Payload, c.PerTx)
	// Publish locks each ordering key until commit: a transaction that publishes
	// several takes them in sorted order, or two could each wait for the other's key.
	keys := make([]string, c.PerTx)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%02d", rand.IntN(c.Keys))
	}
	slices.Sort(keys)
	for i := range c.PerTx {
		ps[i] = Payload{Tx: n, I: i, Key: keys[i]}
		p, err := runtime.Publish(ctx, tx, et, ps[i])
		if err != nil {
			return nil, nil, fmt.Errorf("transaction %d: %w", n, err)
		}
		ids[i] = p.ID
	}
	if c.RollbackEvery > 0 && n%c.RollbackEvery == 0 {
		return nil, nil, tx.Rollback(ctx)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, nil, fmt.Errorf("transaction %d: commit: %w", n, err)
	}
	return ids, ps, nil
}

// checkDeliveries compares what the broker delivered with what was committed.
func checkDeliveries(t *testing.T, b ChaosBroker, committed map[int64]Payload, rolledBack map[int]bool, ds []Delivery) {
	t.Helper()
	seen := map[int64]int{}
	lastOfKey := map[string]int64{}
	var regressions, strangers, fromRollback []string
	for _, d := range ds {
		p, err := d.decode()
		if err != nil {
			t.Error(err)
			continue
		}
		seen[d.ID]++
		want, ok := committed[d.ID]
		switch {
		case rolledBack[p.Tx]:
			fromRollback = append(fromRollback, fmt.Sprintf("event %d of transaction %d", d.ID, p.Tx))
		case !ok || want != p:
			strangers = append(strangers, fmt.Sprintf("event %d %s (committed: %v %+v)", d.ID, d.Body, ok, want))
		}
		// A key's events arrive in id order; a redelivery may repeat the newest one.
		if last := lastOfKey[p.Key]; d.ID < last {
			regressions = append(regressions, fmt.Sprintf("key %s: event %d after %d", p.Key, d.ID, last))
		} else {
			lastOfKey[p.Key] = d.ID
		}
	}
	var missing []int64
	for id := range committed {
		if seen[id] == 0 {
			missing = append(missing, id)
		}
	}
	slices.Sort(missing)
	dups := len(ds) - len(seen)
	t.Logf("%s: %d deliveries of %d distinct events; %d committed, %d missing, %d redelivered, %d transactions rolled back",
		b.Name, len(ds), len(seen), len(committed), len(missing), dups, len(rolledBack))
	if len(missing) > 0 {
		t.Errorf("%d committed events never arrived, e.g. %v", len(missing), missing[:min(len(missing), 10)])
	}
	if len(fromRollback) > 0 {
		t.Errorf("%d events of rolled-back transactions arrived, e.g. %v", len(fromRollback), fromRollback[:min(len(fromRollback), 10)])
	}
	if len(strangers) > 0 {
		t.Errorf("%d deliveries match no committed event, e.g. %v", len(strangers), strangers[:min(len(strangers), 10)])
	}
	if len(regressions) > 0 {
		t.Errorf("per-key order broken %d times, e.g. %v", len(regressions), regressions[:min(len(regressions), 10)])
	}
	if b.ExactlyOnce && dups != 0 {
		t.Errorf("%s holds %d duplicates; want each event exactly once", b.Name, dups)
	}
}

// waitFor polls cond every 20ms until it holds or timeout passes, then fails with what
// cond last reported.
func waitFor(t testing.TB, what string, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; saw %s", timeout, what, state)
		}
		time.Sleep(time.Millisecond)
	}
}

// tailOf returns the last lines of a process's output.
func tailOf(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	return strings.Join(lines[max(len(lines)-30, 0):], "\n")
}
