package schema

import (
	"encoding/json"
	"math/big"
	"strconv"
)

// KeyNumber is the text a unique or flow key holds for the number n of the top-level
// field of a payload: the number as the Go type generated for the field writes it,
// whatever way the payload wrote it, so that a payload given as JSON keys as the
// typed payload does and as the SQL producers key it (jobc_go_json, schema/library).
// A number field (float64) is written as encoding/json writes a float64, with 0 for
// -0, which PostgreSQL's numeric cannot hold; an integer field (int64) as its decimal
// digits (1e2 is 100); an untyped field as it was written. s may be nil (no schema).
func (s *Schema) KeyNumber(field string, n json.Number) json.RawMessage {
	var t typeSet
	if s != nil {
		t = typesOf(member(s.root, []byte(field)))
	}
	switch {
	case t&tNumber != 0:
		f, err := n.Float64()
		if err != nil {
			break // out of float64's range: Exact refuses it before a key is made
		}
		if f == 0 {
			return json.RawMessage("0")
		}
		if b, err := json.Marshal(f); err == nil {
			return b
		}
	case t&tInteger != 0:
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return strconv.AppendInt(nil, i, 10) // the common case, and -0
		}
		// Exact lets through only integers that fit int64 and keep no fraction once
		// stored, so anything else is left as it is rather than expanded (1e100000
		// would be 100,001 digits).
		if parts, ok := splitNumber([]byte(n)); !ok || parts.magnitude > 19 || parts.scale > 0 {
			break
		}
		if r, ok := new(big.Rat).SetString(string(n)); ok && r.IsInt() {
			return json.RawMessage(r.Num().String())
		}
	}
	return json.RawMessage(n)
}
