package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// The order_paid event of these tests: version 2 renames amount to total.
const (
	orderPaidV1 = `{"type":"object","additionalProperties":false,"required":["order_id","amount"],
		"properties":{"order_id":{"type":"string"},"amount":{"type":"integer"}}}`
	orderPaidV2 = `{"type":"object","additionalProperties":false,"required":["order_id","total"],
		"properties":{"order_id":{"type":"string"},"total":{"type":"integer"}}}`
	// The invoice job's payload, filled from the event through a mapping.
	invoiceV1 = `{"type":"object","additionalProperties":false,"required":["order","cents"],
		"properties":{"order":{"type":"string"},"cents":{"type":"integer","minimum":1},"currency":{"type":"string","default":"EUR"}}}`
)

type orderPaidV1Payload struct {
	OrderID string `json:"order_id"`
	Amount  int    `json:"amount"`
}

type orderPaidV2Payload struct {
	OrderID string `json:"order_id"`
	Total   int    `json:"total"`
}

type invoicePayload struct {
	Order    string `json:"order"`
	Cents    int    `json:"cents"`
	Currency string `json:"currency"`
}

func orderPaidVersions() []runtime.Version {
	return []runtime.Version{
		{Number: 1, Schema: orderPaidV1},
		{Number: 2, Schema: orderPaidV2, Upcast: runtime.Changes(runtime.RenameField("amount", "total"))},
	}
}

// shopTypes are the jobs subscribed to order_paid: ship_order typed as the event (its
// payload has the event's versions), send_invoice through a mapping.
func shopTypes(t *testing.T) (ship, invoice *runtime.JobType) {
	t.Helper()
	ship, err := runtime.NewJobType(runtime.JobType{
		Kind: "ship_order", Queue: "shop", Priority: 5, MaxAttempts: 3,
		WriteVersion: 2, Versions: orderPaidVersions(),
	})
	if err != nil {
		t.Fatal(err)
	}
	invoice, err = runtime.NewJobType(runtime.JobType{
		Kind: "send_invoice", Queue: "shop", Priority: 5, MaxAttempts: 3,
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: invoiceV1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return ship, invoice
}

// orderPaid builds the event at writeVersion, relayed, ordered by order_id.
func orderPaid(t *testing.T, writeVersion int, subs ...runtime.Subscriber) *runtime.EventType {
	t.Helper()
	et, err := runtime.NewEventType(runtime.EventType{
		Name: "order_paid", Subject: "shop.order_paid", OrderingKey: []string{"order_id"}, Relay: true,
		WriteVersion: writeVersion, Versions: orderPaidVersions(), Subscribers: subs,
	})
	if err != nil {
		t.Fatal(err)
	}
	return et
}

// TestPublishFanOut: one Publish, in the business transaction, writes the outbox row
// and each subscriber's job, which commit with it; a rollback leaves none of them. A
// version 1 event (published by an older build) reaches the subscriber typed as the
// event stored as version 1, and its handler gets it upcast to version 2; the mapped
// subscriber gets its own payload, with its defaults.
func TestPublishFanOut(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	ship, invoice := shopTypes(t)
	et := orderPaid(t, 1,
		runtime.Subscriber{Job: ship, Version: 1},
		runtime.Subscriber{Job: invoice, Map: map[string]string{"order_id": "order", "amount": "cents"}})
	if _, err := pool.Exec(ctx, `CREATE TABLE orders (id text PRIMARY KEY, paid bool)`); err != nil {
		t.Fatal(err)
	}

	// Rolled back: no order, no event, no job.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO orders VALUES ('o-1', true)`); err != nil {
		t.Fatal(err)
	}
	if _, err := runtime.Publish(ctx, tx, et, orderPaidV1Payload{OrderID: "o-1", Amount: 1250}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, pool, `SELECT (SELECT count(*) FROM jobc_events) + (SELECT count(*) FROM jobc_jobs_all)`); n != 0 {
		t.Fatalf("%d events and jobs after a rollback, want none", n)
	}

	// Committed: the event and both jobs.
	var p runtime.Published
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO orders VALUES ('o-1', true)`); err != nil {
			return err
		}
		p, err = runtime.Publish(ctx, tx, et, orderPaidV1Payload{OrderID: "o-1", Amount: 1250})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if p.ID == 0 || len(p.Jobs) != 2 {
		t.Fatalf("published %+v, want an outbox id and two jobs", p)
	}
	var (
		version int
		key     *string
		payload string
	)
	if err := pool.QueryRow(ctx, `SELECT version, ordering_key, payload::text FROM jobc_events WHERE id = $1`, p.ID).Scan(&version, &key, &payload); err != nil {
		t.Fatal(err)
	}
	if version != 1 || key == nil || *key != "o-1" || payload != `{"amount": 1250, "order_id": "o-1"}` {
		t.Errorf("outbox row: version %d, key %v, payload %s; want version 1, key o-1, the payload", version, key, payload)
	}
	jobs := map[string]string{}
	rows, err := pool.Query(ctx, `SELECT kind || '@' || payload_version, payload::text FROM jobc_jobs WHERE id = ANY($1)`, []int64{p.Jobs[0].ID, p.Jobs[1].ID})
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var kind, payload string
		if err := rows.Scan(&kind, &payload); err != nil {
			t.Fatal(err)
		}
		jobs[kind] = payload
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"ship_order@1":   `{"amount": 1250, "order_id": "o-1"}`,
		"send_invoice@1": `{"cents": 1250, "order": "o-1", "currency": "EUR"}`,
	}
	if fmt.Sprint(jobs) != fmt.Sprint(want) {
		t.Errorf("subscriber jobs %v, want %v", jobs, want)
	}

	// The workers see the newest versions.
	w := runtime.NewWorker(pool, testConfig(nil))
	shipped := make(chan orderPaidV2Payload, 1)
	invoiced := make(chan invoicePayload, 1)
	if err := runtime.Handle(w, ship, func(_ context.Context, _ *runtime.Job, p orderPaidV2Payload) error {
		shipped <- p
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := runtime.Handle(w, invoice, func(_ context.Context, _ *runtime.Job, p invoicePayload) error {
		invoiced <- p
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	patience := 100 * testConfig(nil).PollInterval
	select {
	case got := <-shipped:
		if got != (orderPaidV2Payload{OrderID: "o-1", Total: 1250}) {
			t.Errorf("ship_order got %+v, want the event upcast to version 2", got)
		}
	case <-time.After(patience):
		t.Fatalf("ship_order not handled after %s", patience)
	}
	select {
	case got := <-invoiced:
		if got != (invoicePayload{Order: "o-1", Cents: 1250, Currency: "EUR"}) {
			t.Errorf("send_invoice got %+v", got)
		}
	case <-time.After(patience):
		t.Fatalf("send_invoice not handled after %s", patience)
	}
}

// TestPublishInvalidWritesNothing: an event payload that fails its schema, or whose
// mapped subscriber payload fails the job's, is a *PayloadError and writes nothing,
// for the whole batch.
func TestPublishInvalidWritesNothing(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	ship, invoice := shopTypes(t)
	et := orderPaid(t, 2,
		runtime.Subscriber{Job: ship},
		runtime.Subscriber{Job: invoice, Map: map[string]string{"order_id": "order", "total": "cents"}})

	_, err := runtime.Publish(ctx, pool, et, map[string]any{"order_id": "o-1"})
	var pe *runtime.PayloadError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "total") {
		t.Errorf("Publish without total: %v, want a *PayloadError naming total", err)
	}
	// Valid for the event, but 0 cents is below the invoice's minimum.
	_, err = runtime.PublishMany(ctx, pool, et, []orderPaidV2Payload{{OrderID: "o-1", Total: 5}, {OrderID: "o-2", Total: 0}})
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "payload 1: subscriber send_invoice") || pe.Kind != "send_invoice" {
		t.Errorf("PublishMany with a bad invoice: %v, want a *PayloadError of send_invoice for payload 1", err)
	}
	if n := countRows(t, pool, `SELECT (SELECT count(*) FROM jobc_events) + (SELECT count(*) FROM jobc_jobs_all)`); n != 0 {
		t.Errorf("%d events and jobs after invalid publishes, want none", n)
	}
}

// TestPublishMany: a batch takes ids in order, keys its rows, and writes one job per
// event and subscriber; an event that is not relayed writes only its jobs.
func TestPublishMany(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	ship, _ := shopTypes(t)
	et := orderPaid(t, 2, runtime.Subscriber{Job: ship})
	batch := []orderPaidV2Payload{{OrderID: "o-2", Total: 1}, {OrderID: "o-1", Total: 2}, {OrderID: "o-2", Total: 3}}
	ps, err := runtime.PublishMany(ctx, pool, et, batch, runtime.WithEventMetadata(map[string]any{"trace": "t-1"}))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range ps {
		var key, payload, meta, jobMeta string
		if err := pool.QueryRow(ctx, `SELECT ordering_key, payload::text, metadata::text FROM jobc_events WHERE id = $1`, p.ID).Scan(&key, &payload, &meta); err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(batch[i])
		if i > 0 && p.ID <= ps[i-1].ID || key != batch[i].OrderID || !jsonEqual(payload, string(want)) || meta != `{"trace": "t-1"}` {
			t.Errorf("event %d: id %d (previous %d), key %s, payload %s, metadata %s", i, p.ID, ps[max(i-1, 0)].ID, key, payload, meta)
		}
		if err := pool.QueryRow(ctx, `SELECT payload::text, metadata::text FROM jobc_jobs WHERE id = $1`, p.Jobs[0].ID).Scan(&payload, &jobMeta); err != nil {
			t.Fatal(err)
		}
		if !jsonEqual(payload, string(want)) || jobMeta != `{"trace": "t-1"}` {
			t.Errorf("event %d's job: payload %s, metadata %s", i, payload, jobMeta)
		}
	}

	local, err := runtime.NewEventType(runtime.EventType{
		Name: "order_noted", Subject: "shop.order_noted", WriteVersion: 2, Versions: orderPaidVersions(),
		Subscribers: []runtime.Subscriber{{Job: ship}},
	})
	if err != nil {
		t.Fatal(err)
	}
	lps, err := runtime.PublishMany(ctx, pool, local, batch)
	if err != nil {
		t.Fatal(err)
	}
	if lps[0].ID != 0 || len(lps[2].Jobs) != 1 || lps[2].Jobs[0].ID == 0 {
		t.Errorf("unrelayed events: %+v, want no outbox ids and a job each", lps)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_events WHERE event = 'order_noted'`); n != 0 {
		t.Errorf("%d outbox rows of an event that is not relayed", n)
	}
}

// TestPublishManyOlderVersion: a batch of version 1 events (published by an older
// build) stores the jobs of the subscriber typed as the event as version 1, like
// Publish does, although the job type writes version 2: the payloads are version 1's.
func TestPublishManyOlderVersion(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	ship, _ := shopTypes(t)
	et := orderPaid(t, 1, runtime.Subscriber{Job: ship, Version: 1})
	ps, err := runtime.PublishMany(ctx, pool, et, []orderPaidV1Payload{{OrderID: "o-1", Amount: 1}, {OrderID: "o-2", Amount: 2}})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range ps {
		var version int
		var payload string
		if err := pool.QueryRow(ctx, `SELECT payload_version, payload::text FROM jobc_jobs WHERE id = $1`, p.Jobs[0].ID).Scan(&version, &payload); err != nil {
			t.Fatal(err)
		}
		if version != 1 {
			t.Errorf("event %d's job: payload version %d, want 1 (payload %s)", i, version, payload)
		}
	}
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return fmt.Sprint(x) == fmt.Sprint(y)
}

// TestOrderingKeyOpenPublisher: publishers of one key do not wait for each other, and
// a relay's claim sends nothing of a key while a transaction that published it is open
// (its smaller id could still commit): the key's events then leave in id order, one
// at a time, while another key's leave at once.
func TestOrderingKeyOpenPublisher(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	et := orderPaid(t, 2)

	first, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = first.Rollback(ctx) }()
	p1, err := runtime.Publish(ctx, first, et, orderPaidV2Payload{OrderID: "o-1", Total: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The same key and another go through while first is open.
	waitCtx, cancel := context.WithTimeout(ctx, 100*testConfig(nil).PollInterval)
	defer cancel()
	p2, err := runtime.Publish(waitCtx, pool, et, orderPaidV2Payload{OrderID: "o-1", Total: 2})
	if err != nil {
		t.Fatalf("a second publisher of key o-1, while the first is open: %v", err)
	}
	other, err := runtime.Publish(ctx, pool, et, orderPaidV2Payload{OrderID: "o-2", Total: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !(p1.ID < p2.ID && p2.ID < other.ID) {
		t.Fatalf("ids %d, %d, %d: want them in publish order", p1.ID, p2.ID, other.ID)
	}

	// p2 is the oldest committed event of o-1, but p1 is still open: only o-2 leaves.
	if got := claimEvents(t, pool, 3600, 0); fmt.Sprint(got) != fmt.Sprint([]int64{other.ID}) {
		t.Fatalf("claim with o-1's first publisher open: %v, want only o-2's %d", got, other.ID)
	}
	if err := first.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := claimEvents(t, pool, 3600, 0); fmt.Sprint(got) != fmt.Sprint([]int64{p1.ID}) {
		t.Fatalf("claim after o-1's first publisher committed: %v, want its event %d (and not %d, behind it)", got, p1.ID, p2.ID)
	}
	if _, err := pool.Exec(ctx, `UPDATE jobc_events SET state = 'published' WHERE id = $1`, p1.ID); err != nil {
		t.Fatal(err)
	}
	if got := claimEvents(t, pool, 3600, 0); fmt.Sprint(got) != fmt.Sprint([]int64{p2.ID}) {
		t.Fatalf("claim after %d was published: %v, want %d", p1.ID, got, p2.ID)
	}
}

// TestOrderingKeyStarved: a key whose publishers are never all closed is not held back
// for ever: once its oldest event has waited, a claim waits for the key's lock, holding
// no other, and takes the key's oldest event as it is once the lock is granted (an
// older one committed meanwhile); a claim that waits in vain returns the others.
func TestOrderingKeyStarved(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	et := orderPaid(t, 2)

	open, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = open.Rollback(ctx) }()
	older, err := runtime.Publish(ctx, open, et, orderPaidV2Payload{OrderID: "hot", Total: 1})
	if err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, 100*testConfig(nil).PollInterval)
	defer cancel()
	newer, err := runtime.Publish(waitCtx, pool, et, orderPaidV2Payload{OrderID: "hot", Total: 2})
	if err != nil {
		t.Fatalf("a second publisher of the hot key, while the first is open: %v", err)
	}
	free, err := runtime.Publish(ctx, pool, et, orderPaidV2Payload{OrderID: "cold", Total: 1})
	if err != nil {
		t.Fatal(err)
	}
	// A wait that times out: the other key still leaves, and the hot key's does not.
	if got := claimEvents(t, pool, 0, 10); fmt.Sprint(got) != fmt.Sprint([]int64{free.ID}) {
		t.Fatalf("claim while the hot key's publisher stays open: %v, want only %d", got, free.ID)
	}

	// A wait that ends: the claim waits on the key, the publisher commits, and the
	// claim takes the key's oldest event, which it had not seen when it began.
	claimer, pid := pgtest.Backend(t, pool)
	defer claimer.Release()
	claimed := make(chan []int64, 1)
	failed := make(chan error, 1)
	go func() {
		ids, err := claimEventsOn(ctx, claimer.Conn(), 0, 60_000)
		if err != nil {
			failed <- err
			return
		}
		claimed <- ids
	}()
	waitForLockWait(t, pool, pid)
	if err := open.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-claimed:
		if fmt.Sprint(got) != fmt.Sprint([]int64{older.ID}) {
			t.Fatalf("claim that waited for the hot key: %v, want its oldest event %d (not %d)", got, older.ID, newer.ID)
		}
	case err := <-failed:
		t.Fatal(err)
	}
}

// claimEvents runs the relay's claim, waiting up to waitMS for the lock of a keyed
// event published waitAfter seconds ago or more, and returns the ids claimed, sorted.
func claimEvents(t *testing.T, pool *pgxpool.Pool, waitAfter float64, waitMS int) []int64 {
	t.Helper()
	ids, err := claimEventsOn(t.Context(), pool, waitAfter, waitMS)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func claimEventsOn(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, waitAfter float64, waitMS int) ([]int64, error) {
	rows, err := q.Query(ctx, `SELECT id FROM jobc_claim_events(1, 30, 100, $1, $2) ORDER BY id`, waitAfter, waitMS)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// waitForLockWait waits until backend pid waits for an advisory lock, polling as often
// as a worker would; it fails printing what the backend was doing.
func waitForLockWait(t *testing.T, pool *pgxpool.Pool, pid int32) {
	t.Helper()
	poll := testConfig(nil).PollInterval
	var state string
	for range 200 {
		err := pool.QueryRow(t.Context(), `
			SELECT coalesce(a.wait_event_type, '') || '/' || coalesce(a.wait_event, '') || ' ' || coalesce(a.state, '')
			FROM pg_stat_activity a WHERE a.pid = $1`, pid).Scan(&state)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(state, "Lock/advisory") {
			return
		}
		time.Sleep(poll / 5)
	}
	t.Fatalf("backend %d never waited for the ordering key's advisory lock; last seen: %s", pid, state)
}

// TestEventDecode: a consumer decodes a version 1 event into version 2's JSON, as
// workers decode jobs, and an invalid or unknown version is an error.
func TestEventDecode(t *testing.T) {
	t.Parallel()
	et := orderPaid(t, 2)
	got, err := et.Decode(1, []byte(`{"order_id":"o-1","amount":7}`))
	if err != nil || !jsonEqual(string(got), `{"order_id":"o-1","total":7}`) {
		t.Errorf("Decode v1: %s, %v", got, err)
	}
	if _, err := et.Decode(1, []byte(`{"order_id":"o-1"}`)); err == nil || !strings.Contains(err.Error(), "amount") {
		t.Errorf("Decode of an invalid v1: %v, want an error naming amount", err)
	}
	if _, err := et.Decode(3, []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "unknown payload version 3") {
		t.Errorf("Decode of version 3: %v", err)
	}
}

// TestPublishKeysInOppositeOrders: two transactions that each publish two keys, in
// opposite orders and each holding its first while the other publishes, both commit:
// publishers never wait for each other, so no order of keys deadlocks. (With a lock
// each publisher took exclusively, the second publishes waited for each other until
// the server broke the deadlock by failing one.) Batches of the same keys in opposite
// orders, concurrently, all commit too.
func TestPublishKeysInOppositeOrders(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	et := orderPaid(t, 2)

	// Each transaction publishes its first key, then both their second, then commit.
	keys := [][]string{{"a", "b"}, {"b", "a"}}
	var published sync.WaitGroup
	published.Add(2)
	errs := make(chan error, 2)
	for i := range keys {
		go func() {
			errs <- pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
				for step, key := range keys[i] {
					if _, err := runtime.Publish(ctx, tx, et, orderPaidV2Payload{OrderID: key, Total: i}); err != nil {
						return fmt.Errorf("transaction %d, publish of key %s: %w", i, key, err)
					}
					if step == 0 {
						published.Done()
						published.Wait()
					}
				}
				return nil
			})
		}()
	}
	for range keys {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}

	const rounds = 20
	forward := []orderPaidV2Payload{{OrderID: "a", Total: 1}, {OrderID: "b", Total: 1}, {OrderID: "c", Total: 1}}
	backward := []orderPaidV2Payload{{OrderID: "c", Total: 2}, {OrderID: "b", Total: 2}, {OrderID: "a", Total: 2}}
	for _, batch := range [][]orderPaidV2Payload{forward, backward} {
		go func() {
			for range rounds {
				err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
					_, err := runtime.PublishMany(ctx, tx, et, batch)
					return err
				})
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n, want := countRows(t, pool, `SELECT count(*) FROM jobc_events`), 4+2*rounds*len(forward); n != want {
		t.Errorf("%d events, want %d", n, want)
	}
}

// TestEventValidateUnbuilt: an EventType written as a literal, not built by
// NewEventType, has no compiled schemas: Validate says so instead of panicking (a
// relay would otherwise stop on its first row).
func TestEventValidateUnbuilt(t *testing.T) {
	t.Parallel()
	et := &runtime.EventType{Name: "literal", Subject: "s", Relay: true, WriteVersion: 1,
		Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}}}
	if err := et.Validate(1, []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "not built with NewEventType") {
		t.Errorf("Validate: %v", err)
	}
}
