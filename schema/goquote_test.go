package schema

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestGoQuoteKnowsWhatGoPrints: jobc_go_quote (library/1_messages.sql) escapes the
// runes from U+0080 on that Go does not print, so that the SQL producers' messages are
// Go's to the byte; its bracket expression must hold exactly the runes strconv.IsPrint
// rejects, in this Go release. (Its absence made FuzzSQLAgreesWithGo fail now and
// then: Go wrote '\U0001911e' where SQL wrote the rune itself.) When a Go release
// changes its Unicode tables, this prints the expression to paste.
func TestGoQuoteKnowsWhatGoPrints(t *testing.T) {
	b, err := os.ReadFile("library/1_messages.sql")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	start := strings.Index(src, "np  CONSTANT text := '[' ||\n")
	end := strings.Index(src[max(start, 0):], "']';")
	if start < 0 || end < 0 {
		t.Fatal("library/1_messages.sql: jobc_go_quote's np constant not found")
	}
	var class strings.Builder
	for _, m := range regexp.MustCompile(`E'([^']*)'`).FindAllStringSubmatch(src[start:start+end], -1) {
		class.WriteString(m[1])
	}
	got := class.String()
	if want := unprintable(); got != want {
		// Where they part, for the message; and the expression to paste.
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Errorf("jobc_go_quote's runes differ from strconv.IsPrint's from byte %d (%.40q against %.40q); paste:\n%s",
			i, got[i:], want[i:], sqlLines(want))
	}
}

// unprintable is the bracket expression's body of the runes from U+0080 on that
// strconv.IsPrint rejects, as the text of the E-string literals: ranges of \\uXXXX and \\UXXXXXXXX.
func unprintable() string {
	var b strings.Builder
	esc := func(r rune) string {
		if r < 0x10000 {
			return fmt.Sprintf(`\\u%04x`, r)
		}
		return fmt.Sprintf(`\\U%08x`, r)
	}
	from := rune(-1)
	flush := func(to rune) {
		if from < 0 {
			return
		}
		b.WriteString(esc(from))
		if to != from {
			b.WriteString("-" + esc(to))
		}
		from = -1
	}
	for r := rune(0x80); r <= utf8.MaxRune+1; r++ {
		printable := r > utf8.MaxRune || (r >= 0xD800 && r <= 0xDFFF) || strconv.IsPrint(r)
		switch {
		case !printable && from < 0:
			from = r
		case printable && from >= 0:
			flush(r - 1)
		}
	}
	return b.String()
}

// sqlLines writes class as the np constant's lines.
func sqlLines(class string) string {
	toks := regexp.MustCompile(`\\\\[uU][0-9a-f]+(?:-\\\\[uU][0-9a-f]+)?`).FindAllString(class, -1)
	var out, line strings.Builder
	out.WriteString("    np  CONSTANT text := '[' ||\n")
	for _, tok := range toks {
		if line.Len()+len(tok) > 76 {
			fmt.Fprintf(&out, "        E'%s' ||\n", line.String())
			line.Reset()
		}
		line.WriteString(tok)
	}
	fmt.Fprintf(&out, "        E'%s' ||\n        ']';", line.String())
	return out.String()
}
