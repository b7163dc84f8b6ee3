package compat

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"
)

// FuzzCheck asserts that Check never panics, returns sorted findings, and
// finds every schema compatible with itself.
func FuzzCheck(f *testing.F) {
	for _, tc := range cases {
		f.Add(tc.old, tc.new)
	}
	f.Add(`{"$ref":"#"}`, `{"$ref":"#/a"}`)
	f.Add(`{"anyOf":[{"$ref":"#"}]}`, `{"oneOf":[{"$ref":"#"},{"allOf":[{"$ref":"#"}]}]}`)
	f.Add(`{"properties":{"a":{"$ref":"#/properties/a"}}}`, `{"properties":{"a":{"$ref":"#/properties"}}}`)
	f.Add(`[1,2]`, `"x"`)
	f.Fuzz(func(t *testing.T, oldJSON, newJSON string) {
		// Guard against blow-ups: a real schema pair takes milliseconds.
		t0 := time.Now()
		defer func() {
			if d := time.Since(t0); d > 10*time.Second {
				t.Fatalf("slow iteration: %v", d)
			}
		}()
		for _, useNumber := range []bool{false, true} {
			old, ok1 := fuzzDecode(oldJSON, useNumber)
			nw, ok2 := fuzzDecode(newJSON, useNumber)
			if ok1 && ok2 {
				got := Check(old, nw)
				if !sort.SliceIsSorted(got, func(i, j int) bool {
					if got[i].Path != got[j].Path {
						return got[i].Path < got[j].Path
					}
					return got[i].Rule < got[j].Rule
				}) {
					t.Fatalf("findings not sorted: %s", dump(got))
				}
				for _, x := range got {
					if x.Rule == "" || x.Message == "" {
						t.Fatalf("incomplete finding %+v", x)
					}
				}
			}
			for _, s := range []string{oldJSON, newJSON} {
				a, ok := fuzzDecode(s, useNumber)
				if !ok {
					continue
				}
				b, _ := fuzzDecode(s, useNumber)
				if self := Check(a, b); len(self) != 0 {
					t.Fatalf("Check(s, s) not empty for %s:\n%s", s, dump(self))
				}
			}
		}
	})
}

func fuzzDecode(s string, useNumber bool) (any, bool) {
	d := json.NewDecoder(strings.NewReader(s))
	if useNumber {
		d.UseNumber()
	}
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, false
	}
	if d.More() {
		return nil, false
	}
	return v, true
}
