package cli

import "testing"

func TestEsc(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"send_email", "send_email"},
		{"", ""},
		{"a\nb", `a\nb`},
		{"a\tb\r", `a\tb\r`},
		{"\x1b[2Jred", `\x1b[2Jred`},
		{"del\x7f", `del\x7f`},
		{"c1\u0085", `c1\u0085`},
		{"abc\u202edcba", `abc\u202edcba`},
		{"bad\xffutf8", `bad\ufffdutf8`},
		{`back\slash é 日本`, `back\slash é 日本`},
	} {
		if got := Esc(c.in); got != c.want {
			t.Errorf("Esc(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
