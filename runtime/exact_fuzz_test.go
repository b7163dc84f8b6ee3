package runtime_test

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/runtime"
)

// FuzzPayloadRoundTrip: what Enqueue's encoding accepts, a worker decodes to an equal
// value (`go test -fuzz FuzzPayloadRoundTrip ./runtime`). The open object comes from
// arbitrary JSON, so its numbers and strings are held to json.Number and the text, and
// a refusal must be a *PayloadError, never another error or an altered value.
func FuzzPayloadRoundTrip(f *testing.F) {
	jt := exactType(f, false)
	f.Add("k", int64(1), 0.5, `{"a":1}`)
	f.Add("inv\xff", int64(math.MaxInt64), math.MaxFloat64, `{"id":9007199254740993}`)
	f.Add("a\x00b", int64(math.MinInt64), 5e-324, `{"x":1e400,"y":1e-400,"z":-0}`)
	f.Add("é\uFFFD𝄞", int64(-1), math.Copysign(0, -1), `{"u":"\ud83d\ude00","v":"\ufffd","w":[[[[]]]]}`)
	f.Add("", int64(0), 1e21, `{"s":"\u0000"}`)
	f.Add("k", int64(7), 1e-7, `{"n":123456789012345678901234567890,"f":1.50}`)
	f.Fuzz(func(t *testing.T, key string, n int64, x float64, extra string) {
		in := exactPayload{Key: key, N: &n, F: &x, Tags: []string{key}}
		if extra != "" {
			var m map[string]any
			dec := json.NewDecoder(strings.NewReader(extra))
			dec.UseNumber()
			if dec.Decode(&m) != nil {
				return
			}
			if len(m) > 0 { // omitempty leaves an empty one out
				in.Extra = m
			}
		}
		raw, err := runtime.MarshalPayloadForTest(jt, in)
		if err != nil {
			var pe *runtime.PayloadError
			if !errors.As(err, &pe) {
				t.Fatalf("%+v: %v, want a *runtime.PayloadError", in, err)
			}
			return
		}
		out, err := runtime.DecodeForTest[exactPayload](jt, 1, raw)
		if err != nil {
			t.Fatalf("%+v encoded as %s, which the worker refuses: %v", in, raw, err)
		}
		// The open object's members compare by value: the encoding may respell a
		// json.Number (it does not) or a string's escapes.
		if !reflect.DeepEqual(normal(t, out.Extra), normal(t, in.Extra)) {
			t.Fatalf("open object %#v came back %#v", in.Extra, out.Extra)
		}
		out.Extra, in.Extra = nil, nil
		if math.Float64bits(*out.F) != math.Float64bits(*in.F) && !(*out.F == 0 && *in.F == 0) {
			t.Fatalf("float %v came back %v", *in.F, *out.F)
		}
		out.F, in.F = nil, nil
		if !reflect.DeepEqual(out, in) {
			t.Fatalf("%+v came back %+v", in, out)
		}
	})
}

// normal re-encodes v and decodes it with json.Number, so that equal JSON compares equal.
func normal(t *testing.T, v map[string]any) any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}
