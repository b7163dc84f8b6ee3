package schema

import (
	"encoding/json"
	"testing"
)

// TestKeyNumber: a number in a key is written as the field's Go type writes it.
func TestKeyNumber(t *testing.T) {
	s, err := Compile([]byte(`{"type":"object","properties":{
		"f":{"type":"number"},"i":{"type":"integer"},"n":{"type":["integer","number"]},
		"r":{"$ref":"#/$defs/int"},"any":{}},"$defs":{"int":{"type":"integer"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ field, in, want string }{
		{"f", "-0", "0"}, {"f", "0.000", "0"}, {"f", "1e2", "100"}, {"f", "1.50", "1.5"}, {"f", "1E21", "1e+21"},
		{"f", "1e-7", "1e-7"}, {"f", "0.000001", "0.000001"}, {"f", "9007199254740993", "9007199254740992"},
		{"f", "-2.5E-10", "-2.5e-10"}, {"f", "1e400", "1e400"}, // out of range: Exact refuses it first
		{"i", "-0", "0"}, {"i", "1e2", "100"}, {"i", "15e-0", "15"}, {"i", "9223372036854775807", "9223372036854775807"},
		{"i", "1.5", "1.5"}, {"i", "1e100000", "1e100000"}, {"i", "100e-2", "100e-2"}, // Exact refuses these
		{"n", "1e2", "100"}, // number wins: the Go type is float64
		{"r", "2E1", "20"},
		{"any", "1e2", "1e2"}, {"missing", "-0", "-0"}, // untyped: as written
	} {
		if got := string(s.KeyNumber(c.field, json.Number(c.in))); got != c.want {
			t.Errorf("KeyNumber(%s, %s) = %s, want %s", c.field, c.in, got, c.want)
		}
	}
	var none *Schema
	if got := string(none.KeyNumber("f", "1e2")); got != "1e2" {
		t.Errorf("no schema: KeyNumber(f, 1e2) = %s, want it as written", got)
	}
}
