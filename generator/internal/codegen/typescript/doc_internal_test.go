package typescript

import (
	"fmt"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/jobc-dev/jobc/internal/dialect"
)

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

// TestDocCommentsNameEveryCheck: each assertion the dialect says TypeScript's types
// cannot express is named in the doc comment of a property that has it, and so is
// every format, with the table's description when it has one.
func TestDocCommentsNameEveryCheck(t *testing.T) {
	value := map[dialect.Value]string{dialect.Boolean: "true", dialect.Count: "2", dialect.Number: "2", dialect.Positive: "2", dialect.String: "'^a'"}
	if len(checkKeywords) == 0 {
		t.Fatal("no keywords to describe")
	}
	for _, name := range checkKeywords {
		k, _ := dialect.Lookup(name)
		src := fmt.Sprintf("{type: %s, %s: %s}", k.Applies, name, value[k.Value])
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(src), &n); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(ownChecks(n.Content[0]), ", "); !strings.Contains(got, name+" ") {
			t.Errorf("%s: the doc comment says %q", src, got)
		}
	}
	for _, f := range dialect.Formats(dialect.SQL) {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte("{type: string, format: "+f+"}"), &n); err != nil {
			t.Fatal(err)
		}
		got := strings.Join(ownChecks(n.Content[0]), ", ")
		row, _ := dialect.LookupFormat(f)
		if !strings.Contains(got, "format "+f) || !strings.Contains(got, row.Describe) {
			t.Errorf("format %s: the doc comment says %q", f, got)
		}
	}
}
