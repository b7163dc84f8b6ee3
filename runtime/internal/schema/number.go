package schema

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
)

// number is a JSON number: an int64 when it is one, else an exact rational.
type number struct {
	text  string // as written, for messages (parseNumber sets it, readNumber does not)
	i     int64
	isInt bool // i holds the value
	r     *big.Rat
}

func parseNumber(n json.Number) (*number, error) {
	num, ok := readNumber(string(n))
	if !ok {
		return nil, fmt.Errorf("%q is not a number", string(n))
	}
	num.text = string(n)
	return &num, nil
}

// readNumber parses a number's text: a string from a decoded document, or the bytes of
// one that Check reads in place, for which an int64 then costs no allocation (only the
// big.Rat path copies the bytes into a string).
func readNumber[T string | []byte](text T) (number, bool) {
	if i, err := strconv.ParseInt(string(text), 10, 64); err == nil {
		return number{i: i, isInt: true}, true
	}
	r, ok := new(big.Rat).SetString(string(text))
	return number{r: r}, ok
}

func (n *number) rat() *big.Rat {
	if n.isInt {
		return new(big.Rat).SetInt64(n.i)
	}
	return n.r
}

func (n *number) sign() int {
	if n.isInt {
		switch {
		case n.i > 0:
			return 1
		case n.i < 0:
			return -1
		}
		return 0
	}
	return n.r.Sign()
}

// integral says whether n has no fraction (1.0 and 1e2 are integers in JSON Schema).
func (n *number) integral() bool { return n.isInt || n.r.IsInt() }

// cmp compares n and m: -1, 0 or +1.
func (n *number) cmp(m *number) int {
	if n.isInt && m.isInt {
		switch {
		case n.i < m.i:
			return -1
		case n.i > m.i:
			return 1
		}
		return 0
	}
	return n.rat().Cmp(m.rat())
}

// multipleOf says whether n is an integer multiple of m (m > 0).
func (n *number) multipleOf(m *number) bool {
	if n.isInt && m.isInt {
		return n.i%m.i == 0
	}
	return new(big.Rat).Quo(n.rat(), m.rat()).IsInt()
}
