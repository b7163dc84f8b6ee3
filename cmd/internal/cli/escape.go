package cli

import (
	"fmt"
	"strings"
	"unicode"
)

// Esc makes s safe for one cell of a Table on a terminal: control characters (a
// newline would split the row, a tab shift the columns, an escape sequence repaint the
// screen) and invisible format characters (a right-to-left override reorders what
// follows) are written as Go escapes, \n, \t, \x1b, \u202e. Everything else,
// backslashes included, is left as it is: a cell stays readable, at the price that a
// literal `\n` and an escaped newline look alike. Every Table printer passes each
// string from the database through it; --json output needs no escaping.
func Esc(s string) string {
	if strings.IndexFunc(s, needsEscape) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !needsEscape(r) {
			b.WriteRune(r)
			continue
		}
		switch r {
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case unicode.ReplacementChar:
			b.WriteString(`\ufffd`) // also what invalid UTF-8 decodes to
		default:
			if r < 0x80 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		}
	}
	return b.String()
}

func needsEscape(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == unicode.ReplacementChar
}
