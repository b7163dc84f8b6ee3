package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/runtime"
)

// exactSchema types an integer, a number, strings and an open object.
const exactSchema = `{"type":"object","required":["key"],"properties":{
	"key":{"type":"string"},"n":{"type":"integer"},"f":{"type":"number"},
	"tags":{"type":"array","items":{"type":"string"}},"extra":{"type":"object"}}}`

type exactPayload struct {
	Key   string         `json:"key"`
	N     *int64         `json:"n,omitempty"`
	F     *float64       `json:"f,omitempty"`
	Tags  []string       `json:"tags,omitempty"`
	Extra map[string]any `json:"extra,omitempty"`
}

func exactType(t testing.TB, unique bool) *runtime.JobType {
	t.Helper()
	jt := runtime.JobType{Kind: "exact", Queue: "exact", Priority: 5, MaxAttempts: 3,
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: exactSchema}}}
	if unique {
		jt.Unique = &runtime.Unique{Fields: []string{"key"}}
	}
	out, err := runtime.NewJobType(jt)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// problems returns err's problems as "field: message", or fails.
func problems(t *testing.T, err error) []string {
	t.Helper()
	var pe *runtime.PayloadError
	if !errors.As(err, &pe) {
		t.Fatalf("got %v, want a *runtime.PayloadError", err)
	}
	var out []string
	for _, p := range pe.Problems {
		out = append(out, p.Field+": "+p.Message)
	}
	return out
}

// TestEnqueueRefusesInexactPayloads: what encoding/json would alter or refuse in
// silence, or what the worker could not decode, is refused with the field named, and
// nothing is inserted. Issue 20, item 6: two keys that differ only in invalid UTF-8
// used to become one key, and the second job was reported a duplicate and lost.
func TestEnqueueRefusesInexactPayloads(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := exactType(t, true)
	deep := any("leaf")
	for range 70 {
		deep = []any{deep}
	}
	for _, tc := range []struct {
		name    string
		payload any
		opts    []runtime.EnqueueOption
		want    []string
		meta    bool
	}{
		{"invalid UTF-8 key", exactPayload{Key: "inv\xff1"}, nil, []string{"/key: invalid UTF-8, which encoding/json would replace with U+FFFD"}, false},
		{"invalid UTF-8 in a list", exactPayload{Key: "k", Tags: []string{"ok", "\xc3"}}, nil, []string{"/tags/1: invalid UTF-8, which encoding/json would replace with U+FFFD"}, false},
		{"invalid UTF-8 map key", exactPayload{Key: "k", Extra: map[string]any{"a\xffb": 1}}, nil, []string{"/extra/a\uFFFDb: invalid UTF-8, which encoding/json would replace with U+FFFD (in the key)"}, false},
		{"NUL", exactPayload{Key: "a\x00b"}, nil, []string{`/key: NUL character (\u0000), which PostgreSQL cannot store`}, false},
		{"NaN", exactPayload{Key: "k", F: ptr(math.NaN())}, nil, []string{"/f: NaN or infinity, which JSON cannot hold"}, false},
		{"infinity in an open object", exactPayload{Key: "k", Extra: map[string]any{"x": []any{1, math.Inf(-1)}}}, nil, []string{"/extra/x/1: NaN or infinity, which JSON cannot hold"}, false},
		{"too deep", exactPayload{Key: "k", Extra: map[string]any{"d": deep}}, nil, []string{"/extra/d/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0: nested deeper than 64 levels"}, false},
		{"raw integer with a fraction", json.RawMessage(`{"key":"k","n":1.0}`), nil, []string{"/n: integer written with a fractional part, which Go's int64 does not decode"}, false},
		{"raw integer past int64", json.RawMessage(`{"key":"k","n":9223372036854775808}`), nil, []string{"/n: integer out of int64 range"}, false},
		{"raw float overflow", json.RawMessage(`{"key":"k","f":1e400}`), nil, []string{"/f: number out of float64 range"}, false},
		{"raw float underflow", json.RawMessage(`{"key":"k","f":1e-400}`), nil, []string{"/f: number too small for float64, which would round it to 0"}, false},
		{"metadata invalid UTF-8", exactPayload{Key: "k"}, []runtime.EnqueueOption{runtime.WithMetadata(map[string]any{"who": "\xff"})}, []string{"/who: invalid UTF-8, which encoding/json would replace with U+FFFD"}, true},
		{"metadata NaN", exactPayload{Key: "k"}, []runtime.EnqueueOption{runtime.WithMetadata(map[string]any{"score": math.NaN()})}, []string{"/score: NaN or infinity, which JSON cannot hold"}, true},
	} {
		_, err := runtime.Enqueue(ctx, pool, jt, tc.payload, tc.opts...)
		if got := problems(t, err); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
		var pe *runtime.PayloadError
		if errors.As(err, &pe) && pe.Metadata != tc.meta {
			t.Errorf("%s: Metadata %v, want %v (%v)", tc.name, pe.Metadata, tc.meta, err)
		}
		// EnqueueMany and PublishMany share the encoding; EnqueueMany names the index.
		_, err = runtime.EnqueueMany(ctx, pool, jt, []any{exactPayload{Key: "fine"}, tc.payload}, tc.opts...)
		if err == nil || !errors.As(err, &pe) {
			t.Errorf("%s: EnqueueMany: %v, want a *runtime.PayloadError", tc.name, err)
		}
	}
	if n := countRows(t, pool, `SELECT count(*) FROM jobc_jobs`); n != 0 {
		t.Errorf("%d jobs inserted, want none", n)
	}
	// Distinct keys stay distinct: a valid U+FFFD is a key of its own.
	a, err := runtime.Enqueue(ctx, pool, jt, exactPayload{Key: "inv\uFFFD1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runtime.Enqueue(ctx, pool, jt, exactPayload{Key: "inv\xff1"}); err == nil {
		t.Errorf("a key with invalid UTF-8 was taken for job %d's", a.ID)
	}
}

// TestWorkerRefusesInexactStoredPayloads: a row written around the producers (a role
// with INSERT, an older release) whose numbers the payload struct cannot hold exactly
// fails as an invalid payload naming the field, instead of decoding 1e-400 as 0 or
// failing with encoding/json's message.
func TestWorkerRefusesInexactStoredPayloads(t *testing.T) {
	t.Parallel()
	jt := exactType(t, false)
	for stored, want := range map[string]string{
		`{"key":"k","n":1.0}`:    "/n: integer written with a fractional part, which Go's int64 does not decode",
		`{"key":"k","f":1e-400}`: "/f: number too small for float64, which would round it to 0",
		`{"key":"k","f":1e400}`:  "/f: number out of float64 range",
	} {
		_, err := runtime.DecodeForTest[exactPayload](jt, 1, []byte(stored))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", stored, err, want)
		}
	}
}

// TestOpenObjectNumbersStayExact: a number in an open object reaches the handler as a
// json.Number with the text PostgreSQL stored, so an id past 2^53 is not rounded to
// another, as float64 would.
func TestOpenObjectNumbersStayExact(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := exactType(t, false)
	in := exactPayload{Key: "k", Extra: map[string]any{
		"id": json.Number("9007199254740993"), "big": json.Number("123456789012345678901234567890"),
		"list": []any{json.Number("0.1"), "s"}, "tiny": json.Number("1e-400"),
	}}
	e, err := runtime.Enqueue(ctx, pool, jt, in)
	if err != nil {
		t.Fatal(err)
	}
	info, err := runtime.GetJob(ctx, pool, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := runtime.DecodeForTest[exactPayload](jt, 1, info.Payload)
	if err != nil {
		t.Fatal(err)
	}
	// PostgreSQL's numeric writes 1e-400 without the exponent; the value is the same.
	in.Extra["tiny"] = json.Number("0." + strings.Repeat("0", 399) + "1")
	if !reflect.DeepEqual(got.Extra, in.Extra) {
		t.Errorf("handler got %#v, want %#v", got.Extra, in.Extra)
	}
}

// TestLongUniqueKey: a unique key past what a btree entry holds is stored hashed, so
// the enqueue works and still deduplicates; a short key is stored as it is; a key
// that looks like a hash is hashed too, so it cannot stand for another.
func TestLongUniqueKey(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt := exactType(t, true)
	// 4000 bytes that do not compress (a compressible key fits an index entry longer),
	// past the btree's 2.7 kB.
	r := rand.New(rand.NewPCG(1, 2))
	text := make([]byte, 4000)
	for i := range text {
		text[i] = byte('!' + r.IntN(90))
	}
	long := string(text)
	a, err := runtime.Enqueue(ctx, pool, jt, exactPayload{Key: long})
	if err != nil {
		t.Fatal(err)
	}
	b, err := runtime.Enqueue(ctx, pool, jt, exactPayload{Key: long})
	if err != nil || !b.Duplicate || b.ID != a.ID {
		t.Fatalf("second enqueue of the long key: %+v, %v; want a duplicate of job %d", b, err, a.ID)
	}
	other, err := runtime.Enqueue(ctx, pool, jt, exactPayload{Key: long + "x"})
	if err != nil || other.Duplicate {
		t.Fatalf("a different long key: %+v, %v", other, err)
	}
	var key string
	if err := pool.QueryRow(ctx, `SELECT unique_key FROM jobc_jobs WHERE id = $1`, a.ID).Scan(&key); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(key, "sha256:") || len(key) != len("sha256:")+64 {
		t.Errorf("long key stored as %q, want sha256: and 64 hex digits", key)
	}
	// The hash of a key, given as a dedup key, is not that key.
	forged, err := runtime.Enqueue(ctx, pool, jt, exactPayload{Key: "y"}, runtime.WithDedupKey(key))
	if err != nil || forged.Duplicate {
		t.Errorf("dedup key %q: %+v, %v; want a job of its own", key, forged, err)
	}
	short, err := runtime.Enqueue(ctx, pool, jt, exactPayload{Key: "short"})
	if err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT unique_key FROM jobc_jobs WHERE id = $1`, short.ID).Scan(&key); err != nil {
		t.Fatal(err)
	}
	if key != `["short"]` {
		t.Errorf("short key stored as %q", key)
	}
}

func ptr[T any](v T) *T { return &v }

// TestPublishRefusesInexactPayloads: Publish refuses, by field, what Enqueue refuses,
// in the event's payload and its metadata, and writes nothing.
func TestPublishRefusesInexactPayloads(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	ship, _ := shopTypes(t)
	et := orderPaid(t, 1, runtime.Subscriber{Job: ship, Version: 1})
	for _, tc := range []struct {
		payload any
		opts    []runtime.PublishOption
		want    string
	}{
		{map[string]any{"order_id": "o-\xff", "amount": 1}, nil,
			"/order_id: invalid UTF-8, which encoding/json would replace with U+FFFD"},
		{map[string]any{"order_id": "o-1", "amount": 1}, []runtime.PublishOption{runtime.WithEventMetadata(map[string]any{"trace": []any{"a\x00"}})},
			`/trace/0: NUL character (\u0000), which PostgreSQL cannot store`},
		{json.RawMessage(`{"order_id":"o-1","amount":1.0}`), nil,
			"/amount: integer written with a fractional part, which Go's int64 does not decode"},
	} {
		_, err := runtime.Publish(ctx, pool, et, tc.payload, tc.opts...)
		if got := problems(t, err); !slices.Equal(got, []string{tc.want}) {
			t.Errorf("%v: got %q, want %q", tc.payload, got, tc.want)
		}
	}
	if n := countRows(t, pool, `SELECT (SELECT count(*) FROM jobc_jobs) + (SELECT count(*) FROM jobc_events)`); n != 0 {
		t.Errorf("%d rows written, want none", n)
	}
}
