package runtime_test

import (
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// TestGoQuoteAgreesWithStrconv: the SQL producers quote strings in their messages as
// Go does (jobc_go_quote, schema/library/1_messages.sql): each rune on either side of
// every border between the runes Go prints and those it escapes, from U+0080 on, comes
// out of PostgreSQL as strconv.Quote writes it (\u00a0, \U0001911e, or the rune
// itself). schema's TestGoQuoteKnowsWhatGoPrints checks the library's ranges against
// Go's tables; this checks that PostgreSQL's regular expressions read them so.
func TestGoQuoteAgreesWithStrconv(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	var runes []int32
	add := func(r rune) {
		if r >= 0x80 && r <= utf8.MaxRune && (r < 0xD800 || r > 0xDFFF) {
			runes = append(runes, r)
		}
	}
	for r := rune(0x81); r <= utf8.MaxRune; r++ {
		if r >= 0xD800 && r <= 0xE000 {
			continue
		}
		if strconv.IsPrint(r) != strconv.IsPrint(r-1) {
			add(r - 1)
			add(r)
		}
	}
	add(0x80)
	add(utf8.MaxRune)
	rows, err := pool.Query(t.Context(), `SELECT jobc_go_quote(chr(r)) FROM unnest($1::int[]) WITH ORDINALITY AS u(r, n) ORDER BY n`, runes)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i, r := range runes {
		q := strconv.Quote(string(r))
		if want := "'" + q[1:len(q)-1] + "'"; got[i] != want {
			if bad++; bad <= 10 {
				t.Errorf("U+%04X (printable in Go: %v): jobc_go_quote gives %s, Go %s", r, strconv.IsPrint(r), got[i], want)
			}
		}
	}
	if bad > 10 {
		t.Errorf("... %d runes of %d in all", bad, len(runes))
	}
	if len(runes) < 1000 {
		t.Errorf("only %d runes checked: Go's tables have more borders than that", len(runes))
	}
}
