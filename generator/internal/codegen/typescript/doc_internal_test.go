package typescript

import "testing"

// TestJSDoc: a doc comment is one line when it fits and wrapped otherwise, keeps
// paragraphs and tags apart, and cannot be ended early by a description holding "*/".
func TestJSDoc(t *testing.T) {
	cases := []struct {
		name   string
		indent string
		paras  []string
		want   string
	}{
		{"one line", "  ", []string{"The language of the receipt."}, "  /** The language of the receipt. */\n"},
		{"nothing", "", []string{"", " "}, ""},
		{"comment end", "", []string{"Matches a*/b."}, "/** Matches a*\\/b. */\n"},
		{"paragraphs and tags", "", []string{"First.\n\nSecond.", "Third.", "@default 1"},
			"/**\n * First.\n *\n * Second.\n *\n * Third.\n * @default 1\n */\n"},
		{"wrapped", "  ", []string{"Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore."},
			"  /**\n   * Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut\n   * labore.\n   */\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := &writer{}
			w.jsdoc(c.indent, c.paras...)
			if got := w.String(); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// TestPropertyName: names that are not identifiers are quoted as JSON strings, which
// TypeScript reads the same way.
func TestPropertyName(t *testing.T) {
	for in, want := range map[string]string{
		"order_id": "order_id", "$ref_count": "$ref_count", "class": "class",
		"x-source": `"x-source"`, "2fa": `"2fa"`, `say "hi"`: `"say \"hi\""`, "": `""`,
	} {
		if got := propertyName(in); got != want {
			t.Errorf("propertyName(%q) = %s, want %s", in, got, want)
		}
	}
}
