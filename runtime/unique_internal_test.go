package runtime

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The unique key read from the decoded payload must be byte for byte the key earlier
// releases computed by parsing the encoded payload again: old and new producers of one
// rolling deploy must agree on which jobs are duplicates.
func TestUniqueKeyFromDocumentMatchesKeyFromBytes(t *testing.T) {
	fromBytes := func(raw []byte, fields []string) string {
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		values := make([]json.RawMessage, len(fields))
		for i, f := range fields {
			v, ok := doc[f]
			if !ok {
				v = json.RawMessage("null")
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, v); err != nil {
				t.Fatal(err)
			}
			values[i] = compact.Bytes()
		}
		key, err := json.Marshal(values)
		if err != nil {
			t.Fatal(err)
		}
		return string(key)
	}
	type payload struct {
		S   string         `json:"s"`
		N   float64        `json:"n"`
		I   int64          `json:"i"`
		B   bool           `json:"b"`
		P   *string        `json:"p"`
		Obj map[string]any `json:"obj"`
		Arr []any          `json:"arr"`
		Str struct {
			Z int `json:"z"`
			A int `json:"a"`
		} `json:"str"`
	}
	var p payload
	p.S = `<a href="x">&</a> é 𝄞 "q" \ ` + "\u2028\t"
	p.N = 1e21
	p.I = -9007199254740993
	p.B = true
	p.Obj = map[string]any{"b": []any{1.5, "<"}, "a": nil}
	p.Arr = []any{map[string]any{"y": 1, "x": 2}}
	p.Str.Z, p.Str.A = 1, 2
	fields := []string{"s", "n", "i", "b", "p", "obj", "arr", "str", "absent"}
	jt, err := NewJobType(JobType{
		Kind: "k", Queue: "q", MaxAttempts: 1, WriteVersion: 1,
		Unique:   &Unique{Fields: fields},
		Versions: []Version{{Number: 1, Schema: `{"type":"object"}`}},
	})
	if err != nil {
		t.Fatal(err)
	}
	raw, doc, err := jt.marshalPayload(1, p, true)
	if err != nil {
		t.Fatal(err)
	}
	for name, d := range map[string]any{"decoded": doc, "not at hand": nil} {
		got, _, err := jt.uniqueKey(raw, d, enqueueOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if want := fromBytes(raw, fields); got != want {
			t.Errorf("%s: key\n%s\nwant\n%s", name, got, want)
		}
	}
}
